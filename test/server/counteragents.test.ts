/**
 * docs/api.md §6.2 where the wire matters: the legacy query forms SDKs send, and
 * walks over real transports while members join and leave (the rules
 * themselves: test/in-memory/counteragents.test.ts).
 */
import { fromBinary } from "@bufbuild/protobuf";
import { beforeEach, describe, expect, it } from "vitest";
import { CounteragentFromGroupResponseSchema } from "../../gen/docflow/legacy/counteragents_pb";
import { loadFixture } from "../../src/fixtures/load";
import {
  auth,
  BASE,
  BIG,
  BOX,
  counteragentCalls,
  EMPTY,
  expectedBigOrder,
  fixture,
  keyOf,
} from "../support/counteragents";
import { legacy, useHarness } from "../support/harness";
import { expectOk } from "../support/protocols";

const h = useHarness(fixture);
const { list } = counteragentCalls(h);

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
