/**
 * A database that stops answering (its process paused with SIGSTOP) gives
 * `unavailable` (legacy 500) within about three MONGODB_TIMEOUT_MS — well
 * before the call deadline, which is set far away so that the code alone says
 * which timer ended the call — health says so within HEALTH_TIMEOUT_MS,
 * clients that give up are logged as what they are, and everything recovers
 * without a restart once the database answers again. This file always starts
 * its own embedded server, since it must pause that process.
 */
import http from "node:http";
import { create } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Health, HealthCheckResponse_ServingStatus } from "../../gen/grpc/health/v1/health_pb";
import type { EmbeddedServer } from "../../src/storage/embedded-server";
import { authHeader, BOX, USERS } from "../support/fixture";
import { callRpc, type Harness, legacy } from "../support/harness";
import {
  clerkNewsUpdate,
  freeze,
  type PausableService,
  startOnPausableEngine,
  timed,
  updateMethod,
} from "../support/paused";
import { grpcStatusWithTimeout } from "../support/wire";

/** MONGODB_TIMEOUT_MS of this file's server. */
const DATABASE_MS = 500;
/** The call deadline: far beyond the database's own timeouts, so it never ends a call here. */
const DEADLINE_MS = 30_000;
/** An upper bound that is the behaviour (about three database timeouts), with room for a loaded machine. */
const UNAVAILABLE_WITHIN_MS = 3 * DATABASE_MS + 4_000;
const HEALTH_MS = 300;
const HEALTH_WITHIN_MS = HEALTH_MS + 3_000;

let service: PausableService;
let h: Harness;
let server: EmbeddedServer;

/** Connections of the service's pool: fewer than the calls of the saturation test. */
const POOL = 4;

beforeAll(async () => {
  service = await startOnPausableEngine(
    "frozen",
    { callDeadlineMs: DEADLINE_MS, databaseMs: DATABASE_MS, healthMs: HEALTH_MS },
    `maxPoolSize=${POOL}`,
  );
  h = service.h;
  server = service.engine;
});
afterAll(async () => {
  await service?.close();
});

const method = updateMethod;
const request = clerkNewsUpdate;
const logs = () => h.logs;
const logsOf = (requestId: string) =>
  h.logs.map((l) => JSON.parse(l)).filter((l) => l.requestId === requestId);
const legacyUpdate = (headers: Record<string, string> = {}) =>
  legacy(h, {
    method: "POST",
    path: `/UpdateSubscriptions?boxId=${BOX}&userId=${USERS.clerk.userId}`,
    headers: { authorization: authHeader("admin"), "content-type": "application/json", ...headers },
    body: '{"Subscriptions":[{"Id":"News","IsSubscribed":"true"}]}',
  });

describe("a frozen database", () => {
  it("is working before it freezes (the control case)", async () => {
    expect((await legacyUpdate()).status).toBe(200);
  });

  it("legacy calls answer 500 by the database's timeout, with no driver text", async () => {
    await freeze(server.pid);
    const [res, ms] = await timed(legacyUpdate({ "x-request-id": "frozen-legacy-1" }));
    expect(res.status).toBe(500);
    expect(res.text).toBe("unexpected processing error");
    expect(ms).toBeLessThan(UNAVAILABLE_WITHIN_MS);
    // The database's timeout ended it, not the call deadline.
    expect(logsOf("frozen-legacy-1").map((l) => l.msg)).toContain("database unavailable");
    expect(logsOf("frozen-legacy-1").map((l) => l.msg)).not.toContain("call exceeded its deadline");
  });

  it.each(["grpc", "connect-binary"] as const)(
    "%s calls fail with unavailable, within about three database timeouts",
    async (protocol) => {
      const [res, ms] = await timed(callRpc(h, protocol, method, request(), authHeader("admin")));
      expect(res).toMatchObject({
        ok: false,
        code: Code.Unavailable,
        message: "the database is unavailable",
      });
      expect(ms).toBeLessThan(UNAVAILABLE_WITHIN_MS);
    },
  );

  it("/healthz answers 503 within HEALTH_TIMEOUT_MS", async () => {
    const [res, ms] = await timed(legacy(h, { method: "GET", path: "/healthz" }));
    expect(res.status).toBe(503);
    expect(JSON.parse(res.text)).toEqual({ status: "database unavailable" });
    expect(ms).toBeLessThan(HEALTH_WITHIN_MS);
  });

  it("grpc health answers NOT_SERVING within HEALTH_TIMEOUT_MS", async () => {
    const [res, ms] = await timed(
      callRpc(h, "grpc", Health.method.check, create(Health.method.check.input, { service: "" })),
    );
    expect(res).toMatchObject({
      ok: true,
      message: { status: HealthCheckResponse_ServingStatus.NOT_SERVING },
    });
    expect(ms).toBeLessThan(HEALTH_WITHIN_MS);
  });

  it("a gRPC client's own shorter deadline is honoured: the server answers DEADLINE_EXCEEDED", async () => {
    // Sent raw, with no deadline of the client's own: the trailers are the server's answer.
    // Had it ignored grpc-timeout, the database's timeout would have made it UNAVAILABLE.
    const status = await grpcStatusWithTimeout(h.baseUrl, method, request(), {
      authorization: authHeader("admin"),
      "grpc-timeout": "100m",
      "x-request-id": "client-deadline-1",
    });
    expect(status).toBe(String(Code.DeadlineExceeded));
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
      // The client gives up while the call waits on the frozen database.
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 100);
    });
    const line = await h.waitForLog((l) => l.requestId === "gave-up-1");
    expect(line).toMatchObject({ level: "info", msg: "request", status: 499 });
    // A later call that ends by the same database timeout: once it has, ours has too.
    await legacyUpdate();
    expect(logsOf("gave-up-1")).toHaveLength(1);
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
    const line = await h.waitForLog((l) => l.requestId === "upload-1");
    expect(line).toMatchObject({ level: "info", status: 499 });
    // Anything the aborted call still had to do is done once a later request was answered.
    await legacy(h, { method: "GET", path: "/livez" });
    expect(logsOf("upload-1")).toHaveLength(1);
    expect(logs().some((l) => l.includes('"stack"') && l.includes("upload-1"))).toBe(false);
  });

  it("only server faults are errors: the outage, never a cancellation", async () => {
    const errors = logs()
      .map((l) => JSON.parse(l))
      .filter((l) => l.level === "error");
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
  it("frozen again with the pool healthy, 40 concurrent calls, 10 times the pool: each ends unavailable (legacy 500) by the database's timeouts, none by the deadline", async () => {
    // A healthy pool when the database freezes: every call then waits for a connection
    // (two handshakes at a time, each hanging until its timeout).
    expect((await legacyUpdate()).status).toBe(200);
    await freeze(server.pid);
    const calls = Array.from({ length: 40 }, (_, i) => {
      const protocol = (["legacy", "grpc", "connect-binary", "grpc-web"] as const)[i % 4];
      const started = Date.now();
      const done =
        protocol === "legacy"
          ? legacyUpdate({ "x-request-id": `saturated-${i}` }).then((r) => ({
              ok: r.status === 200,
              legacyStatus: r.status,
              code: undefined as Code | undefined,
            }))
          : callRpc(h, protocol, method, request(), authHeader("admin"), {
              "x-request-id": `saturated-${i}`,
            }).then((r) => ({
              ok: r.ok,
              legacyStatus: undefined as number | undefined,
              code: r.ok ? undefined : r.code,
            }));
      return done.then((r) => ({ ...r, protocol, ms: Date.now() - started }));
    });
    const results = await Promise.all(calls);
    for (const r of results) {
      expect(r.ok, r.protocol).toBe(false);
      if (r.protocol === "legacy") expect(r.legacyStatus).toBe(500);
      else expect(r.code, r.protocol).toBe(Code.Unavailable);
      expect(r.ms, r.protocol).toBeLessThan(UNAVAILABLE_WITHIN_MS);
    }
    const deadlines = logs()
      .map((l) => JSON.parse(l))
      .filter(
        (l) =>
          String(l.requestId).startsWith("saturated-") && l.msg === "call exceeded its deadline",
      );
    expect(deadlines).toEqual([]);
  });
});
