/**
 * Every operation checks its request before it reads or writes anything:
 * the storage handed in here throws at the first touch, so a refusal that
 * comes back is one made from the request alone, and it names the field a
 * client has to fix.
 */
import { describe, expect, it } from "vitest";
import {
  addCounteragentToGroup,
  createCounteragentGroup,
  deleteCounteragentGroup,
  getCounteragentGroup,
  getCounteragentGroups,
  updateCounteragentGroup,
} from "../../src/domain/counteragent-groups";
import { getCounteragentsFromGroup } from "../../src/domain/counteragents";
import { deleteMarks, restore } from "../../src/domain/deletion-marks";
import { DomainError, ErrorKind } from "../../src/domain/errors";
import type { Caller } from "../../src/domain/model";
import { getSubscriptions, updateSubscriptions } from "../../src/domain/subscriptions";

/** Storage that must not be reached: any property read throws. */
const untouched = new Proxy(
  {},
  {
    get(_target, name) {
      throw new Error(`storage reached (${String(name)}) before the request was checked`);
    },
  },
  // biome-ignore lint/suspicious/noExplicitAny: one stand-in for every operation's dependencies
) as any;
const caller: Caller = { userId: "u" };
const B = "b0000000-0000-4000-8000-000000000001";
const G = "g0000000-0000-4000-8000-000000000001";

async function refusal(call: () => Promise<unknown>): Promise<{ kind: string; message: string }> {
  try {
    await call();
  } catch (error) {
    if (error instanceof DomainError) return { kind: error.kind, message: error.message };
    throw error;
  }
  throw new Error("not refused");
}

const bad = (message: string) => ({ kind: ErrorKind.InvalidArgument, message });

describe("a request is checked before anything is read, and the refusal names the field", () => {
  it.each([
    [
      "CreateCounteragentGroup, no boxId",
      () => createCounteragentGroup(untouched, caller, { boxId: "", group: { name: "n" } }),
      "boxId is required",
    ],
    [
      "CreateCounteragentGroup, no group",
      () => createCounteragentGroup(untouched, caller, { boxId: B }),
      "the group to create is required",
    ],
    [
      "UpdateCounteragentGroup, no boxId",
      () => updateCounteragentGroup(untouched, caller, { boxId: " ", counteragentGroupId: G }),
      "boxId is required",
    ],
    [
      "UpdateCounteragentGroup, no group id",
      () => updateCounteragentGroup(untouched, caller, { boxId: B, counteragentGroupId: "" }),
      "counteragentGroupId is required",
    ],
    [
      "DeleteCounteragentGroup, no boxId",
      () => deleteCounteragentGroup(untouched, caller, { boxId: "", counteragentGroupId: G }),
      "boxId is required",
    ],
    [
      "DeleteCounteragentGroup, no group id",
      () => deleteCounteragentGroup(untouched, caller, { boxId: B, counteragentGroupId: "" }),
      "counteragentGroupId is required",
    ],
    [
      "GetCounteragentGroup, no boxId",
      () => getCounteragentGroup(untouched, caller, { boxId: "", counteragentGroupId: G }),
      "boxId is required",
    ],
    [
      "GetCounteragentGroups, no boxId",
      () => getCounteragentGroups(untouched, caller, { boxId: "" }),
      "boxId is required",
    ],
    [
      "GetCounteragentGroups, a page past 2^31-1",
      () => getCounteragentGroups(untouched, caller, { boxId: B, page: 2 ** 31 }),
      "page must be an integer from 1",
    ],
    [
      "GetCounteragentGroups, a page that is not an integer",
      () => getCounteragentGroups(untouched, caller, { boxId: B, page: 1.5 }),
      "page must be an integer from 1",
    ],
    [
      "AddCounteragentToGroup, no boxId",
      () =>
        addCounteragentToGroup(untouched, caller, {
          boxId: "",
          counteragentBoxId: B,
          counteragentGroupId: G,
        }),
      "boxId is required",
    ],
    [
      "AddCounteragentToGroup, no group id",
      () =>
        addCounteragentToGroup(untouched, caller, {
          boxId: B,
          counteragentBoxId: B,
          counteragentGroupId: "",
        }),
      "counteragentGroupId is required",
    ],
    [
      "GetCounteragentsFromGroup, no boxId",
      () =>
        getCounteragentsFromGroup(untouched, caller, {
          boxId: "",
          counteragentGroupId: G,
          count: undefined,
          afterIndexKey: undefined,
        }),
      "boxId is required",
    ],
    [
      "GetCounteragentsFromGroup, no group id",
      () =>
        getCounteragentsFromGroup(untouched, caller, {
          boxId: B,
          counteragentGroupId: "",
          count: undefined,
          afterIndexKey: undefined,
        }),
      "counteragentGroupId is required",
    ],
    [
      "GetSubscriptions, no boxId",
      () => getSubscriptions(untouched, caller, { boxId: "", userId: "u" }),
      "boxId is required",
    ],
    [
      "GetSubscriptions, no userId",
      () => getSubscriptions(untouched, caller, { boxId: B, userId: "" }),
      "userId is required",
    ],
    [
      "UpdateSubscriptions, no userId",
      () => updateSubscriptions(untouched, caller, { boxId: B, userId: "\t", changes: [] }),
      "userId is required",
    ],
    [
      "Restore, no boxId",
      () => restore(untouched, caller, { boxId: "", messageId: "m", documentId: undefined }),
      "boxId is required",
    ],
    [
      "Restore, no messageId",
      () => restore(untouched, caller, { boxId: B, messageId: "", documentId: undefined }),
      "messageId is required",
    ],
    [
      "Delete, a documentId that is not an identifier",
      () => deleteMarks(untouched, caller, { boxId: B, messageId: "m", documentId: "d\u0007" }),
      "documentId is not a valid identifier",
    ],
  ] as const)("%s: %s", async (_name, call, message) => {
    expect(await refusal(call)).toEqual(bad(message));
  });
});

describe("a Bearer token without the required scope", () => {
  it("is refused at the box, before the box is read: 403 insufficient scope", async () => {
    const scoped: Caller = { userId: "u", missingScope: "docflow" };
    expect(
      await refusal(() => getSubscriptions(untouched, scoped, { boxId: B, userId: "u" })),
    ).toEqual({
      kind: ErrorKind.PermissionDenied,
      message: "the access token lacks the required scope",
    });
  });
});
