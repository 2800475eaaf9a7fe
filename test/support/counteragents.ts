/**
 * The GetCounteragentsFromGroup fixture (docs/api.md §6.2): a group of 250 members
 * (ten share each join time), one of every status, an empty group, groups of
 * other boxes; the listing call over any tier.
 */
import { create, isFieldSet } from "@bufbuild/protobuf";
import { CounteragentService } from "../../gen/docflow/api/v1/counteragents_pb";
import {
  type CounteragentFromGroupResponse,
  CounteragentFromGroupResponseSchema,
} from "../../gen/docflow/legacy/counteragents_pb";
import { ENDED_BOX, KEY, OTHER_BOX } from "./fixture";
import type { Served } from "./harness";
import { call, type Protocol } from "./protocols";

export const BOX = "b2000000-0000-4000-8000-000000000001";
export const BIG = "group-big";
export const MIXED = "group-mixed";
export const EMPTY = "group-empty";
export const OTHER_GROUP_IN_OTHER_BOX = "group-elsewhere";
export const USERS = {
  admin: { isAdministrator: true, canManageCounteragents: true },
  adminOnly: { isAdministrator: true, canManageCounteragents: false },
  managerOnly: { isAdministrator: false, canManageCounteragents: true },
  outsider: { isAdministrator: true, canManageCounteragents: true },
} as const;
export type User = keyof typeof USERS;
export const auth = (user: User) =>
  `ServiceAuth svcauth_api_client_id=${KEY}, svcauth_token=${user}-token`;

export const BASE = Date.parse("2026-01-01T00:00:00Z");
/** 250 members of BIG; ten share each timestamp, so the box id breaks ties. Ids are not in time order. */
export const bigMembers = Array.from({ length: 250 }, (_, i) => ({
  counteragentBoxId: `ca-${String((i * 7919) % 1000).padStart(3, "0")}-${i}`,
  counteragentGroupId: BIG,
  joinedGroupAt: new Date(BASE + Math.floor(i / 10) * 60_000).toISOString(),
}));
export const expectedBigOrder = [...bigMembers]
  .sort(
    (a, b) =>
      a.joinedGroupAt.localeCompare(b.joinedGroupAt) ||
      (a.counteragentBoxId < b.counteragentBoxId ? -1 : 1),
  )
  .map((m) => m.counteragentBoxId);

export function fixture() {
  const employee = (user: User) => ({ userId: `u-${user}`, ...USERS[user] });
  const statuses = [
    "IsMyCounteragent",
    "InvitesMe",
    "IsInvitedByMe",
    "RejectsMe",
    "IsRejectedByMe",
    "NotInCounteragentList",
  ];
  return {
    apiClients: [{ apiKey: KEY }],
    users: (Object.keys(USERS) as User[]).map((u) => ({
      userId: `u-${u}`,
      tokens: [{ token: `${u}-token` }],
    })),
    boxes: [
      {
        boxId: BOX,
        employees: (["admin", "adminOnly", "managerOnly"] as User[]).map(employee),
        counteragentGroups: [
          { counteragentGroupId: BIG },
          { counteragentGroupId: MIXED },
          { counteragentGroupId: EMPTY },
        ],
        counteragents: [
          ...bigMembers,
          ...statuses.map((status, i) => ({
            counteragentBoxId: `mixed-${i}`,
            counteragentGroupId: MIXED,
            status,
            joinedGroupAt: "2026-02-01T00:00:00Z",
          })),
          { counteragentBoxId: "default-2", joinedGroupAt: "2026-03-02T00:00:00Z" },
          { counteragentBoxId: "default-1", joinedGroupAt: "2026-03-01T00:00:00Z" },
          { counteragentBoxId: "default-3", status: "RejectsMe" },
        ],
      },
      {
        boxId: OTHER_BOX,
        employees: [employee("outsider")],
        counteragentGroups: [{ counteragentGroupId: OTHER_GROUP_IN_OTHER_BOX }],
      },
      {
        boxId: ENDED_BOX,
        apiSubscriptionEndsAt: "2020-01-01T00:00:00Z",
        employees: [employee("admin")],
      },
    ],
  };
}

export const method = CounteragentService.method.getCounteragentsFromGroup;

/** The listing call against `h` (any tier). */
export function counteragentCalls(h: Served) {
  return {
    list(
      protocol: Protocol,
      group: string,
      options: { count?: number; after?: string; user?: User; boxId?: string } = {},
    ) {
      const request = create(method.input, {
        boxId: options.boxId ?? BOX,
        counteragentGroupId: group,
        ...(options.count === undefined ? {} : { count: options.count }),
        ...(options.after === undefined ? {} : { afterIndexKey: options.after }),
      });
      return call(h, protocol, method, request, auth(options.user ?? "admin"));
    },
  };
}

/** AfterIndexKey as a proto2 client sees it: undefined when not on the wire. */
export const keyOf = (page: CounteragentFromGroupResponse) =>
  isFieldSet(page, CounteragentFromGroupResponseSchema.field.AfterIndexKey)
    ? page.AfterIndexKey
    : undefined;
