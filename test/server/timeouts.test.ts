/**
 * Slow and idle peers are cut off at the configured limits, while others are
 * served. Each limit is tested on a server where it alone is short and every
 * other limit is a minute: the answer (408, or silence) and a closing time
 * between the limit and the limit plus a few seconds identify the mechanism,
 * with room for a loaded 2-core machine, and no other timer could explain it.
 */
import http2 from "node:http2";
import net from "node:net";
import { describe, expect, it } from "vitest";
import type { Timeouts } from "../../src/config";
import { authHeader, BOX } from "../support/fixture";
import { type Harness, legacy, TEST_TIMEOUTS, useHarness } from "../support/harness";

const MINUTE = 60_000;
/** How late a timer may fire on a loaded machine before a test calls it missing. */
const ROOM_MS = 5_000;

/** Every listener limit a minute, but the ones given. */
const only = (limits: Partial<Timeouts>): Timeouts => ({
  ...TEST_TIMEOUTS,
  firstByteMs: MINUTE,
  headersMs: MINUTE,
  requestMs: MINUTE,
  keepAliveMs: MINUTE,
  h2IdleMs: MINUTE,
  ...limits,
});

interface Watched {
  socket: net.Socket;
  received: () => string;
  /** Milliseconds from connect to close. */
  closed: Promise<number>;
}

function connect(h: Harness): Promise<Watched> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = net.connect(h.port, "127.0.0.1");
    let received = "";
    socket.on("data", (c: Buffer) => {
      received += c.toString("latin1");
    });
    socket.on("error", () => undefined);
    const closed = new Promise<number>((done) =>
      socket.once("close", () => done(Date.now() - started)),
    );
    socket.once("connect", () => resolve({ socket, received: () => received, closed }));
    socket.once("error", reject);
  });
}

/** A request from someone else, while the slow peer waits: it must still be answered. */
async function othersAreServed(h: Harness): Promise<void> {
  const res = await legacy(h, { method: "GET", path: "/livez" });
  expect(res.status).toBe(200);
}

/** Closed no sooner than `limitMs` (timers never fire early) and not long after. */
function expectClosedAt(ms: number, limitMs: number): void {
  expect(ms).toBeGreaterThanOrEqual(limitMs - 20);
  expect(ms).toBeLessThan(limitMs + ROOM_MS);
}

describe("time to first byte (FIRST_BYTE_TIMEOUT_MS)", () => {
  const h = useHarness(undefined, only({ firstByteMs: 300 }));

  it("a connection that sends nothing is closed, without a word, after the limit", async () => {
    const silent = await Promise.all(Array.from({ length: 50 }, () => connect(h)));
    await othersAreServed(h);
    for (const ms of await Promise.all(silent.map((c) => c.closed))) expectClosedAt(ms, 300);
    expect(silent.every((c) => c.received() === "")).toBe(true);
  });

  it("a connection that sends only the start of the h2c preface is closed by the same limit: not yet HTTP/2", async () => {
    const c = await connect(h);
    c.socket.write("PRI * HTTP/2.0\r\n");
    await othersAreServed(h);
    expectClosedAt(await c.closed, 300);
    expect(c.received()).toBe("");
  });

  it("an HTTP/1.1 request line sent a byte at a time is still HTTP/1.1", async () => {
    const c = await connect(h);
    for (const byte of "PUT /livez HTTP/1.1\r\nHost: x\r\n\r\n") {
      c.socket.write(byte);
      await new Promise((r) => setImmediate(r));
    }
    await new Promise<void>((resolve) => {
      const check = () => {
        if (c.received().includes("\r\n\r\n")) resolve();
      };
      c.socket.on("data", check);
      check();
    });
    expect(c.received()).toMatch(/^HTTP\/1\.1 405 /);
    c.socket.destroy();
  });
});

describe("HTTP/1.1 headers (HEADERS_TIMEOUT_MS)", () => {
  const h = useHarness(undefined, only({ headersMs: 400 }));

  it("headers that trickle in get 408 and the connection closed after the limit", async () => {
    const c = await connect(h);
    c.socket.write("GET /healthz HTTP/1.1\r\n");
    const drip = setInterval(() => c.socket.writable && c.socket.write("X-Slow: y\r\n"), 100);
    await othersAreServed(h);
    const ms = await c.closed;
    clearInterval(drip);
    expectClosedAt(ms, 400);
    expect(c.received()).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(c.received()).toMatch(/X-Service-ErrorCode: Http\.RequestTimeout/i);
  });

  it("an idle kept-alive connection is not cut by the headers timer: Node starts it at a request's first byte", async () => {
    const c = await connect(h);
    const answers = (n: number) =>
      new Promise<void>((resolve) => {
        const check = () => {
          if ((c.received().match(/HTTP\/1\.1 200 OK/g) ?? []).length >= n) {
            c.socket.off("data", check);
            resolve();
          }
        };
        c.socket.on("data", check);
        check();
      });
    c.socket.write("GET /livez HTTP/1.1\r\nHost: x\r\n\r\n");
    await answers(1);
    // Idle for longer than the headers limit: the point of the test, not a wait for something.
    await new Promise((r) => setTimeout(r, 1_000));
    c.socket.write("GET /livez HTTP/1.1\r\nHost: x\r\n\r\n");
    await answers(2);
    // A request id may contain "408": the status line is what counts.
    expect(c.received()).not.toMatch(/HTTP\/1\.1 408/);
    c.socket.destroy();
  });
});

describe("HTTP/1.1 bodies (REQUEST_TIMEOUT_MS)", () => {
  // Node requires the headers limit to be no longer than the request limit.
  const h = useHarness(undefined, only({ requestMs: 800, headersMs: 800 }));
  // With credentials: a body is read only once they are checked (docs/security.md).
  const auth = authHeader("admin");

  it("a body that never completes gets 408 after the limit, and nothing runs", async () => {
    const c = await connect(h);
    c.socket.write(
      `POST /UpdateSubscriptions?boxId=${BOX}&userId=u-admin HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth}\r\nContent-Length: 100\r\n\r\n0123456789`,
    );
    await othersAreServed(h);
    expectClosedAt(await c.closed, 800);
    expect(c.received()).toMatch(/^HTTP\/1\.1 408 /);
  });

  it("a body sent one byte at a time is cut off at the limit", async () => {
    const c = await connect(h);
    c.socket.write(
      `POST /UpdateSubscriptions?boxId=${BOX}&userId=u-admin HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth}\r\nContent-Length: 100000\r\n\r\n`,
    );
    const drip = setInterval(() => c.socket.writable && c.socket.write("x"), 50);
    const ms = await c.closed;
    clearInterval(drip);
    expectClosedAt(ms, 800);
    expect(c.received()).toMatch(/^HTTP\/1\.1 408 /);
  });

  it("an h2c request stream whose body never ends gets 408 after the limit", async () => {
    const session = http2.connect(h.baseUrl);
    session.on("error", () => undefined);
    try {
      const started = Date.now();
      const status = await new Promise<number>((resolve) => {
        const stream = session.request({
          ":method": "POST",
          ":path": `/UpdateSubscriptions?boxId=${BOX}&userId=u-admin`,
          authorization: auth,
        });
        stream.write(Buffer.from([0x0a]));
        stream.on("response", (headers) => resolve(Number(headers[":status"])));
        stream.on("error", () => resolve(-1));
        stream.resume();
      });
      expect(status).toBe(408);
      expectClosedAt(Date.now() - started, 800);
      await othersAreServed(h);
    } finally {
      session.destroy();
    }
  });
});

describe("idle HTTP/1.1 connections (KEEP_ALIVE_TIMEOUT_MS)", () => {
  const h = useHarness(undefined, only({ keepAliveMs: 400 }));

  it("an idle keep-alive connection is closed after the limit", async () => {
    const c = await connect(h);
    c.socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    const ms = await c.closed;
    expect(c.received()).toMatch(/^HTTP\/1\.1 200 /);
    expectClosedAt(ms, 400);
  });
});

describe("idle cleartext HTTP/2 sessions (H2_IDLE_TIMEOUT_MS)", () => {
  const h = useHarness(undefined, only({ h2IdleMs: 400 }));

  it("a session with no open stream is closed after the limit", async () => {
    const started = Date.now();
    const session = http2.connect(h.baseUrl);
    session.on("error", () => undefined);
    const closed = new Promise<number>((resolve) =>
      session.once("close", () => resolve(Date.now() - started)),
    );
    const status = await new Promise<number>((resolve, reject) => {
      const stream = session.request({ ":path": "/healthz" });
      stream.on("response", (headers) => resolve(Number(headers[":status"])));
      stream.on("error", reject);
      stream.resume();
    });
    expect(status).toBe(200);
    expectClosedAt(await closed, 400);
  });
});
