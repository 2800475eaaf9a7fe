/**
 * The service's own call deadline (CALL_DEADLINE_MS) ends a call whose
 * database does not answer, long before the database's own timeout: the
 * answer is DEADLINE_EXCEEDED (legacy 500, no cause shown), the log says
 * "call exceeded its deadline" with the request id, and a client's own
 * shorter deadline ends the call as the client's (no such log line). The
 * database here is paused (SIGSTOP) with a timeout far beyond the deadline,
 * so the code alone says which timer ended the call. This file starts its
 * own embedded server, since it must pause that process.
 */
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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

/** The call deadline under test. */
const DEADLINE_MS = 400;
/** MONGODB_TIMEOUT_MS: far beyond the deadline, so that only the deadline can end a call. */
const DATABASE_MS = 20_000;
/** An upper bound that is the behaviour (the deadline), with room for a loaded machine. */
const ANSWERED_WITHIN_MS = DEADLINE_MS + 4_000;

let service: PausableService;
let h: Harness;
let server: EmbeddedServer;

beforeAll(async () => {
  service = await startOnPausableEngine("deadline", {
    callDeadlineMs: DEADLINE_MS,
    databaseMs: DATABASE_MS,
  });
  h = service.h;
  server = service.engine;
});
afterAll(async () => {
  await service?.close();
});

const method = updateMethod;
const request = clerkNewsUpdate;
const logsOf = (requestId: string) =>
  h.logs.map((l) => JSON.parse(l)).filter((l) => l.requestId === requestId);
const legacyUpdate = (requestId: string) =>
  legacy(h, {
    method: "POST",
    path: `/UpdateSubscriptions?boxId=${BOX}&userId=${USERS.clerk.userId}`,
    headers: {
      authorization: authHeader("admin"),
      "content-type": "application/json",
      "x-request-id": requestId,
    },
    body: '{"Subscriptions":[{"Id":"News","IsSubscribed":"true"}]}',
  });

describe("the call deadline", () => {
  it("lets a call that finishes in time answer (the control case)", async () => {
    const res = await legacyUpdate("deadline-control");
    expect(res.status).toBe(200);
    expect(logsOf("deadline-control").map((l) => l.msg)).not.toContain(
      "call exceeded its deadline",
    );
  });

  it("ends a legacy call the database does not answer: 500, no cause shown, logged as ours", async () => {
    await freeze(server.pid);
    const [res, ms] = await timed(legacyUpdate("deadline-legacy"));
    expect(res.status).toBe(500);
    expect(res.text).toBe("unexpected processing error");
    expect(ms).toBeLessThan(ANSWERED_WITHIN_MS);
    const line = logsOf("deadline-legacy").find((l) => l.msg === "call exceeded its deadline");
    expect(line).toMatchObject({
      level: "error",
      rpc: "UpdateSubscriptions",
      deadlineMs: DEADLINE_MS,
    });
    expect(logsOf("deadline-legacy").find((l) => l.msg === "request")).toMatchObject({
      status: 500,
    });
  });

  it.each(["grpc", "connect-binary"] as const)(
    "ends a %s call the database does not answer with DEADLINE_EXCEEDED",
    async (protocol) => {
      const [res, ms] = await timed(callRpc(h, protocol, method, request(), authHeader("admin")));
      expect(res).toMatchObject({ ok: false, code: Code.DeadlineExceeded });
      expect(ms).toBeLessThan(ANSWERED_WITHIN_MS);
    },
  );

  it("ends a call at the client's own shorter deadline, as the client's (no deadline error logged)", async () => {
    const status = await grpcStatusWithTimeout(h.baseUrl, method, request(), {
      authorization: authHeader("admin"),
      "grpc-timeout": "50m",
      "x-request-id": "deadline-client",
    });
    expect(status).toBe(String(Code.DeadlineExceeded));
    expect(logsOf("deadline-client").map((l) => l.msg)).not.toContain("call exceeded its deadline");
  });

  it("serves again once the database answers, without a restart", async () => {
    process.kill(server.pid, "SIGCONT");
    // The writes that waited on the paused engine go through now; a new call succeeds.
    const res = await legacyUpdate("deadline-after");
    expect(res.status).toBe(200);
  });
});
