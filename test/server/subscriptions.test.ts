/**
 * docs/api.md §6.3 where the wire matters: a Subscription without IsSubscribed as
 * each protocol carries it (the rules themselves: test/in-memory/), and
 * concurrent updates over every transport.
 */
import { create } from "@bufbuild/protobuf";
import { beforeEach, describe, expect, it } from "vitest";
import { SubscriptionService } from "../../gen/docflow/api/v1/subscriptions_pb";
import {
  SubscriptionSchema,
  SubscriptionsToUpdateSchema,
} from "../../gen/docflow/legacy/subscriptions_pb";
import { loadFixture } from "../../src/fixtures/load";
import { authHeader, BOX, baseFixture, USERS } from "../support/fixture";
import { useHarness } from "../support/harness";
import { call, PROTOCOLS } from "../support/protocols";
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

const update = SubscriptionService.method.updateSubscriptions;

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

const h = useHarness();
beforeEach(async () => {
  await loadFixture(h.db, baseFixture());
});

async function storedSubscriptions(boxId: string, userId: string) {
  const doc = await h.db.collection("employees").findOne({ boxId, userId });
  return doc?.subscriptions as Record<string, boolean> | undefined;
}

describe.each(PROTOCOLS)("over %s", (protocol) => {
  it("missing IsSubscribed is a 400 and changes nothing (the field is not read as false)", async () => {
    const res = await callWithoutIsSubscribed(h, protocol, authHeader("clerk"));
    expect(res).toMatchObject({ ok: false, status: 400, errorCode: "Http.BadRequest" });
    expect(res.ok || res.message).toMatch(/IsSubscribed is required/);
    expect(await storedSubscriptions(BOX, USERS.clerk.userId)).toEqual({ News: false });
  });
});

describe("concurrent updates of different Ids for the same user never lose one another", () => {
  it("ten parallel updates, one Id each, all land", async () => {
    const results = await Promise.all(
      CATALOG.map((id, i) =>
        call(
          h,
          PROTOCOLS[i % PROTOCOLS.length] ?? "connect-json",
          update,
          updateReq(BOX, USERS.colleague.userId, [[id, false]]),
          authHeader("admin"),
        ),
      ),
    );
    expect(results.every((r) => r.ok)).toBe(true);
    const stored = await storedSubscriptions(BOX, USERS.colleague.userId);
    expect(stored).toEqual(Object.fromEntries(CATALOG.map((id) => [id, false])));
  });
});
