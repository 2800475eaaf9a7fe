/**
 * Rules that show only in what reaches the database or in a refusal's words:
 * an empty subscription list writes nothing; a page that is not empty never
 * looks the group up; a key of the earlier version counts again; the box
 * checks at the exact end of a subscription. Through the routes in memory,
 * with command monitoring on the test database.
 */
import { createHash } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { beforeEach, describe, expect, it } from "vitest";
import { CounteragentService } from "../../gen/docflow/api/v1/counteragents_pb";
import { SubscriptionService } from "../../gen/docflow/api/v1/subscriptions_pb";
import { openBox } from "../../src/domain/box-access";
import { decodeIndexKey } from "../../src/domain/index-key";
import { loadFixture } from "../../src/fixtures/load";
import { CommandRecorder, describeCommand } from "../support/commands";
import { fixture as counteragentFixture } from "../support/counteragents";
import { authHeader, BOX, baseFixture, ENDED_BOX, USERS } from "../support/fixture";
import { useInMemory } from "../support/harness";
import { call, expectOk } from "../support/protocols";

const recorder = new CommandRecorder();
const h = useInMemory(baseFixture, { onCommand: recorder.listener });
beforeEach(async () => {
  await loadFixture(h.db, baseFixture());
});

const subs = SubscriptionService.method;
const update = (userId: string, changes: [string, boolean][], as = authHeader("admin")) =>
  call(
    h,
    "in-memory",
    subs.updateSubscriptions,
    create(subs.updateSubscriptions.input, {
      boxId: BOX,
      userId,
      subscriptions: {
        Subscriptions: changes.map(([Id, IsSubscribed]) => ({ Id, IsSubscribed })),
      },
    }),
    as,
  );

describe("UpdateSubscriptions", () => {
  it("an empty list changes nothing and writes nothing: the current state, from one read", async () => {
    const { result, commands } = await recorder.during(() => update(USERS.clerk.userId, []));
    expect(expectOk(result).Subscriptions.find((s) => s.Id === "News")?.IsSubscribed).toBe(false);
    expect(commands.map(describeCommand).filter((c) => !c.startsWith("find"))).toEqual([]);
  });

  it("an empty list for someone else's subscriptions by a non-administrator: 403 all the same", async () => {
    expect(await update(USERS.colleague.userId, [], authHeader("clerk"))).toMatchObject({
      status: 403,
      message: "only an administrator of the box or the employee himself may do this",
    });
  });

  it("an unknown employee: 404, with its words, for an empty list too", async () => {
    for (const changes of [[], [["News", true]]] as [string, boolean][][]) {
      expect(await update("u-nobody", changes)).toEqual({
        ok: false,
        status: 404,
        errorCode: "Employee.NotFound",
        message: 'the box has no employee "u-nobody"',
      });
    }
  });

  it("the words of a bad list: an unknown Id (cut to 64 characters), a repeated one", async () => {
    expect(await update(USERS.clerk.userId, [["W".repeat(100), true]])).toEqual({
      ok: false,
      status: 400,
      errorCode: "Subscriptions.UnknownId",
      message: `unknown subscription Id "${"W".repeat(64)}"`,
    });
    expect(
      await update(USERS.clerk.userId, [
        ["News", true],
        ["News", true],
      ]),
    ).toEqual({
      ok: false,
      status: 400,
      errorCode: "Subscriptions.DuplicateId",
      message: 'subscription Id "News" is listed twice',
    });
  });

  it("an employee removed between the write and the read back: 404", async () => {
    // The write matches nobody: the employee is gone before it.
    await h.db.collection("employees").deleteOne({ boxId: BOX, userId: USERS.colleague.userId });
    expect(await update(USERS.colleague.userId, [["News", false]])).toMatchObject({
      status: 404,
      errorCode: "Employee.NotFound",
    });
  });
});

describe("box checks", () => {
  it("a subscription ends at its exact instant: 402 from then on, not a millisecond before", async () => {
    const ended = await h.db.collection("boxes").findOne({ _id: ENDED_BOX as never });
    const end = (ended?.apiSubscriptionEndsAt as Date | undefined)?.getTime() ?? Number.NaN;
    expect(Number.isFinite(end)).toBe(true);
    const deps = (now: number) => ({ ...h.deps, now: () => new Date(now) });
    const caller = { userId: USERS.clerk.userId };
    await expect(openBox(deps(end - 1), caller, ENDED_BOX)).resolves.toMatchObject({
      box: { boxId: ENDED_BOX },
    });
    await expect(openBox(deps(end), caller, ENDED_BOX)).rejects.toMatchObject({
      errorCode: "Http.PaymentRequired",
    });
  });

  it("a caller without access to the box: 403 with its words", async () => {
    expect(
      await call(
        h,
        "in-memory",
        subs.getSubscriptions,
        create(subs.getSubscriptions.input, { boxId: BOX, userId: USERS.admin.userId }),
        authHeader("outsider"),
      ),
    ).toEqual({
      ok: false,
      status: 403,
      errorCode: "Http.Forbidden",
      message: "access to the box is forbidden for this token",
    });
  });
});

describe("GetCounteragentsFromGroup", () => {
  const list = CounteragentService.method.getCounteragentsFromGroup;
  const page = (group: string, options: { count?: number; after?: string } = {}) =>
    call(
      h,
      "in-memory",
      list,
      create(list.input, {
        boxId: "b2000000-0000-4000-8000-000000000001",
        counteragentGroupId: group,
        ...(options.count === undefined ? {} : { count: options.count }),
        ...(options.after === undefined ? {} : { afterIndexKey: options.after }),
      }),
      "ServiceAuth svcauth_api_client_id=test-api-key, svcauth_token=admin-token",
    );
  beforeEach(async () => {
    await loadFixture(h.db, counteragentFixture());
  });

  it("a page that is not empty never looks the group up; an empty page does", async () => {
    const full = await recorder.during(() => page("group-big", { count: 3 }));
    expect(expectOk(full.result).CounteragentBoxId).toHaveLength(3);
    expect(full.commands.map(describeCommand)).not.toContain("find counteragentGroups");
    const empty = await recorder.during(() => page("group-empty"));
    expect(expectOk(empty.result).CounteragentBoxId).toEqual([]);
    expect(empty.commands.map(describeCommand)).toContain("find counteragentGroups");
  });

  it("the key is the last item's position, and the walk's total", async () => {
    const first = expectOk(await page("group-big", { count: 3 }));
    const key = decodeIndexKey(
      { boxId: "b2000000-0000-4000-8000-000000000001", counteragentGroupId: "group-big" },
      first.AfterIndexKey,
    );
    expect(key.position.counteragentBoxId).toBe(first.CounteragentBoxId[2]);
    expect(key.totalCount).toBe(250);
  });

  it("a later page of a walk reads its page only; a key of the earlier version (no total) counts again", async () => {
    const first = expectOk(await page("group-big", { count: 3 }));
    const later = await recorder.during(() =>
      page("group-big", { count: 3, after: first.AfterIndexKey }),
    );
    expect(expectOk(later.result).TotalCount).toBe(250);
    expect(later.commands.map(describeCommand)).toEqual(["find counteragents"]);
    // The same position in a version 1 key: no total in it.
    const scope = {
      boxId: "b2000000-0000-4000-8000-000000000001",
      counteragentGroupId: "group-big",
    };
    const { position } = decodeIndexKey(scope, first.AfterIndexKey);
    const payload = Buffer.concat([
      Buffer.from([1]),
      Buffer.alloc(8),
      Buffer.from(position.counteragentBoxId),
    ]);
    payload.writeBigInt64BE(BigInt(position.joinedGroupAt.getTime()), 1);
    const check = createHash("sha256")
      .update(`${scope.boxId}\u0000${scope.counteragentGroupId}\u0000`, "utf8")
      .update(payload)
      .digest()
      .subarray(0, 6);
    const v1 = Buffer.concat([payload, check]).toString("base64url");
    const again = await recorder.during(() => page("group-big", { count: 3, after: v1 }));
    expect(expectOk(again.result).CounteragentBoxId).toEqual(
      expectOk(later.result).CounteragentBoxId,
    );
    expect(expectOk(again.result).TotalCount).toBe(250);
    // Counted again, and the members' listing keys looked at first (an earlier layout may lack them).
    expect(again.commands.map(describeCommand).filter((c) => c !== "find counteragents")).toEqual([
      "aggregate counteragents",
    ]);
    expect(again.commands.filter((c) => c.name === "find")).toHaveLength(2);
  });

  it("an empty afterIndexKey is absent: the first page", async () => {
    expect(expectOk(await page("group-big", { count: 2, after: "" })).CounteragentBoxId).toEqual(
      expectOk(await page("group-big", { count: 2 })).CounteragentBoxId,
    );
  });

  it("count 1 and 100 are pages; 0 and 101 are refused with their words", async () => {
    expect(expectOk(await page("group-big", { count: 1 })).CounteragentBoxId).toHaveLength(1);
    expect(expectOk(await page("group-big", { count: 100 })).CounteragentBoxId).toHaveLength(100);
    for (const count of [0, 101]) {
      expect(await page("group-big", { count })).toEqual({
        ok: false,
        status: 400,
        errorCode: "Http.BadRequest",
        message: "count must be an integer from 1 to 100",
      });
    }
  });

  it("an unknown group: 404 with its words", async () => {
    expect(await page("group-nope")).toEqual({
      ok: false,
      status: 404,
      errorCode: "CounteragentGroup.NotFound",
      message: 'the box has no counteragent group "group-nope"',
    });
  });

  it("a caller without the rights: 403 with its words", async () => {
    expect(
      await call(
        h,
        "in-memory",
        list,
        create(list.input, {
          boxId: "b2000000-0000-4000-8000-000000000001",
          counteragentGroupId: "group-big",
        }),
        "ServiceAuth svcauth_api_client_id=test-api-key, svcauth_token=adminOnly-token",
      ),
    ).toEqual({
      ok: false,
      status: 403,
      errorCode: "Http.Forbidden",
      message:
        "only an administrator of the box with CanManageCounteragents may list counteragents",
    });
  });
});
