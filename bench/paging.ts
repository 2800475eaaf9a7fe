/**
 * `npm run bench:paging`: latency of GetCounteragentsFromGroup pages through
 * the service (legacy protobuf path, keep-alive HTTP/1.1) against the same
 * page query and count issued directly through the driver on the same
 * database (the floor), for groups of 100 and 10,000 members (and 100,000
 * when MONGODB_URI names a real MongoDB). Prints figures and ratios; asserts
 * nothing.
 */

import { randomBytes } from "node:crypto";
import http from "node:http";
import { BIG, bigMember, loadBigGroups } from "../scripts/big-fixture";
import { commandLine } from "../scripts/cli";
import { DEFAULT_TIMEOUTS } from "../src/config";
import { createDeps } from "../src/deps";
import { encodeIndexKey } from "../src/domain/index-key";
import { CounteragentStatus } from "../src/domain/model";
import { LOAD_ROUND_TRIP_MS } from "../src/fixtures/load";
import { createHttpServer } from "../src/http/server";
import { createLogger } from "../src/log";
import { Collections } from "../src/storage/collections";
import {
  type CounteragentDocument,
  LISTING_INDEX,
  pageFilter,
  pageOptions,
} from "../src/storage/counteragent-store";
import { openDatabase } from "../src/storage/database";

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 200);
const WARMUP = 20;
const PAGE = 100;

const USAGE = `usage: npm run bench:paging

Latency of GetCounteragentsFromGroup pages through the service against the
same page query issued straight through the driver, for groups of 100 and
10,000 members (and 100,000 when MONGODB_URI names a real MongoDB), on a
fresh database. Prints figures and ratios; asserts nothing.

Environment: BENCH_ITERATIONS (pages per size, default 200), MONGODB_URI.`;

async function main(): Promise<void> {
  commandLine({ text: USAGE });
  const external = process.env.MONGODB_URI?.trim() || undefined;
  const sizes = external ? [100, 10_000, 100_000] : [100, 10_000];
  const name = `docflow_bench_${randomBytes(4).toString("hex")}`;
  const database = await openDatabase({
    uri: external,
    name,
    operationTimeoutMs: DEFAULT_TIMEOUTS.databaseMs,
  });
  const engine = external
    ? "MongoDB at MONGODB_URI"
    : "embedded engine (jongodb: every query is a full collection scan)";
  try {
    const loadStart = Date.now();
    // A load is not a call: its batches are not bound by one round trip's limit.
    await database.withLongOperations(LOAD_ROUND_TRIP_MS, (db) => loadBigGroups(db, sizes));
    const total = sizes.reduce((a, b) => a + b, 0);
    console.log(`engine: ${engine}`);
    console.log(
      `loaded ${total} counteragents in one collection in ${((Date.now() - loadStart) / 1000).toFixed(1)} s`,
    );
    console.log(
      `${ITERATIONS} timed calls per row after ${WARMUP} warm-up calls; page size ${PAGE}\n`,
    );

    const deps = createDeps(database, createLogger("silent"), {
      healthTimeoutMs: DEFAULT_TIMEOUTS.healthMs,
      cache: { ttlMs: 5_000, maxEntries: 10_000 },
    });
    const service = createHttpServer(deps, { ...DEFAULT_TIMEOUTS, shutdownMs: 1_000 });
    const { port } = await service.listen(0, "127.0.0.1");
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const collection = database.db.collection<CounteragentDocument>(Collections.counteragents);

    const rows: { size: number; page: string; service: Stats; floor: Stats }[] = [];
    for (const size of sizes) {
      const group = BIG.groupId(size);
      const scope = { boxId: BIG.boxId, counteragentGroupId: group };
      const middle = bigMember(size, Math.floor(size / 2));
      const pages = [
        { page: "first", after: undefined },
        {
          page: "middle",
          after: {
            joinedGroupAt: middle.joinedGroupAt,
            counteragentBoxId: middle.counteragentBoxId,
          },
        },
      ];
      for (const { page, after } of pages) {
        const status = CounteragentStatus.IsMyCounteragent;
        const key = after ? `&afterIndexKey=${encodeIndexKey(scope, after, size)}` : "";
        const path = `/GetCounteragentsFromGroup?boxId=${BIG.boxId}&counteragentGroupId=${group}&count=${PAGE}${key}`;
        const serviceCall = () => get(port, path, agent);
        const floorCall = async () => {
          // What the service does: the page; the count only on the first page of a walk.
          await Promise.all([
            collection
              .find(pageFilter(BIG.boxId, group, status, after), pageOptions(PAGE))
              .toArray(),
            after
              ? undefined
              : collection.countDocuments(
                  { boxId: BIG.boxId, counteragentGroupId: group, status },
                  { hint: LISTING_INDEX },
                ),
          ]);
        };
        // Interleave the two so that machine noise hits both alike.
        const [serviceStats, floorStats] = await measurePair(serviceCall, floorCall);
        rows.push({ size, page, service: serviceStats, floor: floorStats });
      }
    }
    agent.destroy();
    await service.close();
    report(rows);
  } finally {
    if (external) await database.db.dropDatabase().catch(() => undefined);
    await database.close();
  }
}

interface Stats {
  median: number;
  p95: number;
}

async function measurePair(
  a: () => Promise<unknown>,
  b: () => Promise<unknown>,
): Promise<[Stats, Stats]> {
  for (let i = 0; i < WARMUP; i++) {
    await a();
    await b();
  }
  const ta: number[] = [];
  const tb: number[] = [];
  for (let i = 0; i < ITERATIONS; i++) {
    ta.push(await time(a));
    tb.push(await time(b));
  }
  return [stats(ta), stats(tb)];
}

async function time(fn: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

function stats(samples: number[]): Stats {
  const sorted = [...samples].sort((x, y) => x - y);
  const at = (q: number) =>
    sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  return { median: at(0.5), p95: at(0.95) };
}

function get(port: number, path: string, agent: http.Agent): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: "127.0.0.1",
        port,
        path,
        agent,
        headers: {
          authorization: `ServiceAuth svcauth_api_client_id=${BIG.apiKey}, svcauth_token=${BIG.token}`,
        },
      },
      (res) => {
        res.resume();
        res.on("end", () =>
          res.statusCode === 200 ? resolve() : reject(new Error(`status ${res.statusCode}`)),
        );
      },
    );
    req.on("error", reject);
    req.end();
  });
}

function report(rows: { size: number; page: string; service: Stats; floor: Stats }[]): void {
  const ms = (n: number) => n.toFixed(2).padStart(8);
  console.log(
    "members   page     service med   p95   |  floor med    p95   | service/floor (median)",
  );
  for (const r of rows) {
    console.log(
      `${String(r.size).padStart(7)}   ${r.page.padEnd(7)} ${ms(r.service.median)} ${ms(r.service.p95)}  | ${ms(r.floor.median)} ${ms(r.floor.p95)}  | ${(r.service.median / r.floor.median).toFixed(2)}`,
    );
  }
  const smallest = Math.min(...rows.map((r) => r.size));
  console.log("\nlarge/small group (service median; goal ≤ 1.5 on a real MongoDB):");
  for (const r of rows.filter((x) => x.size !== smallest)) {
    const small = rows.find((x) => x.size === smallest && x.page === r.page);
    if (small) {
      console.log(
        `  ${r.size} vs ${smallest}, ${r.page} page: ${(r.service.median / small.service.median).toFixed(2)}`,
      );
    }
  }
}

main().catch((error: unknown) => {
  console.error(`bench:paging failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
