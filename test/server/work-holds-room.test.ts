/**
 * A call answered before its work has ended (its client's deadline passed,
 * its client left) keeps its admission slot until the work ends, so that
 * abandoned calls cannot pile up on the database behind the limit
 * (docs/security.md, docs/operations.md "Admission control"); once the work
 * ends, the slot goes to the next call. The database is paused (SIGSTOP) to
 * keep the first call's work going; the limit is one call.
 */
import http from "node:http";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authHeader, BOX, USERS } from "../support/fixture";
import { legacy, TEST_ADMISSION } from "../support/harness";
import {
  clerkNewsUpdate,
  freeze,
  type PausableService,
  startOnPausableEngine,
  timed,
  updateMethod,
} from "../support/paused";
import { grpcStatusWithTimeout } from "../support/wire";

/** How long the database stays paused: the first call's work goes on that long. */
const PAUSED_MS = 800;

let service: PausableService;

beforeAll(async () => {
  service = await startOnPausableEngine(
    "work-holds-room",
    // Far beyond the pause: the work ends when the database answers again, not by a timeout.
    { callDeadlineMs: 30_000, databaseMs: 10_000 },
    "",
    { admission: { ...TEST_ADMISSION, floor: 1, max: 1 }, logLevel: "debug" },
  );
});
afterAll(async () => {
  await service?.close();
});

const PATH = `/UpdateSubscriptions?boxId=${BOX}&userId=${USERS.clerk.userId}`;
const BODY = '{"Subscriptions":[{"Id":"News","IsSubscribed":"true"}]}';
const update = (requestId: string) =>
  legacy(service.h, {
    method: "POST",
    path: PATH,
    headers: {
      authorization: authHeader("admin"),
      "content-type": "application/json",
      "x-request-id": requestId,
    },
    body: BODY,
  });

/** The debug line of a call: what admission decided and how long it waited. */
const callLine = (requestId: string) =>
  service.h.waitForLog((l) => l.requestId === requestId && l.msg === "call");

/**
 * Pauses the database, runs `abandon` (a call answered while its work waits on
 * it), sends the next call, and resumes the database PAUSED_MS after that
 * call was sent: the first call's work ends then, however slow `abandon` was.
 */
async function whileAbandoned(abandon: () => Promise<void>, next: string) {
  await freeze(service.engine.pid);
  await abandon();
  const answered = timed(update(next));
  await new Promise((r) => setTimeout(r, PAUSED_MS));
  process.kill(service.engine.pid, "SIGCONT");
  const [answer, ms] = await answered;
  return { answer, ms };
}

describe("a call answered before its work ends holds its slot until the work does", () => {
  it("is served with one slot before (the control case)", async () => {
    expect((await update("room-control")).status).toBe(200);
    expect(await callLine("room-control")).toMatchObject({ admission: "admitted" });
  });

  it("gRPC: a call past its client's deadline is answered DEADLINE_EXCEEDED; the next call waits for its work, then runs", async () => {
    const { answer, ms } = await whileAbandoned(async () => {
      const status = await grpcStatusWithTimeout(
        service.h.baseUrl,
        updateMethod,
        clerkNewsUpdate(),
        {
          authorization: authHeader("admin"),
          "grpc-timeout": "100m",
          "x-request-id": "room-grpc-abandoned",
        },
      );
      expect(status).toBe(String(Code.DeadlineExceeded));
    }, "room-grpc-next");
    expect(answer.status).toBe(200);
    const line = await callLine("room-grpc-next");
    // Given its slot only when the first call's work ended, when the database came back.
    expect(line).toMatchObject({ admission: "queued", status: 200 });
    expect(line.waitedMs).toBeGreaterThan(PAUSED_MS / 2);
    expect(ms).toBeGreaterThan(PAUSED_MS / 2);
  });

  it("legacy: a client that leaves is logged 499; the next call waits for its work, then runs", async () => {
    const { answer } = await whileAbandoned(
      () =>
        new Promise<void>((resolve) => {
          const req = http.request({
            host: "127.0.0.1",
            port: service.h.port,
            method: "POST",
            path: PATH,
            headers: {
              authorization: authHeader("admin"),
              "content-type": "application/json",
              "x-request-id": "room-legacy-abandoned",
            },
          });
          req.on("error", () => undefined);
          req.end(BODY);
          setTimeout(() => {
            req.destroy();
            resolve();
          }, 100);
        }),
      "room-legacy-next",
    );
    expect(answer.status).toBe(200);
    expect(await callLine("room-legacy-abandoned")).toMatchObject({ status: 499 });
    const line = await callLine("room-legacy-next");
    expect(line).toMatchObject({ admission: "queued", status: 200 });
    expect(line.waitedMs).toBeGreaterThan(PAUSED_MS / 2);
  });

  it("once the work has ended the slot is free again: the next call runs at once", async () => {
    expect((await update("room-after")).status).toBe(200);
    expect(await callLine("room-after")).toMatchObject({ admission: "admitted" });
  });
});
