/** docs/api.md §8: the fixture loader and its checks (the npm scripts: test/process/fixture-tools.test.ts). */
import { type Db, MongoClient } from "mongodb";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { demoFixture } from "../../src/fixtures/demo";
import { FixtureError, parseFixture } from "../../src/fixtures/fixture";
import { loadFixture } from "../../src/fixtures/load";
import { Collections } from "../../src/storage/collections";
import { startTestDatabase, type TestDatabase } from "../support/database";
import { baseFixture, HEAD } from "../support/fixture";

let testDb: TestDatabase;
let client: MongoClient;
let db: Db;

beforeAll(async () => {
  testDb = await startTestDatabase();
  client = new MongoClient(testDb.uri);
  db = client.db(testDb.name);
});
afterAll(async () => {
  await client?.close();
  await testDb?.close();
});
beforeEach(async () => {
  for (const name of Object.values(Collections)) await db.collection(name).deleteMany({});
});

async function totalDocuments(): Promise<number> {
  let n = 0;
  for (const name of Object.values(Collections)) n += await db.collection(name).countDocuments({});
  return n;
}

const box = (extra: Record<string, unknown>) => ({
  apiClients: [{ apiKey: "k" }],
  users: [{ userId: "u1", tokens: [{ token: "t1" }] }],
  boxes: [{ boxId: "b1", departments: [{ departmentId: "d1" }], ...extra }],
});

describe("a good fixture loads, with defaults for omitted fields", () => {
  it("writes every entry, secrets only as hashes", async () => {
    const before = Date.now();
    await loadFixture(
      db,
      box({
        employees: [{ userId: "u1" }],
        counteragentGroups: [{ counteragentGroupId: "g1", name: "Partners" }],
        counteragents: [
          { counteragentBoxId: "c1" },
          { counteragentBoxId: "c2", counteragentGroupId: "g1", status: "InvitesMe" },
        ],
        messages: [{ messageId: "m1", documents: [{ documentId: "doc1", departmentId: "d1" }] }],
      }),
    );
    expect(await db.collection("apiClients").countDocuments({})).toBe(1);
    const apiClient = await db.collection("apiClients").findOne({});
    expect(apiClient).toMatchObject({ enabled: true });
    expect(JSON.stringify(apiClient)).not.toContain('"k"');
    const token = await db.collection("tokens").findOne({});
    expect(token?._id).toMatch(/^[0-9a-f]{64}$/);
    const expiresIn = new Date(token?.expiresAt).getTime() - before;
    expect(expiresIn).toBeGreaterThan(23.9 * 3600_000);
    expect(expiresIn).toBeLessThan(24.1 * 3600_000);
    expect(await db.collection("employees").findOne({ userId: "u1" })).toMatchObject({
      isAdministrator: false,
      canManageCounteragents: false,
      canDeleteRestoreDocuments: false,
      documentAccessLevel: "DepartmentOnly",
      userDepartmentId: HEAD,
      selectedDepartmentIds: [],
      subscriptions: {},
    });
    expect(await db.collection("counteragents").findOne({ counteragentBoxId: "c1" })).toMatchObject(
      {
        status: "IsMyCounteragent",
        counteragentGroupId: HEAD,
      },
    );
    expect(await db.collection("messages").findOne({ messageId: "m1" })).toMatchObject({
      kind: "Message",
      isDeleted: false,
    });
  });

  it("loading the same fixture twice changes nothing", async () => {
    await loadFixture(db, baseFixture());
    const once = await totalDocuments();
    await loadFixture(db, baseFixture());
    expect(await totalDocuments()).toBe(once);
  });

  it("groups are ordinary groups: a name (by default the id), a name key, departments, a creation time a reload keeps", async () => {
    const fixture = box({
      counteragentGroups: [
        { counteragentGroupId: "g1", name: " Partners " },
        { counteragentGroupId: "g2", departmentIds: ["d1", "d1"] },
        { counteragentGroupId: "g3", name: "Old", createdAt: "2025-01-01T00:00:00Z" },
      ],
    });
    const before = Date.now();
    await loadFixture(db, fixture);
    const groups = db.collection("counteragentGroups");
    const g1 = await groups.findOne({ counteragentGroupId: "g1" });
    expect(g1).toMatchObject({ boxId: "b1", name: "Partners", nameKey: "partners" });
    expect(g1?.departmentIds).toBeUndefined();
    expect(new Date(g1?.createdAt).getTime()).toBeGreaterThanOrEqual(before);
    expect(await groups.findOne({ counteragentGroupId: "g2" })).toMatchObject({
      name: "g2",
      departmentIds: ["d1"],
    });
    expect((await groups.findOne({ counteragentGroupId: "g3" }))?.createdAt).toEqual(
      new Date("2025-01-01T00:00:00Z"),
    );
    await loadFixture(db, fixture);
    expect((await groups.findOne({ counteragentGroupId: "g1" }))?.createdAt).toEqual(g1?.createdAt);
  });

  it("the demo fixture is valid", () => {
    expect(() => parseFixture(demoFixture)).not.toThrow();
  });
});

describe("a fixture that breaks a rule is rejected, naming the entry, and nothing is written", () => {
  it.each([
    ["not an object", [], /fixture: must be an object/],
    [
      "unknown department of an employee",
      box({ employees: [{ userId: "u1", userDepartmentId: "nope" }] }),
      /boxes\[0\] \(boxId "b1"\)\.employees\[0\] \(userId "u1"\): userDepartmentId "nope" is not a department/,
    ],
    [
      "unknown selected department",
      box({ employees: [{ userId: "u1", selectedDepartmentIds: ["d1", "d9"] }] }),
      /selectedDepartmentIds "d9"/,
    ],
    [
      "unknown department of a document",
      box({
        messages: [{ messageId: "m1", documents: [{ documentId: "x", departmentId: "d9" }] }],
      }),
      /documents\[0\] \(documentId "x"\): departmentId "d9"/,
    ],
    [
      "unknown parent department",
      box({ departments: [{ departmentId: "d1", parentDepartmentId: "d0" }] }),
      /departments\[0\] \(departmentId "d1"\): parentDepartmentId "d0"/,
    ],
    [
      "department cycle",
      box({
        departments: [
          { departmentId: "d1", parentDepartmentId: "d2" },
          { departmentId: "d2", parentDepartmentId: "d1" },
        ],
      }),
      /cycle/,
    ],
    [
      "marked message with an unmarked document",
      box({
        messages: [
          {
            messageId: "m1",
            isDeleted: true,
            documents: [{ documentId: "x", isDeleted: true }, { documentId: "y" }],
          },
        ],
      }),
      /messages\[0\] \(messageId "m1"\)\.documents\[1\] \(documentId "y"\): a deleted message cannot hold a document that is not deleted/,
    ],
    [
      "duplicate boxId",
      { boxes: [{ boxId: "b1" }, { boxId: "b1" }] },
      /boxes\[1\] \(boxId "b1"\): duplicate boxId "b1"/,
    ],
    [
      "duplicate userId",
      { users: [{ userId: "u1" }, { userId: "u1" }] },
      /users\[1\] \(userId "u1"\): duplicate userId/,
    ],
    [
      "duplicate token",
      {
        users: [
          { userId: "u1", tokens: [{ token: "t" }] },
          { userId: "u2", tokens: [{ token: "t" }] },
        ],
      },
      /users\[1\] \(userId "u2"\)\.tokens\[0\]: duplicate token/,
    ],
    [
      "duplicate apiKey",
      { apiClients: [{ apiKey: "k" }, { apiKey: "k" }] },
      /apiClients\[1\]: duplicate apiKey/,
    ],
    [
      "duplicate employee",
      box({ employees: [{ userId: "u1" }, { userId: "u1" }] }),
      /employees\[1\] \(userId "u1"\): duplicate employee userId/,
    ],
    [
      "duplicate message",
      box({ messages: [{ messageId: "m" }, { messageId: "m" }] }),
      /messages\[1\] \(messageId "m"\): duplicate messageId/,
    ],
    [
      "duplicate document",
      box({
        messages: [{ messageId: "m", documents: [{ documentId: "x" }, { documentId: "x" }] }],
      }),
      /duplicate documentId "x"/,
    ],
    [
      "duplicate counteragent",
      box({ counteragents: [{ counteragentBoxId: "c" }, { counteragentBoxId: "c" }] }),
      /counteragents\[1\] \(counteragentBoxId "c"\): duplicate/,
    ],
    [
      "unknown group",
      box({ counteragents: [{ counteragentBoxId: "c", counteragentGroupId: "g9" }] }),
      /counteragentGroupId "g9" is not a group/,
    ],
    [
      "duplicate group name, compared case-insensitively",
      box({
        counteragentGroups: [
          { counteragentGroupId: "g1", name: "Partners" },
          { counteragentGroupId: "g2", name: " PARTNERS" },
        ],
      }),
      /counteragentGroups\[1\] \(counteragentGroupId "g2"\): duplicate group name "PARTNERS"/,
    ],
    [
      "blank group name",
      box({ counteragentGroups: [{ counteragentGroupId: "g1", name: "  " }] }),
      /counteragentGroups\[0\] \(counteragentGroupId "g1"\): Name must be 1 to 100 characters/,
    ],
    [
      "unknown department of a group",
      box({ counteragentGroups: [{ counteragentGroupId: "g1", departmentIds: ["d1", "d9"] }] }),
      /counteragentGroups\[0\] \(counteragentGroupId "g1"\): departmentIds "d9" is not a department/,
    ],
    [
      "unknown status",
      box({ counteragents: [{ counteragentBoxId: "c", status: "Friends" }] }),
      /status must be one of IsMyCounteragent/,
    ],
    [
      "unknown access level",
      box({ employees: [{ userId: "u1", documentAccessLevel: "Some" }] }),
      /documentAccessLevel must be one of/,
    ],
    [
      "unknown subscription Id",
      box({ employees: [{ userId: "u1", subscriptions: { Weather: true } }] }),
      /unknown subscription Id "Weather"/,
    ],
    [
      "bad date",
      { users: [{ userId: "u1", tokens: [{ token: "t", expiresAt: "soon" }] }] },
      /expiresAt must be an ISO 8601 date-time/,
    ],
    [
      "missing id",
      { boxes: [{ organizationName: "x" }] },
      /boxes\[0\]: boxId must be a non-empty string/,
    ],
    [
      "wrong type",
      box({ employees: [{ userId: "u1", isAdministrator: "yes" }] }),
      /isAdministrator must be true or false/,
    ],
  ])("%s", async (_name, fixture, message) => {
    const error = await loadFixture(db, fixture).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(FixtureError);
    expect((error as Error).message).toMatch(message);
    expect(await totalDocuments()).toBe(0);
  });
});
