/**
 * Connections under load (docs/operations.md, "Overload"): a cap on open
 * connections with a clean refusal (HTTP/1.1 503 and close, HTTP/2 GOAWAY
 * before any stream), probes answered even then; HTTP/2 connections sent a
 * graceful GOAWAY at their maximum age, so that one long-lived gRPC client
 * behind an L4 balancer spreads its calls over every instance.
 */
import { spawn } from "node:child_process";
import http2 from "node:http2";
import net from "node:net";
import { create, fromBinary, type MessageShape, toBinary } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SubscriptionService } from "../../gen/docflow/api/v1/subscriptions_pb";
import { authHeader, BOX, baseFixture, USERS } from "../support/fixture";
import { type Harness, startHarness, TEST_CACHE, TEST_TIMEOUTS } from "../support/harness";

/** Sends `request` on a new connection kept open; resolves with the raw answer once `until` matches. */
function rawExchange(
  port: number,
  request: string,
): Promise<{ socket: net.Socket; answer: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1", () => socket.write(request));
    let answer = "";
    socket.on("data", (chunk: Buffer) => {
      answer += chunk.toString("latin1");
      if (/\r\n\r\n/.test(answer) && /content-length: (\d+)/i.test(answer)) {
        const length = Number(/content-length: (\d+)/i.exec(answer)?.[1]);
        if (answer.length >= answer.indexOf("\r\n\r\n") + 4 + length) resolve({ socket, answer });
      }
    });
    socket.on("error", reject);
  });
}

const closedAfter = (socket: net.Socket) =>
  new Promise<boolean>((resolve) => {
    if (socket.destroyed || socket.readableEnded) resolve(true);
    socket.once("close", () => resolve(true));
    setTimeout(() => resolve(false), 2_000);
  });

describe("MAX_CONNECTIONS: one connection too many is refused cleanly", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(baseFixture(), TEST_TIMEOUTS, TEST_CACHE, {
      connections: { max: 2, h2MaxAgeMs: 0, h2MaxAgeGraceMs: 0 },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("HTTP/1.1: 503 with Retry-After and Connection: close; the first two serve on", async () => {
    const first = await rawExchange(h.port, "GET /livez HTTP/1.1\r\nHost: x\r\n\r\n");
    const second = await rawExchange(h.port, "GET /livez HTTP/1.1\r\nHost: x\r\n\r\n");
    const third = await rawExchange(
      h.port,
      `GET /GetSubscriptions?boxId=${BOX}&userId=${USERS.clerk.userId} HTTP/1.1\r\nHost: x\r\nAuthorization: ${authHeader("admin")}\r\n\r\n`,
    );
    expect(third.answer).toMatch(/^HTTP\/1\.1 503 /);
    expect(third.answer).toMatch(/\r\nretry-after: 1\r\n/i);
    expect(third.answer).toMatch(/\r\nconnection: close\r\n/i);
    expect(third.answer).toMatch(/\r\nx-service-errorcode: Http\.ServiceUnavailable\r\n/i);
    expect(await closedAfter(third.socket)).toBe(true);
    // The first two connections still serve (keep-alive).
    first.socket.write("GET /livez HTTP/1.1\r\nHost: x\r\n\r\n");
    const again = await new Promise<string>((resolve) =>
      first.socket.once("data", (c: Buffer) => resolve(c.toString("latin1"))),
    );
    expect(again).toMatch(/^HTTP\/1\.1 200 /);
    // Once one closes, a new connection is served.
    second.socket.destroy();
    await new Promise((r) => setTimeout(r, 50));
    const fourth = await rawExchange(h.port, "GET /livez HTTP/1.1\r\nHost: x\r\n\r\n");
    expect(fourth.answer).toMatch(/^HTTP\/1\.1 200 /);
    first.socket.destroy();
    fourth.socket.destroy();
  });

  it("a probe on a connection too many is still answered, then the connection closes", async () => {
    // The server sees the earlier test's connections close.
    await new Promise((r) => setTimeout(r, 200));
    const a = await rawExchange(h.port, "GET /livez HTTP/1.1\r\nHost: x\r\n\r\n");
    const b = await rawExchange(h.port, "GET /livez HTTP/1.1\r\nHost: x\r\n\r\n");
    for (const path of ["/readyz", "/livez", "/metrics"]) {
      const probe = await rawExchange(h.port, `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
      // Metrics are off on this server: /metrics is then an ordinary 404, not a refusal.
      expect(probe.answer, path).toMatch(
        path === "/metrics" ? /^HTTP\/1\.1 (404|503) / : /^HTTP\/1\.1 200 /,
      );
      expect(await closedAfter(probe.socket), probe.answer).toBe(true);
    }
    a.socket.destroy();
    b.socket.destroy();
  });

  it("HTTP/2: GOAWAY (REFUSED_STREAM) before any stream; the call is safe to retry", async () => {
    await new Promise((r) => setTimeout(r, 200));
    const a = await rawExchange(h.port, "GET /livez HTTP/1.1\r\nHost: x\r\n\r\n");
    const b = await rawExchange(h.port, "GET /livez HTTP/1.1\r\nHost: x\r\n\r\n");
    const session = http2.connect(h.baseUrl);
    session.on("error", () => undefined);
    const goaway = await new Promise<{ code: number; lastStreamId: number }>((resolve, reject) => {
      session.once("goaway", (code, lastStreamId) => resolve({ code, lastStreamId }));
      setTimeout(() => reject(new Error("no GOAWAY")), 2_000);
    });
    expect(goaway).toEqual({ code: http2.constants.NGHTTP2_REFUSED_STREAM, lastStreamId: 0 });
    session.destroy();
    a.socket.destroy();
    b.socket.destroy();
  });
});

describe("H2_MAX_CONNECTION_AGE_MS: a graceful GOAWAY at a connection's age", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(baseFixture(), TEST_TIMEOUTS, TEST_CACHE, {
      connections: { max: 10_000, h2MaxAgeMs: 300, h2MaxAgeGraceMs: 5_000 },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("GOAWAY NO_ERROR after about the age, naming the last stream taken; a call in flight then still finishes", async () => {
    const session = http2.connect(h.baseUrl);
    session.on("error", () => undefined);
    const started = Date.now();
    const goaway = new Promise<{ code: number; lastStreamId: number; ms: number }>((resolve) =>
      session.once("goaway", (code, lastStreamId) =>
        resolve({ code, lastStreamId, ms: Date.now() - started }),
      ),
    );
    // A call in flight when the GOAWAY comes: its headers now, its body only after the
    // GOAWAY. The server took the stream, so the grace lets it finish.
    const req = session.request({
      ":method": "POST",
      ":path": `/UpdateSubscriptions?boxId=${BOX}&userId=${USERS.clerk.userId}`,
      authorization: authHeader("admin"),
      accept: "application/json",
      "content-type": "application/json",
    });
    const status = new Promise<number>((resolve, reject) => {
      req.on("response", (headers) => resolve(Number(headers[":status"])));
      req.on("error", reject);
    });
    req.resume();
    const away = await goaway;
    expect(away.code).toBe(http2.constants.NGHTTP2_NO_ERROR);
    expect(away.lastStreamId).toBe(req.id);
    // 300 ms ± 10 %, and some room for a loaded machine.
    expect(away.ms).toBeGreaterThanOrEqual(260);
    expect(away.ms).toBeLessThan(2_000);
    req.end(JSON.stringify({ Subscriptions: [{ Id: "News", IsSubscribed: "true" }] }));
    expect(await status).toBe(200);
    session.destroy();
  });
});

describe("two instances behind an L4 balancer, one long-lived gRPC client", () => {
  const instances: Harness[] = [];
  const piped = new Set<net.Socket>();
  let balancer: net.Server;
  let port = 0;

  beforeAll(async () => {
    for (let i = 0; i < 2; i++) {
      instances.push(
        await startHarness(baseFixture(), TEST_TIMEOUTS, TEST_CACHE, {
          connections: { max: 10_000, h2MaxAgeMs: 200, h2MaxAgeGraceMs: 2_000 },
        }),
      );
    }
    // A TCP balancer: each new connection goes to the next instance in turn.
    let next = 0;
    balancer = net.createServer((client) => {
      piped.add(client);
      client.once("close", () => piped.delete(client));
      const target = instances[next++ % instances.length] as Harness;
      const upstream = net.connect(target.port, "127.0.0.1");
      upstream.once("close", () => client.destroy());
      client.once("close", () => upstream.destroy());
      client.pipe(upstream).pipe(client);
      client.on("error", () => upstream.destroy());
      upstream.on("error", () => client.destroy());
    });
    await new Promise<void>((resolve) => balancer.listen(0, "127.0.0.1", resolve));
    port = (balancer.address() as net.AddressInfo).port;
  });
  afterAll(async () => {
    for (const socket of piped) socket.destroy();
    await new Promise((resolve) => balancer?.close(resolve));
    for (const h of instances) await h.close();
  });

  it("the client's calls reach both instances, and none fails", async () => {
    // One grpc-js channel for the whole test, as a long-lived service holds it.
    const client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    const method = SubscriptionService.method.getSubscriptions;
    const call = () =>
      new Promise<number>((resolve, reject) => {
        const metadata = new grpc.Metadata();
        metadata.set("authorization", authHeader("admin"));
        client.makeUnaryRequest(
          `/${SubscriptionService.typeName}/GetSubscriptions`,
          (m: MessageShape<typeof method.input>) => Buffer.from(toBinary(method.input, m)),
          (b: Buffer) => fromBinary(method.output, b),
          create(method.input, { boxId: BOX, userId: USERS.clerk.userId }),
          metadata,
          { deadline: Date.now() + 5_000 },
          (error, answer) => (error ? reject(error) : resolve(answer?.Subscriptions.length ?? 0)),
        );
      });
    const served = () =>
      instances.map(
        (h) =>
          h.logs.filter((l) =>
            l.includes('"route":"/docflow.api.v1.SubscriptionService/GetSubscriptions"'),
          ).length,
      );
    try {
      const deadline = Date.now() + 10_000;
      let calls = 0;
      while (Date.now() < deadline && (served().some((n) => n === 0) || calls < 20)) {
        expect(await call()).toBe(10);
        calls++;
        await new Promise((r) => setTimeout(r, 30));
      }
      // The access log line is written when the answer's stream closes, which may be just after the client has it.
      await expect.poll(() => served().reduce((a, b) => a + b, 0), { timeout: 2_000 }).toBe(calls);
      const [first = 0, second = 0] = served();
      expect(first).toBeGreaterThan(0);
      expect(second).toBeGreaterThan(0);
      expect(first + second).toBe(calls);
    } finally {
      client.close();
    }
  });
});

describe("shutdown answers the connections the kernel already took (the backlog), never resets them", () => {
  it("twenty connections queued while the event loop was busy, then shutdown: each gets its answer", async () => {
    const h = await startHarness();
    // Twenty clients in processes of their own: they connect while this process's loop is
    // blocked, so the kernel completes their handshakes and queues them unaccepted.
    const clients = spawn(
      "bash",
      [
        "-c",
        `for i in $(seq 20); do curl -s -o /dev/null -w '%{http_code} %{exitcode}\\n' --max-time 10 http://127.0.0.1:${h.port}/livez & done; wait`,
      ],
      { stdio: ["ignore", "pipe", "ignore"] },
    );
    let out = "";
    clients.stdout.on("data", (chunk: Buffer) => {
      out += chunk;
    });
    const exited = new Promise((resolve) => clients.on("close", resolve));
    const until = Date.now() + 500;
    while (Date.now() < until) {
      // Busy: nothing is accepted meanwhile (the point of the test, not a wait for something).
    }
    // Shutdown begins in the same turn, before the loop could accept any of them. fff96f0
    // closed its listening sockets at once, and the kernel reset what they held (curl: 000).
    const closing = h.close();
    await exited;
    await closing;
    const codes = out.trim().split("\n");
    expect(codes).toHaveLength(20);
    // Each curl: an answer (200), or, started after the port had closed on a loaded
    // machine, a connection refused (exit 7). Never a reset (56) or an empty reply (52).
    expect(codes.filter((c) => c !== "200 0" && c !== "000 7")).toEqual([]);
    expect(codes.filter((c) => c === "200 0").length).toBeGreaterThanOrEqual(10);
  });
});
