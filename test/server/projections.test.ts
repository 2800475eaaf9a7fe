/**
 * Projections enforced (test/support/projection-guard.ts): the embedded
 * engine ignores a query's projection, so the stores every server-tier test
 * uses read through a guard that holds each answer to its projection, as a
 * real MongoDB does. Here: the guard does what a server does, on the
 * embedded engine and on MONGODB_URI alike, and a read of a field the query
 * did not project comes back without it.
 */
import { BSON, type Db, MongoClient } from "mongodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestDatabase, type TestDatabase } from "../support/database";
import { guardProjections, projected } from "../support/projection-guard";

let testDb: TestDatabase;
let client: MongoClient;
let db: Db;
beforeAll(async () => {
  testDb = await startTestDatabase();
  client = new MongoClient(testDb.uri);
  db = client.db(testDb.name);
  await db.collection("p").insertOne({
    _id: "x" as never,
    a: 1,
    secret: "s",
    departments: [
      { departmentId: "d1", name: "Sales", parentDepartmentId: "root" },
      { departmentId: "d2", name: "Accounting" },
      "not a subdocument",
    ],
    nested: { keep: 1, drop: 2 },
  });
});
afterAll(async () => {
  await client?.close();
  await testDb?.close();
});

describe("the projection guard answers as a real server does", () => {
  const projection = {
    _id: 0,
    a: 1,
    "departments.departmentId": 1,
    "departments.parentDepartmentId": 1,
    "nested.keep": 1,
  };
  const expected = {
    a: 1,
    departments: [{ departmentId: "d1", parentDepartmentId: "root" }, { departmentId: "d2" }],
    nested: { keep: 1 },
  };

  it("findOne, find, findOneAndUpdate and raw BSON: only the projected fields", async () => {
    const guarded = guardProjections(db).collection("p");
    expect(await guarded.findOne({ _id: "x" as never }, { projection })).toEqual(expected);
    expect(await guarded.find({}, { projection }).toArray()).toEqual([expected]);
    // findOneAndUpdate without a dotted path into an array: the embedded engine's
    // findAndModify drops such a path altogether (a real server keeps it), which no guard
    // can give back; no store of the service projects one there (docs/testing.md).
    expect(
      await guarded.findOneAndUpdate(
        { _id: "x" as never },
        { $set: { b: 2 } },
        { projection: { _id: 0, a: 1, "nested.keep": 1 }, returnDocument: "after" },
      ),
    ).toEqual({ a: 1, nested: { keep: 1 } });
    const [raw] = await guarded.find({}, { projection, raw: true }).toArray();
    expect(BSON.deserialize(raw as unknown as Uint8Array)).toEqual(expected);
  });

  it("whatever the server did with the projection, the guarded answer is the same as the server's own would be", async () => {
    // The embedded engine returns the whole document (a real server: the projection).
    const plain = await db.collection("p").findOne({ _id: "x" as never }, { projection });
    expect(projected(plain as never, projection)).toEqual(expected);
  });

  it("_id is kept unless excluded; an exclusion drops only what it names", async () => {
    const guarded = guardProjections(db).collection("p");
    expect(await guarded.findOne({}, { projection: { a: 1 } })).toEqual({ _id: "x", a: 1 });
    const excluded = await guarded.findOne({}, { projection: { secret: 0, "nested.drop": 0 } });
    expect(excluded).not.toHaveProperty("secret");
    expect(excluded).toMatchObject({ a: 1, nested: { keep: 1 } });
    expect(excluded?.nested).not.toHaveProperty("drop");
  });

  it("a read without a projection is the whole document", async () => {
    const whole = await guardProjections(db).collection("p").findOne({});
    expect(whole).toHaveProperty("secret", "s");
  });
});
