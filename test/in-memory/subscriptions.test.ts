/**
 * docs/api.md §6.3: GetSubscriptions and UpdateSubscriptions, the rules, through the
 * service's routes and interceptors in memory. What differs by protocol (the
 * answer's encodings, a missing IsSubscribed on each wire, concurrent calls
 * over real transports) is in test/server/subscriptions.test.ts and
 * test/server/protocol-matrix.test.ts.
 */
import { create } from "@bufbuild/protobuf";
import { beforeEach, describe, expect, it } from "vitest";
import { SubscriptionService } from "../../gen/docflow/api/v1/subscriptions_pb";
import {
  SubscriptionSchema,
  SubscriptionsToUpdateSchema,
} from "../../gen/docflow/legacy/subscriptions_pb";
import { loadFixture } from "../../src/fixtures/load";
import {
  authHeader,
  BOX,
  baseFixture,
  ENDED_BOX,
  OTHER_BOX,
  UNKNOWN_BOX,
  USERS,
} from "../support/fixture";
import { useInMemory } from "../support/harness";
import { call, expectOk, type Protocol } from "../support/protocols";
import { callWithoutIsSubscribed } from "../support/raw";

const CATALOG = [
  "CounteragentInvitation",
  "CounteragentInvitationResponses",
  "NewIncomingDocuments",
  "CounteragentSignatures",
  "CounteragentSignatureDenials",
  "ResolutionRequests",
  "ResolutionResults",
  "EmployeeRequests",
  "News",
  "ChatMessages",
];

const get = SubscriptionService.method.getSubscriptions;
const update = SubscriptionService.method.updateSubscriptions;

const getReq = (boxId: string, userId: string) => create(get.input, { boxId, userId });
const updateReq = (boxId: string, userId: string, changes: [string, boolean | undefined][]) =>
  create(update.input, {
    boxId,
    userId,
    subscriptions: create(SubscriptionsToUpdateSchema, {
      Subscriptions: changes.map(([Id, IsSubscribed]) =>
        create(SubscriptionSchema, IsSubscribed === undefined ? { Id } : { Id, IsSubscribed }),
      ),
    }),
  });

const asMap = (list: { Id: string; IsSubscribed: boolean }[]) =>
  Object.fromEntries(list.map((s) => [s.Id, s.IsSubscribed]));

const h = useInMemory();
beforeEach(async () => {
  await loadFixture(h.db, baseFixture());
});

async function storedSubscriptions(boxId: string, userId: string) {
  const doc = await h.db.collection("employees").findOne({ boxId, userId });
  return doc?.subscriptions as Record<string, boolean> | undefined;
}

describe.each(["in-memory"] satisfies Protocol[])("over %s", (protocol) => {
  describe("GetSubscriptions answers the full catalog in catalog order", () => {
    it("a subscription never set is subscribed; a set one keeps its value", async () => {
      const res = expectOk(
        await call(h, protocol, get, getReq(BOX, USERS.clerk.userId), authHeader("clerk")),
      );
      expect(res.Subscriptions.map((s) => s.Id)).toEqual(CATALOG);
      expect(asMap(res.Subscriptions)).toEqual({
        ...Object.fromEntries(CATALOG.map((id) => [id, true])),
        News: false,
      });
    });

    it("every subscription false is answered as false, not dropped", async () => {
      const res = expectOk(
        await call(h, protocol, get, getReq(BOX, USERS.muted.userId), authHeader("admin")),
      );
      expect(res.Subscriptions).toHaveLength(10);
      expect(res.Subscriptions.every((s) => s.IsSubscribed === false)).toBe(true);
    });
  });

  describe("UpdateSubscriptions sets each listed Id and leaves the others", () => {
    it("changes the listed ones, answers the full catalog, stores the change", async () => {
      const res = expectOk(
        await call(
          h,
          protocol,
          update,
          updateReq(BOX, USERS.clerk.userId, [
            ["NewIncomingDocuments", false],
            ["News", true],
          ]),
          authHeader("clerk"),
        ),
      );
      expect(res.Subscriptions.map((s) => s.Id)).toEqual(CATALOG);
      const map = asMap(res.Subscriptions);
      expect(map.NewIncomingDocuments).toBe(false);
      expect(map.News).toBe(true);
      expect(map.ChatMessages).toBe(true);
      expect(await storedSubscriptions(BOX, USERS.clerk.userId)).toEqual({
        News: true,
        NewIncomingDocuments: false,
      });
    });

    it("an empty list changes nothing and answers the current state", async () => {
      const res = expectOk(
        await call(
          h,
          protocol,
          update,
          updateReq(BOX, USERS.clerk.userId, []),
          authHeader("clerk"),
        ),
      );
      expect(asMap(res.Subscriptions).News).toBe(false);
      expect(await storedSubscriptions(BOX, USERS.clerk.userId)).toEqual({ News: false });
    });
  });

  describe("bad input is a 400 and changes nothing", () => {
    const cases: [string, () => ReturnType<typeof updateReq>, string][] = [
      [
        "unknown Id",
        () =>
          updateReq(BOX, USERS.clerk.userId, [
            ["News", true],
            ["Weather", true],
          ]),
        "Subscriptions.UnknownId",
      ],
      [
        "duplicated Id",
        () =>
          updateReq(BOX, USERS.clerk.userId, [
            ["News", true],
            ["News", false],
          ]),
        "Subscriptions.DuplicateId",
      ],
      [
        "missing boxId",
        () => updateReq("", USERS.clerk.userId, [["News", true]]),
        "Http.BadRequest",
      ],
      ["missing userId", () => updateReq(BOX, "", [["News", true]]), "Http.BadRequest"],
    ];
    it.each(cases)("%s", async (_name, request, errorCode) => {
      const res = await call(h, protocol, update, request(), authHeader("clerk"));
      expect(res).toMatchObject({ ok: false, status: 400, errorCode });
      expect(await storedSubscriptions(BOX, USERS.clerk.userId)).toEqual({ News: false });
    });
  });

  it("missing IsSubscribed is a 400 and changes nothing (the field is not read as false)", async () => {
    const res = await callWithoutIsSubscribed(h, protocol, authHeader("clerk"));
    expect(res).toMatchObject({ ok: false, status: 400, errorCode: "Http.BadRequest" });
    expect(res.ok || res.message).toMatch(/IsSubscribed is required/);
    expect(await storedSubscriptions(BOX, USERS.clerk.userId)).toEqual({ News: false });
  });

  describe("who may call: an administrator of the box, or the employee himself", () => {
    it("an administrator edits another employee", async () => {
      const res = await call(
        h,
        protocol,
        update,
        updateReq(BOX, USERS.clerk.userId, [["News", true]]),
        authHeader("admin"),
      );
      expect(res.ok).toBe(true);
      expect(await storedSubscriptions(BOX, USERS.clerk.userId)).toEqual({ News: true });
    });

    it("a non-administrator editing someone else gets 403 and nothing changes", async () => {
      const res = await call(
        h,
        protocol,
        update,
        updateReq(BOX, USERS.colleague.userId, [["News", false]]),
        authHeader("clerk"),
      );
      expect(res).toMatchObject({ ok: false, status: 403 });
      expect(await storedSubscriptions(BOX, USERS.colleague.userId)).toEqual({});
    });

    it("a non-administrator reading someone else gets 403", async () => {
      const res = await call(
        h,
        protocol,
        get,
        getReq(BOX, USERS.colleague.userId),
        authHeader("clerk"),
      );
      expect(res).toMatchObject({ ok: false, status: 403, errorCode: "Http.Forbidden" });
    });

    it("a box of another organization is 403", async () => {
      const res = await call(
        h,
        protocol,
        get,
        getReq(OTHER_BOX, USERS.outsider.userId),
        authHeader("admin"),
      );
      expect(res).toMatchObject({ ok: false, status: 403 });
    });

    it("an unknown box is 403 (not 404)", async () => {
      const res = await call(
        h,
        protocol,
        get,
        getReq(UNKNOWN_BOX, USERS.admin.userId),
        authHeader("admin"),
      );
      expect(res).toMatchObject({ ok: false, status: 403 });
    });

    it("an unknown user of the box is 404 for an administrator", async () => {
      const res = await call(
        h,
        protocol,
        update,
        updateReq(BOX, "u-nobody", [["News", true]]),
        authHeader("admin"),
      );
      expect(res).toMatchObject({ ok: false, status: 404, errorCode: "Employee.NotFound" });
      expect(
        await h.db.collection("employees").countDocuments({ boxId: BOX, userId: "u-nobody" }),
      ).toBe(0);
    });

    it("the box's API subscription has ended: 402", async () => {
      const res = await call(
        h,
        protocol,
        get,
        getReq(ENDED_BOX, USERS.clerk.userId),
        authHeader("clerk"),
      );
      expect(res).toMatchObject({ ok: false, status: 402, errorCode: "Http.PaymentRequired" });
    });
  });

  describe("authentication: 401", () => {
    it("no Authorization header", async () => {
      const res = await call(h, protocol, get, getReq(BOX, USERS.admin.userId));
      expect(res).toMatchObject({ ok: false, status: 401, errorCode: "Http.Unauthorized" });
    });
  });
});
