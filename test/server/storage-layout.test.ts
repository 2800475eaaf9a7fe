/**
 * Start-up against existing databases (docs/api.md §7: indexes created idempotently):
 * twice against the same database, and against one written by the earlier
 * layout (the listing index on joinedGroupAt and counteragentBoxId, members
 * without listingKey). Unique indexes against the shard keys.
 */
import { createHash } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { MongoClient } from "mongodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CounteragentService } from "../../gen/docflow/api/v1/counteragents_pb";
import type { CounteragentFromGroupResponse } from "../../gen/docflow/legacy/counteragents_pb";
import {
  Collections,
  INDEXES,
  IndexNames,
  RETIRED_INDEXES,
  SHARD_KEYS,
} from "../../src/storage/collections";
import { type CounteragentDocument, giveListingKeys } from "../../src/storage/counteragent-store";
import { openDatabase } from "../../src/storage/database";
import { listingKeyOf } from "../../src/storage/listing-key";
import { startTestDatabase, type TestDatabase } from "../support/database";
import { KEY } from "../support/fixture";
import { type Harness, startHarness, TEST_CACHE, TEST_TIMEOUTS } from "../support/harness";
import { call, expectOk } from "../support/protocols";

const BOX = "b8000000-0000-4000-8000-000000000001";
const OLD = "g-old";
const AUTH = `ServiceAuth svcauth_api_client_id=${KEY}, svcauth_token=admin-token`;
const BASE = Date.UTC(2025, 5, 1);
/** Members as the earlier version wrote them: no listingKey; ten share each time. */
const OLD_MEMBERS = Array.from({ length: 30 }, (_, i) => ({
  boxId: BOX,
  counteragentBoxId: `old-${String((i * 17) % 30).padStart(2, "0")}`,
  counteragentGroupId: OLD,
  status: "IsMyCounteragent",
  joinedGroupAt: new Date(BASE + Math.floor(i / 10) * 60_000),
}));
const OLD_ORDER = [...OLD_MEMBERS]
  .sort(
    (a, b) =>
      a.joinedGroupAt.getTime() - b.joinedGroupAt.getTime() ||
      (a.counteragentBoxId < b.counteragentBoxId ? -1 : 1),
  )
  .map((m) => m.counteragentBoxId);

function fixture() {
  return {
    apiClients: [{ apiKey: KEY }],
    users: [{ userId: "u-admin", tokens: [{ token: "admin-token" }] }],
    boxes: [
      {
        boxId: BOX,
        employees: [{ userId: "u-admin", isAdministrator: true, canManageCounteragents: true }],
        counteragentGroups: [{ counteragentGroupId: OLD, name: "Old" }],
      },
    ],
  };
}

const listIndexes = async (uri: string, name: string, collection: string) => {
  const client = new MongoClient(uri);
  try {
    return await client.db(name).collection(collection).listIndexes().toArray();
  } finally {
    await client.close();
  }
};

describe("start-up twice against the same database", () => {
  let testDb: TestDatabase;
  beforeAll(async () => {
    testDb = await startTestDatabase();
  });
  afterAll(async () => {
    await testDb?.close();
  });

  it("the second start (and a third, concurrent with it) creates nothing new and fails nothing", async () => {
    const open = () =>
      openDatabase({ uri: testDb.uri, name: testDb.name, operationTimeoutMs: 5_000 });
    const first = await open();
    await first.close();
    const [second, third] = await Promise.all([open(), open()]);
    await Promise.all([second.close(), third.close()]);
    for (const [collection, indexes] of Object.entries(INDEXES)) {
      const names = (await listIndexes(testDb.uri, testDb.name, collection)).map((i) => i.name);
      expect(names.sort()).toEqual(["_id_", ...indexes.map((i) => i.name)].sort());
    }
  });
});

describe("start-up against a database written by the earlier layout", () => {
  let testDb: TestDatabase;
  let h: Harness;
  beforeAll(async () => {
    testDb = await startTestDatabase();
    // The earlier version's start-up and writes: its listing index, members without listingKey.
    const client = new MongoClient(testDb.uri);
    try {
      const counteragents = client.db(testDb.name).collection(Collections.counteragents);
      await counteragents.createIndexes([
        { key: { boxId: 1, counteragentBoxId: 1 }, name: "boxId_counteragentBoxId", unique: true },
        {
          key: {
            boxId: 1,
            counteragentGroupId: 1,
            status: 1,
            joinedGroupAt: 1,
            counteragentBoxId: 1,
          },
          name: "group_listing",
        },
      ]);
      await counteragents.insertMany(OLD_MEMBERS.map((m) => ({ ...m })));
    } finally {
      await client.close();
    }
    h = await startHarness(fixture(), TEST_TIMEOUTS, TEST_CACHE, { database: testDb });
  });
  afterAll(async () => {
    await h?.close();
    await testDb?.close();
  });

  const page = (after?: string, count = 7) =>
    call(
      h,
      "legacy-protobuf",
      CounteragentService.method.getCounteragentsFromGroup,
      create(CounteragentService.method.getCounteragentsFromGroup.input, {
        boxId: BOX,
        counteragentGroupId: OLD,
        count,
        ...(after ? { afterIndexKey: after } : {}),
      }),
      AUTH,
    );

  it("starts: the new listing index is created beside the retired one, which stays for old instances", async () => {
    const names = (await listIndexes(testDb.uri, testDb.name, Collections.counteragents)).map(
      (i) => i.name,
    );
    expect(names).toContain(IndexNames.groupListing);
    expect(names).toEqual(expect.arrayContaining([...(RETIRED_INDEXES.counteragents ?? [])]));
  });

  it("a key the earlier version issued (no TotalCount) continues its walk: recounted, in order, nothing skipped", async () => {
    // The earlier version served the first page; its key points after the 5th member.
    const fifth = OLD_MEMBERS.find((m) => m.counteragentBoxId === OLD_ORDER[4]);
    if (!fifth) throw new Error("no fifth member");
    const payload = Buffer.concat([
      Buffer.from([1]),
      Buffer.alloc(8),
      Buffer.from(fifth.counteragentBoxId),
    ]);
    payload.writeBigInt64BE(BigInt(fifth.joinedGroupAt.getTime()), 1);
    const check = createHash("sha256")
      .update(`${BOX}\u0000${OLD}\u0000`)
      .update(payload)
      .digest()
      .subarray(0, 6);
    const oldKey = Buffer.concat([payload, check]).toString("base64url");
    const seen: string[] = [];
    let after: string | undefined = oldKey;
    do {
      const response: CounteragentFromGroupResponse = expectOk(await page(after));
      expect(response.TotalCount).toBe(30);
      seen.push(...response.CounteragentBoxId);
      after = response.AfterIndexKey || undefined;
    } while (after !== undefined);
    expect(seen).toEqual(OLD_ORDER.slice(5));
  });

  it("a new walk lists the members in order, and they carry listing keys from then on", async () => {
    const seen: string[] = [];
    let after: string | undefined;
    do {
      const response: CounteragentFromGroupResponse = expectOk(await page(after));
      expect(response.TotalCount).toBe(30);
      seen.push(...response.CounteragentBoxId);
      after = response.AfterIndexKey || undefined;
    } while (after !== undefined);
    expect(seen).toEqual(OLD_ORDER);
    const stored = await h.db
      .collection<CounteragentDocument>(Collections.counteragents)
      .find({ boxId: BOX })
      .toArray();
    for (const m of stored) expect(m.listingKey).toBe(listingKeyOf(m));
  });

  it("members another writer adds without a listing key show on the next walk", async () => {
    await h.db.collection(Collections.counteragents).insertOne({
      boxId: BOX,
      counteragentBoxId: "platform-made",
      counteragentGroupId: OLD,
      status: "IsMyCounteragent",
      joinedGroupAt: new Date(BASE - 1),
    });
    const first = expectOk(await page(undefined, 2));
    expect(first.CounteragentBoxId).toEqual(["platform-made", OLD_ORDER[0]]);
    expect(first.TotalCount).toBe(31);
  });

  it("npm run backfill:listing-keys (giveListingKeys over the collection) keys every member, once", async () => {
    const counteragents = h.db.collection<CounteragentDocument>(Collections.counteragents);
    await counteragents.updateMany({ boxId: BOX }, { $unset: { listingKey: "" } });
    expect(await giveListingKeys(counteragents)).toBe(31);
    expect(await giveListingKeys(counteragents)).toBe(0);
    expect(await counteragents.countDocuments({ boxId: BOX, listingKey: null })).toBe(0);
  });
});

describe("shard keys (docs/api.md §7)", () => {
  it("every unique index of a sharded collection starts with its shard key", () => {
    for (const [collection, shardKey] of Object.entries(SHARD_KEYS)) {
      const unique = (INDEXES[collection] ?? []).filter((i) => i.unique);
      expect(unique.length, collection).toBeGreaterThan(0);
      for (const index of unique) {
        const fields = Object.keys(index.key as Record<string, number>);
        expect(
          fields.slice(0, Object.keys(shardKey).length),
          `${collection}.${index.name}`,
        ).toEqual(Object.keys(shardKey));
      }
    }
  });
  it("every shard key starts with boxId, and the small collections stay unsharded", () => {
    for (const key of Object.values(SHARD_KEYS)) expect(Object.keys(key)[0]).toBe("boxId");
    expect(Object.keys(SHARD_KEYS).sort()).toEqual(
      [
        Collections.counteragentGroups,
        Collections.counteragents,
        Collections.employees,
        Collections.messages,
      ].sort(),
    );
  });
});
