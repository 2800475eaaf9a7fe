/** docs/api.md §8 as processes: `npm run fixture:big` and `npm run seed` (the loader: test/in-memory/fixtures.test.ts). */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { type Db, MongoClient } from "mongodb";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { parseFixture } from "../../src/fixtures/fixture";
import { Collections } from "../../src/storage/collections";
import { startTestDatabase, type TestDatabase } from "../support/database";

const run = promisify(execFile);
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

describe("npm run fixture:big", () => {
  it("writes a valid fixture with one group of N IsMyCounteragent members", async () => {
    const dir = await mkdtemp(join(tmpdir(), "big-"));
    const file = join(dir, "big.json");
    const { stdout } = await run("node", [
      "--import",
      "tsx",
      "scripts/big-fixture.ts",
      "--members",
      "50",
      "--out",
      file,
    ]);
    expect(stdout).toMatch(/50 members/);
    const data = parseFixture(JSON.parse(await readFile(file, "utf8")));
    expect(data.counteragents).toHaveLength(50);
    expect(new Set(data.counteragents.map((c) => c.counteragentGroupId))).toEqual(
      new Set(["group-50"]),
    );
    expect(data.counteragents.every((c) => c.status === "IsMyCounteragent")).toBe(true);
    expect(data.employees[0]).toMatchObject({
      isAdministrator: true,
      canManageCounteragents: true,
    });
  });
});

describe("npm run seed", () => {
  const env = () => ({ ...process.env, MONGODB_URI: testDb.uri, MONGODB_DB: testDb.name });

  it("loads a good fixture file into the database MONGODB_URI names", async () => {
    const dir = await mkdtemp(join(tmpdir(), "seed-"));
    const file = join(dir, "good.json");
    await writeFile(file, JSON.stringify(box({ employees: [{ userId: "u1" }] })));
    const { stdout } = await run("node", ["--import", "tsx", "scripts/seed.ts", file], {
      env: env(),
    });
    expect(stdout).toMatch(/loaded .*good\.json/);
    expect(await db.collection("employees").countDocuments({ boxId: "b1" })).toBe(1);
  });

  it("rejects a bad fixture file with the entry named, exit code 1, nothing written", async () => {
    const dir = await mkdtemp(join(tmpdir(), "seed-"));
    const file = join(dir, "bad.json");
    await writeFile(
      file,
      JSON.stringify(box({ employees: [{ userId: "u1", userDepartmentId: "nope" }] })),
    );
    const error = await run("node", ["--import", "tsx", "scripts/seed.ts", file], {
      env: env(),
    }).then(
      () => undefined,
      (e: { code: number; stderr: string }) => e,
    );
    expect(error?.code).toBe(1);
    expect(error?.stderr).toMatch(
      /fixture rejected, nothing written: .*employees\[0\] \(userId "u1"\)/,
    );
    expect(await totalDocuments()).toBe(0);
  });

  it("without MONGODB_URI it explains what to do instead", async () => {
    const { MONGODB_URI: _, ...rest } = process.env;
    const error = await run("node", ["--import", "tsx", "scripts/seed.ts", "x.json"], {
      env: rest,
    }).then(
      () => undefined,
      (e: { code: number; stderr: string }) => e,
    );
    expect(error?.code).toBe(2);
    expect(error?.stderr).toMatch(/MONGODB_URI must name the database to seed/);
  });
});
