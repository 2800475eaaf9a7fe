/**
 * The counteragent-group fixture (docs/api.md §6.4): a box with departments, groups
 * created in a known order, members of every status, an empty box, another
 * box, an ended box and a box of racers; the family's calls over any tier.
 */
import { create, isFieldSet } from "@bufbuild/protobuf";
import { expect } from "vitest";
import { CounteragentService } from "../../gen/docflow/api/v1/counteragents_pb";
import {
  type CounteragentGroup,
  CounteragentGroupDepartmentPatchSchema,
  CounteragentGroupSchema,
  CounteragentGroupToCreateSchema,
  CounteragentGroupToUpdateSchema,
  DepartmentsInGroupSchema,
} from "../../gen/docflow/legacy/counteragent_groups_pb";
import { HEAD, KEY } from "./fixture";
import type { Served } from "./harness";
import { call, expectOk, type Protocol } from "./protocols";

export const DEFAULT = HEAD;
export const BOX = "b6000000-0000-4000-8000-000000000001";
export const EMPTY_BOX = "b6000000-0000-4000-8000-000000000002";
export const OTHER_BOX = "b6000000-0000-4000-8000-000000000003";
export const ENDED_BOX = "b6000000-0000-4000-8000-000000000004";
export const RACE_BOX = "b6000000-0000-4000-8000-000000000005";
export const SALES = "d-sales";
export const NORTH = "d-north";
export const ACCOUNTING = "d-accounting";
export const PARTNERS = "g-partners";
export const SUPPLIERS = "g-suppliers";
/** Sorts first by id, but was created last: creation time comes first. */
export const ARCHIVE = "g-archive";
export const ELSEWHERE = "g-elsewhere";
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

export const USERS = {
  admin: { isAdministrator: true, canManageCounteragents: true },
  adminOnly: { isAdministrator: true, canManageCounteragents: false },
  managerOnly: { isAdministrator: false, canManageCounteragents: true },
  outsider: { isAdministrator: true, canManageCounteragents: true },
} as const;
export type User = keyof typeof USERS;
export const auth = (user: User) =>
  `ServiceAuth svcauth_api_client_id=${KEY}, svcauth_token=${user}-token`;

export const PARTNER_IDS = ["p-01", "p-02", "p-03", "p-04", "p-05"];
export const DEFAULT_IDS = ["d-01", "d-02", "d-03", "d-04", "d-05", "d-06"];
export const RACERS = Array.from({ length: 40 }, (_, i) => `r-${String(i).padStart(2, "0")}`);

export function fixture() {
  const employee = (user: User) => ({ userId: `u-${user}`, ...USERS[user] });
  const joined = (month: number, day: number) =>
    `2026-${String(month).padStart(2, "0")}-${String(day).padStart(2, "0")}T00:00:00Z`;
  return {
    apiClients: [{ apiKey: KEY }],
    users: (Object.keys(USERS) as User[]).map((u) => ({
      userId: `u-${u}`,
      tokens: [{ token: `${u}-token` }],
    })),
    boxes: [
      {
        boxId: BOX,
        departments: [
          { departmentId: SALES },
          { departmentId: NORTH, parentDepartmentId: SALES },
          { departmentId: ACCOUNTING },
        ],
        employees: (["admin", "adminOnly", "managerOnly"] as User[]).map(employee),
        counteragentGroups: [
          { counteragentGroupId: PARTNERS, name: "Partners", createdAt: joined(1, 1) },
          {
            counteragentGroupId: SUPPLIERS,
            name: "Suppliers",
            departmentIds: [SALES],
            createdAt: joined(1, 1),
          },
          { counteragentGroupId: ARCHIVE, name: "Archive", createdAt: joined(1, 2) },
        ],
        counteragents: [
          ...PARTNER_IDS.map((id, i) => ({
            counteragentBoxId: id,
            counteragentGroupId: PARTNERS,
            joinedGroupAt: joined(2, i + 1),
          })),
          {
            counteragentBoxId: "p-06",
            counteragentGroupId: PARTNERS,
            status: "RejectsMe",
            joinedGroupAt: joined(2, 20),
          },
          ...DEFAULT_IDS.map((id, i) => ({
            counteragentBoxId: id,
            joinedGroupAt: joined(3, i + 1),
          })),
          { counteragentBoxId: "d-07", status: "InvitesMe", joinedGroupAt: joined(3, 20) },
        ],
      },
      { boxId: EMPTY_BOX, employees: [employee("admin")] },
      {
        boxId: OTHER_BOX,
        employees: [employee("outsider")],
        counteragentGroups: [{ counteragentGroupId: ELSEWHERE, name: "Partners" }],
        counteragents: [{ counteragentBoxId: "x-01", counteragentGroupId: ELSEWHERE }],
      },
      {
        boxId: ENDED_BOX,
        apiSubscriptionEndsAt: "2020-01-01T00:00:00Z",
        employees: [employee("admin")],
        counteragentGroups: [{ counteragentGroupId: "g-ended", name: "Ended" }],
      },
      {
        boxId: RACE_BOX,
        employees: [employee("admin")],
        counteragents: RACERS.map((id) => ({ counteragentBoxId: id, joinedGroupAt: joined(4, 1) })),
      },
    ],
  };
}

export const rpc = CounteragentService.method;
/** Who calls, in which box: the administrator of BOX unless told. */
export interface As {
  readonly user?: User;
  readonly boxId?: string;
}
export const departments = (ids: readonly string[]) =>
  create(DepartmentsInGroupSchema, { DepartmentIds: [...ids] });
export interface Changes {
  readonly name?: string;
  readonly anyDepartment?: boolean;
  readonly departmentIds?: readonly string[];
}
const ref = (groupId: string, as: As) => ({
  boxId: as.boxId ?? BOX,
  counteragentGroupId: groupId,
});

/** The group family's calls and reads against `h` (any tier). */
export function groupCalls(h: Served) {
  function createGroup(p: Protocol, name: string, departmentIds?: readonly string[], as: As = {}) {
    const group = create(CounteragentGroupToCreateSchema, {
      Name: name,
      ...(departmentIds ? { Departments: departments(departmentIds) } : {}),
    });
    return call(
      h,
      p,
      rpc.createCounteragentGroup,
      create(rpc.createCounteragentGroup.input, { boxId: as.boxId ?? BOX, group }),
      auth(as.user ?? "admin"),
    );
  }

  function updateGroup(p: Protocol, groupId: string, changes: Changes | undefined, as: As = {}) {
    const patch =
      changes?.anyDepartment === undefined
        ? undefined
        : create(CounteragentGroupDepartmentPatchSchema, {
            AnyDepartment: changes.anyDepartment,
            ...(changes.departmentIds ? { Departments: departments(changes.departmentIds) } : {}),
          });
    const body =
      changes &&
      create(CounteragentGroupToUpdateSchema, {
        ...(changes.name === undefined ? {} : { Name: changes.name }),
        ...(patch ? { GroupDepartments: patch } : {}),
      });
    return call(
      h,
      p,
      rpc.updateCounteragentGroup,
      create(rpc.updateCounteragentGroup.input, {
        boxId: as.boxId ?? BOX,
        counteragentGroupId: groupId,
        ...(body ? { changes: body } : {}),
      }),
      auth(as.user ?? "admin"),
    );
  }

  const deleteGroup = (p: Protocol, groupId: string, as: As = {}) =>
    call(
      h,
      p,
      rpc.deleteCounteragentGroup,
      create(rpc.deleteCounteragentGroup.input, ref(groupId, as)),
      auth(as.user ?? "admin"),
    );
  const getGroup = (p: Protocol, groupId: string, as: As = {}) =>
    call(
      h,
      p,
      rpc.getCounteragentGroup,
      create(rpc.getCounteragentGroup.input, ref(groupId, as)),
      auth(as.user ?? "admin"),
    );
  const listGroups = (p: Protocol, paging: { page?: number; count?: number } = {}, as: As = {}) =>
    call(
      h,
      p,
      rpc.getCounteragentGroups,
      create(rpc.getCounteragentGroups.input, { boxId: as.boxId ?? BOX, ...paging }),
      auth(as.user ?? "admin"),
    );
  const addToGroup = (p: Protocol, counteragentBoxId: string, groupId: string, as: As = {}) =>
    call(
      h,
      p,
      rpc.addCounteragentToGroup,
      create(rpc.addCounteragentToGroup.input, { ...ref(groupId, as), counteragentBoxId }),
      auth(as.user ?? "admin"),
    );

  /** The whole listing of a group (GetCounteragentsFromGroup, one page of 100). */
  async function membersOf(groupId: string, boxId = BOX) {
    const page = expectOk(
      await call(
        h,
        "in-memory",
        rpc.getCounteragentsFromGroup,
        create(rpc.getCounteragentsFromGroup.input, { boxId, counteragentGroupId: groupId }),
        auth("admin"),
      ),
    );
    return { ids: page.CounteragentBoxId, total: page.TotalCount };
  }

  const stored = (counteragentBoxId: string, boxId = BOX) =>
    h.db.collection("counteragents").findOne({ boxId, counteragentBoxId });
  const storedGroups = (boxId = BOX) =>
    h.db.collection("counteragentGroups").find({ boxId }).toArray();
  const groupIdsListed = async (p: Protocol = "in-memory", boxId = BOX) =>
    expectOk(await listGroups(p, {}, { boxId })).Groups.map((g) => g.CounteragentGroupId);

  /** Every counteragent of the race box is in the default group or in a group that exists. */
  async function expectEveryMemberInAnExistingGroup() {
    const groups = new Set(
      (await storedGroups(RACE_BOX)).map((g) => g.counteragentGroupId as string),
    );
    const docs = await h.db.collection("counteragents").find({ boxId: RACE_BOX }).toArray();
    expect(docs).toHaveLength(RACERS.length);
    for (const doc of docs) {
      expect(
        doc.counteragentGroupId === DEFAULT || groups.has(doc.counteragentGroupId),
        `${doc.counteragentBoxId} is in ${doc.counteragentGroupId}`,
      ).toBe(true);
    }
  }

  return {
    expectEveryMemberInAnExistingGroup,
    createGroup,
    updateGroup,
    deleteGroup,
    getGroup,
    listGroups,
    addToGroup,
    membersOf,
    stored,
    storedGroups,
    groupIdsListed,
  };
}

/** Departments as a proto2 client sees them: undefined when the field is not on the wire. */
export const departmentsOf = (group: CounteragentGroup) =>
  isFieldSet(group, CounteragentGroupSchema.field.Departments)
    ? group.Departments?.DepartmentIds
    : undefined;
export const shape = (group: CounteragentGroup) => ({
  id: group.CounteragentGroupId,
  name: group.Name,
  departments: departmentsOf(group),
});
