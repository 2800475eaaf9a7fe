/** SPEC §6.2: GetCounteragentsFromGroup, keyset paging. */
import { create, fromBinary, isFieldSet } from "@bufbuild/protobuf";
import { beforeEach, describe, expect, it } from "vitest";
import { CounteragentService } from "../gen/docflow/api/v1/counteragents_pb";
import {
  type CounteragentFromGroupResponse,
  CounteragentFromGroupResponseSchema,
} from "../gen/docflow/legacy/counteragents_pb";
import { loadFixture } from "../src/fixtures/load";
import { ENDED_BOX, HEAD, KEY, OTHER_BOX } from "./support/fixture";
import { legacy, useHarness } from "./support/harness";
import { call, expectOk, type Protocol } from "./support/protocols";

const BOX = "b2000000-0000-4000-8000-000000000001";
const BIG = "group-big";
const MIXED = "group-mixed";
const EMPTY = "group-empty";
const OTHER_GROUP_IN_OTHER_BOX = "group-elsewhere";
const USERS = {
  admin: { isAdministrator: true, canManageCounteragents: true },
  adminOnly: { isAdministrator: true, canManageCounteragents: false },
  managerOnly: { isAdministrator: false, canManageCounteragents: true },
  outsider: { isAdministrator: true, canManageCounteragents: true },
} as const;
type User = keyof typeof USERS;
const auth = (user: User) =>
  `ServiceAuth svcauth_api_client_id=${KEY}, svcauth_token=${user}-token`;

const BASE = Date.parse("2026-01-01T00:00:00Z");
/** 250 members of BIG; ten share each timestamp, so the box id breaks ties. Ids are not in time order. */
const bigMembers = Array.from({ length: 250 }, (_, i) => ({
  counteragentBoxId: `ca-${String((i * 7919) % 1000).padStart(3, "0")}-${i}`,
  counteragentGroupId: BIG,
  joinedGroupAt: new Date(BASE + Math.floor(i / 10) * 60_000).toISOString(),
}));
const expectedBigOrder = [...bigMembers]
  .sort(
    (a, b) =>
      a.joinedGroupAt.localeCompare(b.joinedGroupAt) ||
      (a.counteragentBoxId < b.counteragentBoxId ? -1 : 1),
  )
  .map((m) => m.counteragentBoxId);

function fixture() {
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

const h = useHarness(fixture);

const method = CounteragentService.method.getCounteragentsFromGroup;
function list(
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
}

/** AfterIndexKey as a proto2 client sees it: undefined when not on the wire. */
const keyOf = (page: CounteragentFromGroupResponse) =>
  isFieldSet(page, CounteragentFromGroupResponseSchema.field.AfterIndexKey)
    ? page.AfterIndexKey
    : undefined;

// Domain rules in memory; the legacy encodings and gRPC for what the wire shows.
const PROTOCOLS_UNDER_TEST: Protocol[] = ["in-memory", "legacy-protobuf", "legacy-json", "grpc"];

describe.each(PROTOCOLS_UNDER_TEST)("over %s", (protocol) => {
  describe("lists IsMyCounteragent members in join order, then box id", () => {
    it("first page of 7, TotalCount over all pages", async () => {
      const page = expectOk(await list(protocol, BIG, { count: 7 }));
      expect(page.CounteragentBoxId).toEqual(expectedBigOrder.slice(0, 7));
      expect(page.TotalCount).toBe(250);
      expect(keyOf(page)).toMatch(/^[A-Za-z0-9_-]+$/);
    });
    it("only IsMyCounteragent is listed and counted", async () => {
      const page = expectOk(await list(protocol, MIXED));
      expect(page.CounteragentBoxId).toEqual(["mixed-0"]);
      expect(page.TotalCount).toBe(1);
    });
    it("the default group always exists and holds the counteragents placed nowhere else", async () => {
      const page = expectOk(await list(protocol, HEAD));
      expect(page.CounteragentBoxId).toEqual(["default-1", "default-2"]);
      expect(page.TotalCount).toBe(2);
    });
    it("count absent: 100", async () => {
      const page = expectOk(await list(protocol, BIG));
      expect(page.CounteragentBoxId).toEqual(expectedBigOrder.slice(0, 100));
    });
    it("an empty group: TotalCount 0, no AfterIndexKey", async () => {
      const page = expectOk(await list(protocol, EMPTY));
      expect(page).toMatchObject({ CounteragentBoxId: [], TotalCount: 0 });
      expect(keyOf(page)).toBeUndefined();
    });
    it("the page after the last item is empty and has no key", async () => {
      const first = expectOk(await list(protocol, HEAD));
      const next = expectOk(await list(protocol, HEAD, { after: keyOf(first) }));
      expect(next.CounteragentBoxId).toEqual([]);
      expect(keyOf(next)).toBeUndefined();
      expect(next.TotalCount).toBe(2);
    });
  });

  describe("errors", () => {
    it("an unknown group: 404", async () => {
      expect(await list(protocol, "no-such-group")).toMatchObject({
        ok: false,
        status: 404,
        errorCode: "CounteragentGroup.NotFound",
      });
    });
    it("a group of another box: 404", async () => {
      expect(await list(protocol, OTHER_GROUP_IN_OTHER_BOX)).toMatchObject({
        ok: false,
        status: 404,
      });
    });
    it.each(["adminOnly", "managerOnly"] as const)(
      "%s (not an administrator with CanManageCounteragents): 403",
      async (user) => {
        expect(await list(protocol, BIG, { user })).toMatchObject({ ok: false, status: 403 });
      },
    );
    it("no access to the box: 403; subscription ended: 402", async () => {
      expect(await list(protocol, BIG, { user: "outsider" })).toMatchObject({
        ok: false,
        status: 403,
      });
      expect(await list(protocol, BIG, { boxId: ENDED_BOX })).toMatchObject({
        ok: false,
        status: 402,
      });
    });
    it.each([0, 101, -1])("count %i: 400", async (count) => {
      expect(await list(protocol, BIG, { count })).toMatchObject({ ok: false, status: 400 });
    });
    it("a malformed key: 400", async () => {
      for (const after of ["not a key!", "AAAA", "x".repeat(600)]) {
        expect(await list(protocol, BIG, { after })).toMatchObject({ ok: false, status: 400 });
      }
    });
    it("a tampered key: 400", async () => {
      const key = keyOf(expectOk(await list(protocol, BIG, { count: 3 }))) ?? "";
      const tampered = key.slice(0, 12) + (key[12] === "A" ? "B" : "A") + key.slice(13);
      expect(await list(protocol, BIG, { after: tampered })).toMatchObject({
        ok: false,
        status: 400,
      });
    });
    it("a key of another group cannot be used here: 400", async () => {
      const key = keyOf(expectOk(await list(protocol, BIG, { count: 3 })));
      expect(await list(protocol, HEAD, { after: key })).toMatchObject({ ok: false, status: 400 });
    });
    it("400 before 403: a bad count on a box without access", async () => {
      expect(await list(protocol, BIG, { count: 0, user: "outsider" })).toMatchObject({
        ok: false,
        status: 400,
      });
    });
  });
});

describe("legacy query forms", () => {
  const get = (query: string) =>
    legacy(h, {
      method: "GET",
      path: `/GetCounteragentsFromGroup?boxId=${BOX}&counteragentGroupId=${BIG}${query}`,
      headers: { authorization: auth("admin") },
    });

  it("the C#-style bare keys `&count&afterIndexKey` mean absent: the first 100", async () => {
    const res = await get("&count&afterIndexKey");
    expect(res.status).toBe(200);
    expect(
      fromBinary(CounteragentFromGroupResponseSchema, res.body).CounteragentBoxId,
    ).toHaveLength(100);
  });
  it.each(["1.5", "abc", "1e2", "0x10", " 5"])("count=%s: 400", async (count) => {
    const res = await get(`&count=${encodeURIComponent(count)}`);
    expect(res.status).toBe(400);
    expect(res.headers["x-service-errorcode"]).toBe("Http.BadRequest");
  });
  it("an empty group on the wire: TotalCount present (10 00), no AfterIndexKey", async () => {
    const res = await legacy(h, {
      method: "GET",
      path: `/GetCounteragentsFromGroup?boxId=${BOX}&counteragentGroupId=${EMPTY}`,
      headers: { authorization: auth("admin") },
    });
    expect(res.body.toString("hex")).toBe("1000");
    const json = await legacy(h, {
      method: "GET",
      path: `/GetCounteragentsFromGroup?boxId=${BOX}&counteragentGroupId=${EMPTY}`,
      headers: { authorization: auth("admin"), accept: "application/json" },
    });
    expect(JSON.parse(json.text)).toEqual({ CounteragentBoxId: [], TotalCount: 0 });
  });
});

describe("paging walks", () => {
  beforeEach(async () => {
    await loadFixture(h.db, fixture());
  });

  it.each(["legacy-protobuf", "grpc"] as const)(
    "over %s, count 7: looping until the key is absent sees every member once, in order",
    async (protocol) => {
      const seen: string[] = [];
      let after: string | undefined;
      let pages = 0;
      do {
        const page = expectOk(await list(protocol, BIG, { count: 7, after }));
        seen.push(...page.CounteragentBoxId);
        after = keyOf(page);
        pages++;
        expect(pages).toBeLessThan(100);
      } while (after !== undefined);
      expect(seen).toEqual(expectedBigOrder);
      expect(pages).toBe(Math.ceil(250 / 7) + 1);
    },
  );

  it("looping until a page comes back empty sees every member once, in order", async () => {
    const seen: string[] = [];
    let after: string | undefined;
    for (let pages = 0; pages < 100; pages++) {
      const page = expectOk(await list("legacy-json", BIG, { count: 7, after }));
      if (page.CounteragentBoxId.length === 0) break;
      seen.push(...page.CounteragentBoxId);
      after = keyOf(page);
    }
    expect(seen).toEqual(expectedBigOrder);
  });

  it("members joining and leaving between pages: no member that stayed is skipped or repeated", async () => {
    const collection = h.db.collection("counteragents");
    const leaving = new Set(expectedBigOrder.filter((_, i) => i % 9 === 4));
    const stayed = expectedBigOrder.filter((id) => !leaving.has(id));
    const seen: string[] = [];
    let after: string | undefined;
    let round = 0;
    do {
      const page = expectOk(await list("legacy-protobuf", BIG, { count: 7, after }));
      seen.push(...page.CounteragentBoxId);
      after = keyOf(page);
      round++;
      // Between pages: some leave (seen or not), some join early in the order and at its end.
      const leaveNow = [...leaving].slice((round - 1) * 3, round * 3);
      await collection.deleteMany({ boxId: BOX, counteragentBoxId: { $in: leaveNow } });
      await collection.insertMany([
        {
          boxId: BOX,
          counteragentBoxId: `joined-early-${round}`,
          counteragentGroupId: BIG,
          status: "IsMyCounteragent",
          joinedGroupAt: new Date(BASE),
        },
        {
          boxId: BOX,
          counteragentBoxId: `joined-late-${round}`,
          counteragentGroupId: BIG,
          status: "IsMyCounteragent",
          joinedGroupAt: new Date(BASE + 86_400_000),
        },
      ]);
    } while (after !== undefined && round < 200);
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of stayed) expect(seen).toContain(id);
    const seenStayed = seen.filter((id) => stayed.includes(id));
    expect(seenStayed).toEqual(stayed);
    await collection.deleteMany({ boxId: BOX, counteragentBoxId: { $regex: "^joined-" } });
  });
});
