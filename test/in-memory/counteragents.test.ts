/**
 * docs/api.md §6.2: the rules of GetCounteragentsFromGroup (keyset paging), through
 * the service's routes and interceptors in memory. The legacy query forms and
 * walks over real transports: test/server/counteragents.test.ts.
 */
import { describe, expect, it } from "vitest";
import {
  BIG,
  counteragentCalls,
  EMPTY,
  expectedBigOrder,
  fixture,
  keyOf,
  MIXED,
  OTHER_GROUP_IN_OTHER_BOX,
} from "../support/counteragents";
import { ENDED_BOX, HEAD } from "../support/fixture";
import { useInMemory } from "../support/harness";
import { expectOk, type Protocol } from "../support/protocols";

const h = useInMemory(fixture);
const { list } = counteragentCalls(h);

describe.each(["in-memory"] satisfies Protocol[])("over %s", (protocol) => {
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
