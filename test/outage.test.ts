/** SPEC §4: a database outage is `unavailable` on gRPC/Connect and a plain 500 on legacy paths. */
import { create } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SubscriptionService } from "../gen/docflow/api/v1/subscriptions_pb";
import { createDeps } from "../src/deps";
import { loadFixture } from "../src/fixtures/load";
import { createHttpServer } from "../src/http/server";
import { createLogger } from "../src/log";
import { openDatabase } from "../src/storage/database";
import { startTestDatabase, type TestDatabase } from "./support/database";
import { authHeader, BOX, baseFixture, USERS } from "./support/fixture";
import { callRpc, type Harness, legacy, TEST_CACHE, TEST_TIMEOUTS } from "./support/harness";

let h: Harness;
let testDb: TestDatabase;
const logs: string[] = [];

beforeAll(async () => {
  testDb = await startTestDatabase();
  const database = await openDatabase({
    uri: testDb.uri,
    name: testDb.name,
    operationTimeoutMs: 2_000,
  });
  await loadFixture(database.db, baseFixture());
  const deps = createDeps(
    database,
    createLogger("info", (l) => logs.push(l)),
    { healthTimeoutMs: 1_000, cache: TEST_CACHE },
  );
  const server = createHttpServer(deps, { ...TEST_TIMEOUTS, shutdownMs: 1_000 });
  const { port } = await server.listen(0, "127.0.0.1");
  // The database goes away while the service runs.
  await database.close();
  h = {
    baseUrl: `http://127.0.0.1:${port}`,
    port,
    db: database.db,
    deps,
    server,
    logs,
    close: () => server.close(),
  };
});
afterAll(async () => {
  await h?.close();
  await testDb?.close();
});

const path = `/GetSubscriptions?boxId=${BOX}&userId=${USERS.admin.userId}`;

describe("database outage", () => {
  it("legacy: 500 with a short message, no driver text", async () => {
    const res = await legacy(h, {
      method: "GET",
      path,
      headers: { authorization: authHeader("admin") },
    });
    expect(res.status).toBe(500);
    expect(res.headers["x-service-errorcode"]).toBe("Http.InternalServerError");
    expect(res.text).toBe("unexpected processing error");
  });

  it("gRPC and Connect: unavailable, no driver text", async () => {
    for (const protocol of ["grpc", "connect-binary"] as const) {
      const res = await callRpc(
        h,
        protocol,
        SubscriptionService.method.getSubscriptions,
        create(SubscriptionService.method.getSubscriptions.input, {
          boxId: BOX,
          userId: USERS.admin.userId,
        }),
        authHeader("admin"),
      );
      expect(res).toMatchObject({
        ok: false,
        code: Code.Unavailable,
        message: "the database is unavailable",
      });
    }
  });

  it("the cause goes to the log, and /healthz says 503", async () => {
    expect(logs.some((l) => l.includes('"msg":"database unavailable"'))).toBe(true);
    const res = await legacy(h, { method: "GET", path: "/healthz" });
    expect(res.status).toBe(503);
  });
});
