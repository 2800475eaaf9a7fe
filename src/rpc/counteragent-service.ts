/** CounteragentService handlers: decode → domain → encode. */
import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { CounteragentService } from "../../gen/docflow/api/v1/counteragents_pb";
import { CounteragentFromGroupResponseSchema } from "../../gen/docflow/legacy/counteragents_pb";
import { getCounteragentsFromGroup } from "../domain/counteragents";
import { callerOf, depsOf } from "./context";

export const counteragentService: ServiceImpl<typeof CounteragentService> = {
  async getCounteragentsFromGroup(req, ctx) {
    const page = await getCounteragentsFromGroup(depsOf(ctx), callerOf(ctx), req);
    return create(CounteragentFromGroupResponseSchema, {
      CounteragentBoxId: page.counteragentBoxIds,
      TotalCount: page.totalCount,
      ...(page.afterIndexKey === undefined ? {} : { AfterIndexKey: page.afterIndexKey }),
    });
  },
};

export { CounteragentService };
