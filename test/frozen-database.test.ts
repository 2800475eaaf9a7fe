/**
 * A database that stops answering (its process paused with SIGSTOP) gives
 * fast errors within the call's deadline, health says so within about a
 * second, clients that give up are logged as what they are, and everything
 * recovers without a restart once the database answers again. This file
 * always starts its own embedded server, since it must pause that process.
 */
import { readFileSync } from "node:fs";
import http from "node:http";
import { create, toBinary } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SubscriptionService } from "../gen/docflow/api/v1/subscriptions_pb";
import { Health, HealthCheckResponse_ServingStatus } from "../gen/grpc/health/v1/health_pb";
import { createDeps } from "../src/deps";
import { loadFixture } from "../src/fixtures/load";
import { createHttpServer } from "../src/http/server";
import { createLogger } from "../src/log";
import { type Database, openDatabase } from "../src/storage/database";
import { type EmbeddedServer, startEmbeddedServer } from "../src/storage/embedded-server";
import { authHeader, BOX, baseFixture, USERS } from "./support/fixture";
import { callRpc, type Harness, legacy, TEST_CACHE, TEST_TIMEOUTS } from "./support/harness";

const DEADLINE_MS = 1_500;
let h: Harness;
let server: EmbeddedServer;
let database: Database;
const logs: string[] = [];

beforeAll(async () => {
  server = await startEmbeddedServer("frozen");
  database = await openDatabase({ uri: server.uri, name: "frozen", operationTimeoutMs: 300 });
  await loadFixture(database.db, baseFixture());
  const deps = createDeps(
    database,
    createLogger("info", (l) => logs.push(l)),
    { healthTimeoutMs: 300, cache: TEST_CACHE },
  );
  const httpServer = createHttpServer(deps, {
    ...TEST_TIMEOUTS,
    callDeadlineMs: DEADLINE_MS,
    healthMs: 300,
  });
  const { port } = await httpServer.listen(0, "127.0.0.1");
  h = {
    baseUrl: `http://127.0.0.1:${port}`,
    port,
    db: database.db,
    deps,
    server: httpServer,
    logs,
    close: () => httpServer.close(),
  };
});
afterAll(async () => {
  process.kill(server.pid, "SIGCONT");
  await h?.close();
  await database?.close();
  await server?.stop();
});

const method = SubscriptionService.method.updateSubscriptions;
const request = () =>
  create(method.input, {
    boxId: BOX,
    userId: USERS.clerk.userId,
    subscriptions: { Subscriptions: [{ Id: "News", IsSubscribed: true }] },
  });
const legacyUpdate = (headers: Record<string, string> = {}) =>
  legacy(h, {
    method: "POST",
    path: `/UpdateSubscriptions?boxId=${BOX}&userId=${USERS.clerk.userId}`,
    headers: { authorization: authHeader("admin"), "content-type": "application/json", ...headers },
    body: '{"Subscriptions":[{"Id":"News","IsSubscribed":"true"}]}',
  });

/** Pauses the process and waits until the kernel reports it stopped (state T). */
async function freeze(pid: number): Promise<void> {
  process.kill(pid, "SIGSTOP");
  for (let i = 0; i < 100; i++) {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    if (/^\d+ \(.*\) [Tt] /.test(stat)) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error("the database process did not stop");
}

async function timed<T>(work: Promise<T>): Promise<[T, number]> {
  const started = Date.now();
  const value = await work;
  return [value, Date.now() - started];
}

describe("a frozen database", () => {
  it("is working before it freezes (the control case)", async () => {
    expect((await legacyUpdate()).status).toBe(200);
  });

  it("legacy calls answer 500 within the deadline, with no driver text", async () => {
    await freeze(server.pid);
    const [res, ms] = await timed(legacyUpdate());
    expect(res.status).toBe(500);
    expect(res.text).toBe("unexpected processing error");
    expect(ms).toBeLessThan(DEADLINE_MS + 500);
  });

  it.each(["grpc", "connect-binary"] as const)(
    "%s calls fail with unavailable or deadline_exceeded within the deadline",
    async (protocol) => {
      const [res, ms] = await timed(callRpc(h, protocol, method, request(), authHeader("admin")));
      expect(res.ok).toBe(false);
      expect([Code.Unavailable, Code.DeadlineExceeded]).toContain(res.ok ? undefined : res.code);
      expect(ms).toBeLessThan(DEADLINE_MS + 500);
    },
  );

  it("/healthz answers 503 within about a second", async () => {
    const [res, ms] = await timed(legacy(h, { method: "GET", path: "/healthz" }));
    expect(res.status).toBe(503);
    expect(JSON.parse(res.text)).toEqual({ status: "database unavailable" });
    expect(ms).toBeLessThan(1_000);
  });

  it("grpc health answers NOT_SERVING within about a second", async () => {
    const [res, ms] = await timed(
      callRpc(h, "grpc", Health.method.check, create(Health.method.check.input, { service: "" })),
    );
    expect(res).toMatchObject({
      ok: true,
      message: { status: HealthCheckResponse_ServingStatus.NOT_SERVING },
    });
    expect(ms).toBeLessThan(1_000);
  });

  it("a gRPC client's own shorter deadline is honoured", async () => {
    const client = new grpc.Client(`127.0.0.1:${h.port}`, grpc.credentials.createInsecure());
    const metadata = new grpc.Metadata();
    metadata.set("authorization", authHeader("admin"));
    metadata.set("x-request-id", "client-deadline-1");
    const [error, ms] = await timed(
      new Promise<grpc.ServiceError | null>((resolve) =>
        client.makeUnaryRequest(
          `/${method.parent.typeName}/${method.name}`,
          (b: Buffer) => b,
          (b: Buffer) => b,
          Buffer.from(toBinary(method.input, request())),
          metadata,
          { deadline: Date.now() + 200 },
          (e) => resolve(e),
        ),
      ),
    );
    client.close();
    expect(error?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect(ms).toBeLessThan(1_000);
  });

  it("a legacy client that gives up is logged once, at info, as 499", async () => {
    await new Promise<void>((resolve) => {
      const req = http.request({
        host: "127.0.0.1",
        port: h.port,
        method: "POST",
        path: `/UpdateSubscriptions?boxId=${BOX}&userId=${USERS.clerk.userId}`,
        headers: {
          authorization: authHeader("admin"),
          "content-type": "application/json",
          "x-request-id": "gave-up-1",
        },
      });
      req.on("error", () => resolve());
      req.end('{"Subscriptions":[{"Id":"News","IsSubscribed":"true"}]}');
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 100);
    });
    // The call ends (the database times out) after the client left.
    await new Promise((r) => setTimeout(r, DEADLINE_MS + 300));
    const lines = logs.map((l) => JSON.parse(l)).filter((l) => l.requestId === "gave-up-1");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: "info", msg: "request", status: 499 });
  });

  it("a client that aborts mid-upload is one info line with 499, no error, no stack", async () => {
    await new Promise<void>((resolve) => {
      const req = http.request({
        host: "127.0.0.1",
        port: h.port,
        method: "POST",
        path: `/UpdateSubscriptions?boxId=${BOX}&userId=${USERS.clerk.userId}`,
        headers: {
          authorization: authHeader("admin"),
          "content-length": "100",
          "x-request-id": "upload-1",
        },
      });
      req.on("error", () => resolve());
      req.write("0123456789");
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 100);
    });
    await new Promise((r) => setTimeout(r, 300));
    const lines = logs.map((l) => JSON.parse(l)).filter((l) => l.requestId === "upload-1");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: "info", status: 499 });
    expect(logs.some((l) => l.includes('"stack"') && l.includes("upload-1"))).toBe(false);
  });

  it("only server faults are errors: the outage, never a cancellation", async () => {
    const errors = logs.map((l) => JSON.parse(l)).filter((l) => l.level === "error");
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.some((l) => l.msg === "database unavailable")).toBe(true);
    expect(
      errors.every((l) => ["database unavailable", "call exceeded its deadline"].includes(l.msg)),
    ).toBe(true);
    expect(errors.some((l) => l.requestId === "client-deadline-1")).toBe(false);
  });

  it("recovers without a restart once the database answers again", async () => {
    process.kill(server.pid, "SIGCONT");
    const until = Date.now() + 15_000;
    let status = 0;
    while (Date.now() < until) {
      status = (await legacyUpdate()).status;
      if (status === 200) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(status).toBe(200);
    expect((await legacy(h, { method: "GET", path: "/healthz" })).status).toBe(200);
    const res = await callRpc(h, "grpc", method, request(), authHeader("admin"));
    expect(res.ok).toBe(true);
  });
});
