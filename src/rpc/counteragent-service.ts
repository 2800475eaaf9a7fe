/** CounteragentService handlers: decode → domain → encode. */
import { create, isFieldSet } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import {
  AddCounteragentToGroupResponseSchema,
  CounteragentService,
  DeleteCounteragentGroupResponseSchema,
} from "../../gen/docflow/api/v1/counteragents_pb";
import {
  type CounteragentGroup,
  CounteragentGroupSchema,
  CounteragentGroupsListSchema,
  CounteragentGroupToUpdateSchema,
  type DepartmentsInGroup,
  DepartmentsInGroupSchema,
} from "../../gen/docflow/legacy/counteragent_groups_pb";
import { CounteragentFromGroupResponseSchema } from "../../gen/docflow/legacy/counteragents_pb";
import {
  addCounteragentToGroup,
  createCounteragentGroup,
  type DepartmentList,
  deleteCounteragentGroup,
  type GroupView,
  getCounteragentGroup,
  getCounteragentGroups,
  updateCounteragentGroup,
} from "../domain/counteragent-groups";
import { getCounteragentsFromGroup } from "../domain/counteragents";
import { callerOf, depsOf } from "./context";
import { ETAG, IF_MATCH, parseIfMatch } from "./preconditions";

export const counteragentService: ServiceImpl<typeof CounteragentService> = {
  async getCounteragentsFromGroup(req, ctx) {
    const page = await getCounteragentsFromGroup(depsOf(ctx), callerOf(ctx), req);
    return create(CounteragentFromGroupResponseSchema, {
      CounteragentBoxId: page.counteragentBoxIds,
      TotalCount: page.totalCount,
      ...(page.afterIndexKey === undefined ? {} : { AfterIndexKey: page.afterIndexKey }),
      ...nextPage(page.nextPageToken),
    });
  },
  async createCounteragentGroup(req, ctx) {
    const group = await createCounteragentGroup(depsOf(ctx), callerOf(ctx), {
      boxId: req.boxId,
      requestId: req.requestId,
      group: req.group && {
        name: req.group.Name,
        departments: departmentList(req.group.Departments),
      },
    });
    return answerGroup(ctx, group);
  },
  async updateCounteragentGroup(req, ctx) {
    const { changes } = req;
    const patch = changes?.GroupDepartments;
    const group = await updateCounteragentGroup(depsOf(ctx), callerOf(ctx), {
      boxId: req.boxId,
      counteragentGroupId: req.counteragentGroupId,
      ifMatch: parseIfMatch(ctx.requestHeader.get(IF_MATCH)),
      updateMask: req.updateMask?.paths,
      changes: changes && {
        // proto2 optional: an absent Name keeps the name, an empty one is a bad name.
        name: isFieldSet(changes, CounteragentGroupToUpdateSchema.field.Name)
          ? changes.Name
          : undefined,
        groupDepartments: patch && {
          anyDepartment: patch.AnyDepartment,
          departments: departmentList(patch.Departments),
        },
      },
    });
    return answerGroup(ctx, group);
  },
  async deleteCounteragentGroup(req, ctx) {
    await deleteCounteragentGroup(depsOf(ctx), callerOf(ctx), {
      boxId: req.boxId,
      counteragentGroupId: req.counteragentGroupId,
      ifMatch: parseIfMatch(ctx.requestHeader.get(IF_MATCH)),
    });
    return create(DeleteCounteragentGroupResponseSchema);
  },
  async getCounteragentGroup(req, ctx) {
    return answerGroup(ctx, await getCounteragentGroup(depsOf(ctx), callerOf(ctx), req));
  },
  async getCounteragentGroups(req, ctx) {
    const page = await getCounteragentGroups(depsOf(ctx), callerOf(ctx), req);
    return create(CounteragentGroupsListSchema, {
      Groups: page.groups.map(toCounteragentGroup),
      TotalCount: page.totalCount,
      ...nextPage(page.nextPageToken),
    });
  },
  async addCounteragentToGroup(req, ctx) {
    await addCounteragentToGroup(depsOf(ctx), callerOf(ctx), req);
    return create(AddCounteragentToGroupResponseSchema);
  },
};

export { CounteragentService };

/**
 * AIP-158's next_page_token, left out at the end of a listing: what proto3 makes of an
 * empty string (Google's APIs send none), and the legacy messages' bytes unchanged there.
 */
function nextPage(token: string): { nextPageToken?: string } {
  return token === "" ? {} : { nextPageToken: token };
}

/** One group as the answer, its entity tag in the `etag` response header (metadata). */
function answerGroup(ctx: HandlerContext, group: GroupView): CounteragentGroup {
  ctx.responseHeader.set(ETAG, group.etag);
  return toCounteragentGroup(group);
}

function departmentList(departments: DepartmentsInGroup | undefined): DepartmentList | undefined {
  return departments && { departmentIds: departments.DepartmentIds };
}

/** An any-department group has no Departments at all on the wire, never an empty one. */
function toCounteragentGroup(group: GroupView): CounteragentGroup {
  return create(CounteragentGroupSchema, {
    CounteragentGroupId: group.counteragentGroupId,
    Name: group.name,
    ...(group.departmentIds === undefined
      ? {}
      : {
          Departments: create(DepartmentsInGroupSchema, {
            DepartmentIds: [...group.departmentIds],
          }),
        }),
  });
}
