/**
 * docs/api.md §4: a database outage is `unavailable` on gRPC/Connect and a plain 500
 * on legacy paths. The outage is real: the database server the service uses
 * is stopped while the service runs (this file starts its own embedded server
 * to stop it).
 */
import { create } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SubscriptionService } from "../../gen/docflow/api/v1/subscriptions_pb";
import { type EmbeddedServer, startEmbeddedServer } from "../../src/storage/embedded-server";
import { authHeader, BOX, baseFixture, USERS } from "../support/fixture";
import { callRpc, type Harness, legacy, startHarness, TEST_TIMEOUTS } from "../support/harness";

let h: Harness;
let server: EmbeddedServer;
/** HEALTH_TIMEOUT_MS here: readiness trusts a call's answer this recent without a ping. */
const HEALTH_MS = 500;
/** When the control call last had the database answer. */
let lastAnswerAt = 0;

beforeAll(async () => {
  server = await startEmbeddedServer("outage");
  h = await startHarness(
    baseFixture(),
    { ...TEST_TIMEOUTS, databaseMs: 500, healthMs: HEALTH_MS },
    // No cache: every call needs the database.
    { ttlMs: 0, maxEntries: 0 },
    { database: { uri: server.uri, name: "outage", close: async () => undefined } },
  );
  // The control: it works while the database runs.
  expect(
    (
      await legacy(h, {
        method: "GET",
        path: `/GetSubscriptions?boxId=${BOX}&userId=${USERS.admin.userId}`,
        headers: { authorization: authHeader("admin") },
      })
    ).status,
  ).toBe(200);
  lastAnswerAt = Date.now();
  // The database goes away while the service runs.
  await server.stop();
});
afterAll(async () => {
  await h?.close();
  await server?.stop();
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

  it("the cause goes to the log, and /healthz says 503 once the last answer is older than HEALTH_TIMEOUT_MS", async () => {
    expect(h.logs.some((l) => l.includes('"msg":"database unavailable"'))).toBe(true);
    // Until then readiness trusts the control call's answer and sends no ping
    // (docs/operations.md); the tests above may finish sooner on a fast machine.
    const wait = lastAnswerAt + HEALTH_MS + 50 - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const res = await legacy(h, { method: "GET", path: "/healthz" });
    expect(res.status).toBe(503);
  });
});
