/**
 * Query plans on a real MongoDB (docs/api.md §6.2, §7): a page costs the same on a
 * group of 100 members and on one of 100,000, proven with `explain`.
 *
 * Runs only when MONGODB_URI names a MongoDB that explains (a mongod, a
 * replica set or a mongos); on the embedded engine, which answers explain
 * with "no such command", every test here is reported as skipped with that
 * reason (one line in the run's summary: test/support/summary-reporter.ts).
 *
 *   MONGODB_URI=mongodb://… npx vitest run --config test/vitest.config.ts test/server/query-plans.test.ts
 *
 * It seeds a group of 100,000 IsMyCounteragent members and one of 100, each
 * with members of other statuses interleaved and other groups beside it (so
 * a bound looser than the status or the group would show in the key counts),
 * drives the real service over its legacy paths, records every command the
 * driver sends (command monitoring), sends each again as explain with
 * executionStats (test/support/explain.ts reads the answer; the shapes it
 * reads are listed there) and asserts, for every command:
 * - no COLLSCAN, and an index scan;
 * - through a mongos (the collections are sharded first, docs/api.md §7): one shard;
 * - a page (find on counteragents): only LIMIT / PROJECTION_COVERED /
 *   SHARDING_FILTER / IXSCAN stages — no SORT (blocking), no OR or
 *   SORT_MERGE (the two-range plan), no FETCH — on `group_listing_key`,
 *   totalDocsExamined 0, totalKeysExamined <= count + 2 (first, middle and
 *   last page; count 100 and 1);
 * - the count of a walk's first page (aggregate on counteragents): on
 *   `group_listing_key`, no FETCH, totalDocsExamined 0, keys <= members + 2;
 * - every other command (point lookups and writes): totalKeysExamined <= 2;
 * and, per call, that the keys of every page after the first at 100,000 are
 * within 1.5x of the same call at 100.
 */
import { create } from "@bufbuild/protobuf";
import { MongoClient, MongoServerError } from "mongodb";
import { afterAll, beforeAll, describe, expect, it, type TestContext } from "vitest";
import { CounteragentService } from "../../gen/docflow/api/v1/counteragents_pb";
import { DocumentService } from "../../gen/docflow/api/v1/documents_pb";
import { SubscriptionService } from "../../gen/docflow/api/v1/subscriptions_pb";
import type { CounteragentFromGroupResponse } from "../../gen/docflow/legacy/counteragents_pb";
import { SubscriptionSchema } from "../../gen/docflow/legacy/subscriptions_pb";
import { encodeIndexKey } from "../../src/domain/index-key";
import { Collections, IndexNames, SHARD_KEYS } from "../../src/storage/collections";
import { listingKeyOf } from "../../src/storage/listing-key";
import { CommandRecorder, describeCommand, type RecordedCommand } from "../support/commands";
import { startTestDatabase, type TestDatabase } from "../support/database";
import { explainCommandsFor, type PlanSummary, summarizeExplain } from "../support/explain";
import { adminBoxFixture, KEY } from "../support/fixture";
import { type Harness, startHarness, TEST_CACHE, TEST_TIMEOUTS } from "../support/harness";
import { call, expectOk } from "../support/protocols";

// ------------------------------------------------------------ can this server explain?

type Probe = { ok: true; mongos: boolean } | { ok: false; reason: string };

/** Asks the server MONGODB_URI names (or an embedded one) to explain a find. */
async function probeExplain(): Promise<Probe> {
  const external = process.env.MONGODB_URI;
  const testDb = external ? undefined : await startTestDatabase();
  const client = new MongoClient(external ?? testDb?.uri ?? "");
  try {
    const db = client.db(testDb?.name ?? "admin");
    try {
      await db.command({ explain: { find: "probe", filter: {} }, verbosity: "executionStats" });
    } catch (error) {
      if (error instanceof MongoServerError && error.code === 59) {
        return {
          ok: false,
          reason: `needs a real MongoDB: ${external ? "the server MONGODB_URI names" : "the embedded engine (MONGODB_URI unset)"} answers explain with "${error.message}"`,
        };
      }
      throw error;
    }
    const hello = await db.command({ hello: 1 });
    return { ok: true, mongos: hello.msg === "isdbgrid" };
  } finally {
    await client.close();
    await testDb?.close();
  }
}

/**
 * QUERY_PLANS_DRY_RUN=1 on the embedded engine: the same calls and answers
 * with a group of 1,000 instead of 100,000 and no explain — a check of this
 * file's own walk and key logic, which proves nothing about plans.
 */
const DRY_RUN = process.env.QUERY_PLANS_DRY_RUN === "1" && !process.env.MONGODB_URI;
const probe: Probe = DRY_RUN ? { ok: true, mongos: false } : await probeExplain();

/** A dry run checks the calls and answers, then reports the test skipped: no plan was checked. */
const DRY_RUN_NOTE =
  "dry run (QUERY_PLANS_DRY_RUN=1): calls and answers checked, no plan explained";

function planTest(name: string, test: () => Promise<void>) {
  it(name, async (ctx: TestContext) => {
    if (!probe.ok) ctx.skip(probe.reason);
    await test();
    if (DRY_RUN) ctx.skip(DRY_RUN_NOTE);
  });
}

// ------------------------------------------------------------ data

const BOX = "b9000000-0000-4000-8000-000000000001";
const AUTH = `ServiceAuth svcauth_api_client_id=${KEY}, svcauth_token=admin-token`;
const BASE = Date.UTC(2026, 0, 1);
const OTHER_STATUSES = [
  "InvitesMe",
  "IsInvitedByMe",
  "RejectsMe",
  "IsRejectedByMe",
  "NotInCounteragentList",
];
const SIZES = { big: DRY_RUN ? 1_000 : 100_000, small: 100 } as const;
type Size = keyof typeof SIZES;
const groupOf = (size: Size) => `g-${size}`;

interface Member {
  boxId: string;
  counteragentBoxId: string;
  counteragentGroupId: string;
  status: string;
  joinedGroupAt: Date;
  listingKey: string;
}

/** n IsMyCounteragent members (seven share each time; ids not in time order) and n/5 of other statuses among them. */
function members(size: Size): { listed: Member[]; others: Member[] } {
  const n = SIZES[size];
  const member = (id: string, i: number, status: string): Member => {
    const joinedGroupAt = new Date(BASE + Math.floor(i / 7) * 1000);
    return {
      boxId: BOX,
      counteragentBoxId: id,
      counteragentGroupId: groupOf(size),
      status,
      joinedGroupAt,
      listingKey: listingKeyOf({ joinedGroupAt, counteragentBoxId: id }),
    };
  };
  const listed = Array.from({ length: n }, (_, i) =>
    member(`${size}-${String((i * 7919) % n).padStart(6, "0")}-${i}`, i, "IsMyCounteragent"),
  );
  const others = Array.from({ length: Math.ceil(n / 5) }, (_, j) =>
    member(
      `${size}-other-${j}`,
      j * 5 + 3,
      OTHER_STATUSES[j % OTHER_STATUSES.length] ?? "InvitesMe",
    ),
  );
  // After the last member too, so the last page's scan meets a key of another status.
  others.push(member(`${size}-other-last`, n + 10, "RejectsMe"));
  listed.sort((a, b) => (a.listingKey < b.listingKey ? -1 : 1));
  return { listed, others };
}

function fixture() {
  return adminBoxFixture(
    BOX,
    [
      { counteragentGroupId: groupOf("big"), name: "Big" },
      { counteragentGroupId: groupOf("small"), name: "Small" },
      { counteragentGroupId: "g-target", name: "Target" },
    ],
    [{ counteragentBoxId: "mover" }],
  );
}

// ------------------------------------------------------------ explain every command

interface Explained {
  readonly command: RecordedCommand;
  readonly plans: PlanSummary[];
}

type Kind = "page" | "count" | "point";
const kindOf = (c: RecordedCommand): Kind =>
  c.collection === Collections.counteragents && c.name === "find" && c.command.sort?.listingKey
    ? "page"
    : c.collection === Collections.counteragents && c.name === "aggregate"
      ? "count"
      : "point";

/** What is wrong with one explained command; empty when nothing is. */
function problemsOf(e: Explained, mongos: boolean, groupSize: number): string[] {
  const problems: string[] = [];
  const kind = kindOf(e.command);
  for (const p of e.plans) {
    const say = (what: string) =>
      problems.push(
        `${describeCommand(e.command)} (${kind}): ${what} — stages ${p.stages.join(" > ")}, keys ${p.totalKeysExamined}, docs ${p.totalDocsExamined}`,
      );
    if (p.stages.includes("COLLSCAN")) say("COLLSCAN");
    if (p.indexes.length === 0) say("no index scan");
    if (mongos && p.shards.length !== 1) say(`ran on ${p.shards.length} shards (${p.router})`);
    if (kind === "page") {
      const allowed = new Set(["LIMIT", "PROJECTION_COVERED", "SHARDING_FILTER", "IXSCAN"]);
      const extra = p.stages.filter((s) => !allowed.has(s));
      if (extra.length > 0) say(`stages beyond one covered index scan: ${extra.join(", ")}`);
      if (p.indexes.some((i) => i.indexName !== IndexNames.groupListing))
        say("not the listing index");
      if (p.totalDocsExamined !== 0) say("fetched documents");
      const count = Number(e.command.command.limit);
      if (p.totalKeysExamined > count + 2) say(`more than count + 2 = ${count + 2} keys`);
    } else if (kind === "count") {
      if (p.indexes.some((i) => i.indexName !== IndexNames.groupListing))
        say("not the listing index");
      if (p.stages.includes("FETCH") || p.totalDocsExamined !== 0) say("not index-only");
      if (p.totalKeysExamined > groupSize + 2) say(`more than members + 2 = ${groupSize + 2} keys`);
    } else if (p.totalKeysExamined > 2) {
      say("a point lookup reading more than 2 keys");
    }
  }
  return problems;
}

// ------------------------------------------------------------ the tests

describe(`query plans on a real MongoDB${probe.ok ? (probe.mongos ? " (mongos: collections sharded)" : "") : " — skipped"}`, () => {
  const recorder = new CommandRecorder();
  let h: Harness;
  let tools: MongoClient;
  let testDb: TestDatabase;
  let cold: Harness | undefined;
  let db: ReturnType<MongoClient["db"]>;
  const order: Record<Size, string[]> = { big: [], small: [] };
  const positions: Record<Size, Member[]> = { big: [], small: [] };

  beforeAll(async () => {
    if (!probe.ok) return;
    testDb = await startTestDatabase();
    h = await startHarness(fixture(), TEST_TIMEOUTS, TEST_CACHE, {
      onCommand: recorder.listener,
      database: testDb,
    });
    tools = new MongoClient(testDb.uri);
    db = tools.db(h.db.databaseName);
    if (probe.mongos) {
      await tools
        .db("admin")
        .command({ enableSharding: h.db.databaseName })
        .catch(() => undefined);
      for (const [collection, key] of Object.entries(SHARD_KEYS)) {
        await tools
          .db("admin")
          .command({ shardCollection: `${h.db.databaseName}.${collection}`, key });
      }
    }
    const counteragents = db.collection(Collections.counteragents);
    for (const size of ["big", "small"] as const) {
      const { listed, others } = members(size);
      positions[size] = listed;
      order[size] = listed.map((m) => m.counteragentBoxId);
      const all = [...listed, ...others];
      for (let i = 0; i < all.length; i += 5_000) {
        await counteragents.insertMany(all.slice(i, i + 5_000), { ordered: false });
      }
    }
  }, 600_000);
  afterAll(async () => {
    await tools?.close();
    await cold?.close();
    await h?.close();
    await testDb?.close();
  });

  const explainAll = async (commands: readonly RecordedCommand[]): Promise<Explained[]> => {
    const out: Explained[] = [];
    for (const command of commands) {
      const plans: PlanSummary[] = [];
      for (const explain of DRY_RUN ? [] : explainCommandsFor(command.command)) {
        plans.push(summarizeExplain(await db.command(explain)));
      }
      if (plans.length > 0) out.push({ command, plans });
    }
    return out;
  };
  const page = (size: Size, count: number, after?: string) =>
    call(
      h,
      "legacy-protobuf",
      CounteragentService.method.getCounteragentsFromGroup,
      create(CounteragentService.method.getCounteragentsFromGroup.input, {
        boxId: BOX,
        counteragentGroupId: groupOf(size),
        count,
        ...(after ? { afterIndexKey: after } : {}),
      }),
      AUTH,
    );
  /** The key a walk holds after member `index` (as the service would have issued it). */
  const keyAfter = (size: Size, index: number) => {
    const m = positions[size][index];
    if (!m) throw new Error(`no member ${index}`);
    return encodeIndexKey(
      { boxId: BOX, counteragentGroupId: groupOf(size) },
      { joinedGroupAt: m.joinedGroupAt, counteragentBoxId: m.counteragentBoxId },
      SIZES[size],
    );
  };

  planTest(
    "every page (first, middle, last, after the last; count 100 and 1) is one bounded covered scan; the count is index-only",
    async () => {
      const problems: string[] = [];
      const keysPerCall: Record<string, number> = {};
      for (const count of [100, 1]) {
        for (const size of ["small", "big"] as const) {
          const n = SIZES[size];
          const calls: [string, string | undefined, string[]][] = [
            ["first", undefined, order[size].slice(0, count)],
            ["middle", keyAfter(size, n / 2 - 1), order[size].slice(n / 2, n / 2 + count)],
            // (On 100 members with count 100: after the first member, 99 members.)
            [
              "last",
              keyAfter(size, Math.max(0, n - count - 1)),
              order[size].slice(Math.max(1, n - count)),
            ],
            ["after the last", keyAfter(size, n - 1), []],
          ];
          for (const [which, after, expected] of calls) {
            const { result, commands } = await recorder.during(() => page(size, count, after));
            const response: CounteragentFromGroupResponse = expectOk(result);
            expect(response.CounteragentBoxId, `${size} ${which} ${count}`).toEqual(expected);
            expect(response.TotalCount).toBe(n);
            const explained = await explainAll(commands);
            // Every command the call sent was explained: a page's find (and the first page's count).
            expect(commands.length, `${size} ${which} ${count}: commands`).toBeGreaterThan(0);
            if (!DRY_RUN) {
              expect(
                explained.map((e) => describeCommand(e.command)),
                `${size} ${which} ${count}: explained`,
              ).toEqual(commands.map(describeCommand));
            }
            for (const e of explained) problems.push(...problemsOf(e, probe.ok && probe.mongos, n));
            keysPerCall[`${which}, count ${count}, ${size}`] = explained.reduce(
              (sum, e) => sum + e.plans.reduce((s, p) => s + p.totalKeysExamined, 0),
              0,
            );
          }
        }
      }
      expect(problems).toEqual([]);
      // A page costs the same on 100 and on 100,000 members: every page after the first.
      for (const count of [100, 1]) {
        for (const which of ["middle", "last", "after the last"]) {
          const big = keysPerCall[`${which}, count ${count}, big`] ?? Number.NaN;
          const small = keysPerCall[`${which}, count ${count}, small`] ?? Number.NaN;
          expect(
            big,
            `${which}, count ${count}: ${big} keys at 100,000 vs ${small} at 100`,
          ).toBeLessThanOrEqual(1.5 * small);
        }
      }
    },
  );

  planTest("a real walk: later pages send one find, and it stays bounded", async () => {
    const first = await recorder.during(() => page("big", 100));
    const key = expectOk(first.result).AfterIndexKey;
    const second = await recorder.during(() => page("big", 100, key));
    expect(expectOk(second.result).CounteragentBoxId).toEqual(order.big.slice(100, 200));
    expect(second.commands.map(describeCommand)).toEqual(["find counteragents"]);
    const problems = (await explainAll(second.commands)).flatMap((e) =>
      problemsOf(e, probe.ok && probe.mongos, SIZES.big),
    );
    expect(problems).toEqual([]);
  });

  planTest(
    "Delete, Restore, Get/UpdateSubscriptions, AddCounteragentToGroup: every command a point lookup (<= 2 keys), with the auth reads of a cold cache",
    async () => {
      const docs = DocumentService.method;
      const subs = SubscriptionService.method;
      const rpc = CounteragentService.method;
      // A second instance without a cache: the credential, rights and box reads are recorded too.
      cold = await startHarness(
        fixture(),
        TEST_TIMEOUTS,
        { ttlMs: 0, maxEntries: 0 },
        { onCommand: recorder.listener, database: testDb },
      );
      const h = cold;
      const { commands } = await recorder.during(async () => {
        const ok = (r: { ok: boolean }) => expect(r, JSON.stringify(r)).toMatchObject({ ok: true });
        ok(
          await call(
            h,
            "legacy-protobuf",
            docs.delete,
            create(docs.delete.input, { boxId: BOX, messageId: "msg" }),
            AUTH,
          ),
        );
        ok(
          await call(
            h,
            "legacy-protobuf",
            docs.restore,
            create(docs.restore.input, { boxId: BOX, messageId: "msg", documentId: "d1" }),
            AUTH,
          ),
        );
        ok(
          await call(
            h,
            "legacy-protobuf",
            subs.getSubscriptions,
            create(subs.getSubscriptions.input, { boxId: BOX, userId: "u-admin" }),
            AUTH,
          ),
        );
        ok(
          await call(
            h,
            "legacy-protobuf",
            subs.updateSubscriptions,
            create(subs.updateSubscriptions.input, {
              boxId: BOX,
              userId: "u-admin",
              subscriptions: {
                Subscriptions: [create(SubscriptionSchema, { Id: "News", IsSubscribed: false })],
              },
            }),
            AUTH,
          ),
        );
        ok(
          await call(
            h,
            "legacy-protobuf",
            rpc.addCounteragentToGroup,
            create(rpc.addCounteragentToGroup.input, {
              boxId: BOX,
              counteragentBoxId: "mover",
              counteragentGroupId: "g-target",
            }),
            AUTH,
          ),
        );
      });
      const explained = await explainAll(commands);
      // Every collection a call reads was explained (on a dry run: recorded).
      const names = new Set(
        (DRY_RUN ? commands : explained.map((e) => e.command)).map((c) => c.collection),
      );
      for (const c of [
        "apiClients",
        "tokens",
        "employees",
        "boxes",
        "messages",
        "counteragents",
        "counteragentGroups",
      ]) {
        expect(names, `no command on ${c} was explained`).toContain(c);
      }
      const problems = explained.flatMap((e) => problemsOf(e, probe.ok && probe.mongos, 0));
      expect(problems).toEqual([]);
    },
  );
});
