/**
 * `npm run fixture:big -- --members 100000 [--out file.json] [--load]`:
 * a box with one counteragent group of N members (IsMyCounteragent, joined
 * one second apart), for tests and benchmarks. Writes a fixture file, or with
 * --load inserts the data straight into the MongoDB at MONGODB_URI.
 */
import { writeFile } from "node:fs/promises";
import type { Db } from "mongodb";
import { loadConfig } from "../src/config";
import { LOAD_ROUND_TRIP_MS, loadFixture } from "../src/fixtures/load";
import { Collections } from "../src/storage/collections";
import { openDatabase } from "../src/storage/database";
import { listingKeyOf } from "../src/storage/listing-key";
import { commandLine } from "./cli";

export const BIG = {
  apiKey: "bench-api-key",
  token: "bench-admin-token",
  userId: "bench-admin",
  boxId: "b1b1b1b1-0000-4000-8000-000000000001",
  groupId: (members: number) => `group-${members}`,
} as const;

const START = Date.parse("2025-01-01T00:00:00Z");

/** The box, its administrator and the (empty) groups; members come separately. */
export function bigBoxFixture(groupSizes: readonly number[]) {
  return {
    apiClients: [{ apiKey: BIG.apiKey, name: "Benchmark" }],
    users: [
      { userId: BIG.userId, tokens: [{ token: BIG.token, expiresAt: "2099-01-01T00:00:00Z" }] },
    ],
    boxes: [
      {
        boxId: BIG.boxId,
        organizationName: "Benchmark Org",
        employees: [{ userId: BIG.userId, isAdministrator: true, canManageCounteragents: true }],
        counteragentGroups: groupSizes.map((n) => ({
          counteragentGroupId: BIG.groupId(n),
          name: `${n} members`,
        })),
      },
    ],
  };
}

/** Member i of a group of `members`: ids sort differently from join order. */
export function bigMember(members: number, i: number) {
  return {
    counteragentBoxId: `ca-${members}-${String((i * 7919) % members).padStart(7, "0")}-${i}`,
    counteragentGroupId: BIG.groupId(members),
    status: "IsMyCounteragent" as const,
    joinedGroupAt: new Date(START + i * 1000),
  };
}

/** Inserts the box, then the members in batches, straight through the driver, with their listing keys. */
export async function loadBigGroups(db: Db, groupSizes: readonly number[]): Promise<void> {
  await loadFixture(db, bigBoxFixture(groupSizes));
  const collection = db.collection(Collections.counteragents);
  for (const members of groupSizes) {
    for (let from = 0; from < members; from += 1000) {
      const batch = [];
      for (let i = from; i < Math.min(members, from + 1000); i++) {
        const member = bigMember(members, i);
        batch.push({ boxId: BIG.boxId, ...member, listingKey: listingKeyOf(member) });
      }
      await collection.insertMany(batch, { ordered: false });
    }
  }
}

const USAGE = `usage: npm run fixture:big -- --members N [--out file.json] [--load]

Writes a fixture with one box whose group has N members (default file
big-fixture-N.json), to load with SEED_FILE=<file> npm start or npm run seed.
--load writes the members straight into the MongoDB at MONGODB_URI instead.`;

function parseArgs(argv: string[]): { members: number; out: string | undefined; load: boolean } {
  commandLine({ text: USAGE, options: ["--members", "--out", "--load"] }, argv);
  const at = (flag: string) => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const members = Number(at("--members"));
  if (!Number.isSafeInteger(members) || members < 1) {
    // A usage error, as every tool reports one: the usage, exit 2.
    process.stderr.write(`--members needs a whole number of 1 or more\n\n${USAGE}\n`);
    process.exit(2);
  }
  return { members, out: at("--out"), load: argv.includes("--load") };
}

async function main(): Promise<void> {
  const { members, out, load } = parseArgs(process.argv.slice(2));
  if (load) {
    const config = loadConfig();
    if (!config.mongodbUri) throw new Error("--load needs MONGODB_URI");
    const database = await openDatabase({
      uri: config.mongodbUri,
      name: config.mongodbDatabase,
      operationTimeoutMs: config.timeouts.databaseMs,
    });
    try {
      await database.withLongOperations(LOAD_ROUND_TRIP_MS, (db) => loadBigGroups(db, [members]));
    } finally {
      await database.close();
    }
    process.stdout.write(
      `loaded ${members} members into group ${BIG.groupId(members)} of box ${BIG.boxId}\n`,
    );
    return;
  }
  const fixture = bigBoxFixture([members]);
  const box = fixture.boxes[0];
  const file = out ?? `big-fixture-${members}.json`;
  const counteragents = Array.from({ length: members }, (_, i) => {
    const m = bigMember(members, i);
    return { ...m, joinedGroupAt: m.joinedGroupAt.toISOString() };
  });
  await writeFile(file, JSON.stringify({ ...fixture, boxes: [{ ...box, counteragents }] }));
  process.stdout.write(
    `wrote ${file}: box ${BIG.boxId}, group ${BIG.groupId(members)}, ${members} members\n`,
  );
}

if (process.argv[1]?.endsWith("big-fixture.ts")) {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
