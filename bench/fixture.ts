/**
 * The benchmark's data and calls: one box whose administrator lists a group
 * of 250 IsMyCounteragent members (pages of 100) and reads and changes the
 * subscriptions of another employee. Shared by the bench, the floors and the
 * load generators, so every side asks the same question.
 */
import { create, toBinary } from "@bufbuild/protobuf";
import { GetCounteragentsFromGroupRequestSchema } from "../gen/docflow/api/v1/counteragents_pb";

export const BENCH = {
  apiKey: "bench-api-key",
  token: "bench-admin-token",
  adminUserId: "bench-admin-0000-4000-8000-000000000001",
  employeeUserId: "bench-employee-0000-4000-8000-000000000002",
  boxId: "bench-box-0000-4000-8000-000000000001",
  groupId: "bench-group-0000-4000-8000-000000000001",
  members: 250,
  count: 100,
} as const;

export const AUTHORIZATION = `ServiceAuth svcauth_api_client_id=${BENCH.apiKey}, svcauth_token=${BENCH.token}`;

/** --overload's second API client, the one that floods (the same user's token, another key). */
export const FLOOD_API_KEY = "bench-flood-api-key";
export const FLOOD_AUTHORIZATION = `ServiceAuth svcauth_api_client_id=${FLOOD_API_KEY}, svcauth_token=${BENCH.token}`;

const SUBSCRIPTIONS_PATH = `/GetSubscriptions?boxId=${BENCH.boxId}&userId=${BENCH.employeeUserId}`;

/** --overload's call: legacy GetSubscriptions as JSON, the spike. */
export const OVERLOAD_CALL = {
  path: SUBSCRIPTIONS_PATH,
  headers: { Authorization: AUTHORIZATION, Accept: "application/json" },
} as const;

/** The same call from the flooding client. */
export const FLOOD_CALL = {
  path: SUBSCRIPTIONS_PATH,
  headers: { Authorization: FLOOD_AUTHORIZATION, Accept: "application/json" },
} as const;

const JOINED_FROM = Date.parse("2025-01-01T00:00:00Z");

/** The fixture in the format of docs/api.md §8, for loadFixture. */
export function benchFixture(): Record<string, unknown> {
  return {
    apiClients: [
      { apiKey: BENCH.apiKey, name: "Benchmark client" },
      { apiKey: FLOOD_API_KEY, name: "Flooding client" },
    ],
    users: [
      {
        userId: BENCH.adminUserId,
        tokens: [{ token: BENCH.token, expiresAt: "2099-01-01T00:00:00Z" }],
      },
    ],
    boxes: [
      {
        boxId: BENCH.boxId,
        organizationName: "Benchmark Org",
        apiSubscriptionEndsAt: "2099-01-01T00:00:00Z",
        employees: [
          {
            userId: BENCH.adminUserId,
            isAdministrator: true,
            canManageCounteragents: true,
            documentAccessLevel: "AllDocuments",
          },
          {
            userId: BENCH.employeeUserId,
            subscriptions: { News: false, ChatMessages: false, ResolutionRequests: true },
          },
        ],
        counteragentGroups: [{ counteragentGroupId: BENCH.groupId, name: "Benchmark group" }],
        counteragents: Array.from({ length: BENCH.members }, (_, i) => ({
          // Ids sort differently from join order, as in real data.
          counteragentBoxId: `bench-ca-${String((i * 97) % BENCH.members).padStart(4, "0")}-${i}`,
          counteragentGroupId: BENCH.groupId,
          status: "IsMyCounteragent",
          joinedGroupAt: new Date(JOINED_FROM + i * 1000).toISOString(),
        })),
      },
    ],
  };
}

export const CONNECT_PATH = "/docflow.api.v1.CounteragentService/GetCounteragentsFromGroup";

/** The one request message of GetCounteragentsFromGroup, in binary (Connect and gRPC). */
export function groupRequestBytes(): Uint8Array {
  return toBinary(
    GetCounteragentsFromGroupRequestSchema,
    create(GetCounteragentsFromGroupRequestSchema, {
      boxId: BENCH.boxId,
      counteragentGroupId: BENCH.groupId,
      count: BENCH.count,
    }),
  );
}

/** One HTTP/1.1 call, as autocannon sends it. */
export interface HttpCall {
  readonly method: "GET" | "POST";
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  /** base64, so that binary bodies survive JSON. */
  readonly bodyBase64?: string;
}

export type ScenarioName =
  | "legacy-json"
  | "legacy-proto"
  | "get-subscriptions"
  | "update-subscriptions"
  | "grpc"
  | "connect-binary";

export interface Scenario {
  readonly name: ScenarioName;
  readonly description: string;
  /** undefined for the gRPC scenario, driven by the gRPC load generator. */
  readonly http: HttpCall | undefined;
}

const groupQuery = `boxId=${BENCH.boxId}&counteragentGroupId=${BENCH.groupId}&count=${BENCH.count}`;
const employeeQuery = `boxId=${BENCH.boxId}&userId=${BENCH.employeeUserId}`;

export const SCENARIOS: readonly Scenario[] = [
  {
    name: "legacy-json",
    description: "legacy GET /GetCounteragentsFromGroup, Accept: application/json",
    http: {
      method: "GET",
      path: `/GetCounteragentsFromGroup?${groupQuery}`,
      headers: { authorization: AUTHORIZATION, accept: "application/json" },
    },
  },
  {
    name: "legacy-proto",
    description: "legacy GET /GetCounteragentsFromGroup, protobuf (no Accept)",
    http: {
      method: "GET",
      path: `/GetCounteragentsFromGroup?${groupQuery}`,
      headers: { authorization: AUTHORIZATION },
    },
  },
  {
    name: "get-subscriptions",
    description: "legacy GET /GetSubscriptions, JSON",
    http: {
      method: "GET",
      path: `/GetSubscriptions?${employeeQuery}`,
      headers: { authorization: AUTHORIZATION, accept: "application/json" },
    },
  },
  {
    name: "update-subscriptions",
    description: "legacy POST /UpdateSubscriptions, JSON body and answer (a write)",
    http: {
      method: "POST",
      path: `/UpdateSubscriptions?${employeeQuery}`,
      headers: {
        authorization: AUTHORIZATION,
        accept: "application/json",
        "content-type": "application/json",
      },
      bodyBase64: Buffer.from(
        JSON.stringify({ Subscriptions: [{ Id: "News", IsSubscribed: "true" }] }),
      ).toString("base64"),
    },
  },
  {
    name: "grpc",
    description: "gRPC GetCounteragentsFromGroup (h2c)",
    http: undefined,
  },
  {
    name: "connect-binary",
    description: "Connect POST GetCounteragentsFromGroup, application/proto",
    http: {
      method: "POST",
      path: CONNECT_PATH,
      headers: {
        authorization: AUTHORIZATION,
        "content-type": "application/proto",
        "connect-protocol-version": "1",
      },
      bodyBase64: Buffer.from(groupRequestBytes()).toString("base64"),
    },
  },
];
