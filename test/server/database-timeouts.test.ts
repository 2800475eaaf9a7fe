/**
 * Every wait for the database is bounded by MONGODB_TIMEOUT_MS
 * (src/storage/database.ts; docs/operations.md, "Timeouts and deadlines"):
 * with the server frozen while the pool is healthy, 40 operations at once
 * each fail within about three timeouts. Without the pool's checkout bound
 * they did not: new connections hang in their handshake two at a time
 * (maxConnecting), and the 40th waited about 20 of them, 10 s at 500 ms.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { type Database, openDatabase } from "../../src/storage/database";
import { type EmbeddedServer, startEmbeddedServer } from "../../src/storage/embedded-server";
import { freeze } from "../support/paused";

const TIMEOUT_MS = 500;

let engine: EmbeddedServer;
let database: Database;

beforeAll(async () => {
  engine = await startEmbeddedServer("timeouts");
  database = await openDatabase({
    uri: engine.uri,
    name: "timeouts",
    operationTimeoutMs: TIMEOUT_MS,
  });
  await database.db.collection("probe").insertOne({ n: 1 });
});
afterAll(async () => {
  process.kill(engine.pid, "SIGCONT");
  await database?.close();
  await engine?.stop();
});

it("a frozen server: 40 reads at once each fail within about three MONGODB_TIMEOUT_MS", async () => {
  // A healthy pool first (one connection, used).
  expect(await database.db.collection("probe").findOne({ n: 1 })).toMatchObject({ n: 1 });
  await freeze(engine.pid);
  const started = Date.now();
  const results = await Promise.all(
    Array.from({ length: 40 }, (_, i) =>
      database.db
        .collection("probe")
        .findOne({ n: i })
        .then(
          () => ({ ok: true, ms: Date.now() - started }),
          () => ({ ok: false, ms: Date.now() - started }),
        ),
    ),
  );
  expect(results.every((r) => !r.ok)).toBe(true);
  const slowest = Math.max(...results.map((r) => r.ms));
  // About three timeouts (a retried read: selection, checkout, the read), with room for a loaded machine.
  expect(slowest).toBeLessThan(3 * TIMEOUT_MS + 2_000);
});
