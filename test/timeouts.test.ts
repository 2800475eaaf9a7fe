/** Slow and idle peers are cut off at the configured limits, while others are served. */
import http2 from "node:http2";
import net from "node:net";
import { describe, expect, it } from "vitest";
import { legacy, startHarness, TEST_TIMEOUTS, useHarness } from "./support/harness";

const LIMITS = {
  ...TEST_TIMEOUTS,
  firstByteMs: 300,
  headersMs: 400,
  requestMs: 800,
  keepAliveMs: 400,
  h2IdleMs: 400,
};
const h = useHarness(undefined, LIMITS);

interface Watched {
  socket: net.Socket;
  received: () => string;
  /** Milliseconds from connect to close. */
  closed: Promise<number>;
}

function connect(): Promise<Watched> {
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
async function othersAreServed(): Promise<void> {
  const res = await legacy(h, { method: "GET", path: "/healthz" });
  expect(res.status).toBe(200);
}

describe("time to first byte", () => {
  it("a connection that sends nothing is closed after FIRST_BYTE_TIMEOUT_MS", async () => {
    const silent = await Promise.all(Array.from({ length: 50 }, connect));
    await othersAreServed();
    const times = await Promise.all(silent.map((c) => c.closed));
    for (const ms of times) {
      expect(ms).toBeGreaterThanOrEqual(250);
      expect(ms).toBeLessThan(2_000);
    }
    expect(silent.every((c) => c.received() === "")).toBe(true);
  });
});

describe("HTTP/1.1 headers and body", () => {
  it("headers that trickle in get 408 and the connection closed after HEADERS_TIMEOUT_MS", async () => {
    const c = await connect();
    c.socket.write("GET /healthz HTTP/1.1\r\n");
    const drip = setInterval(() => c.socket.writable && c.socket.write("X-Slow: y\r\n"), 100);
    await othersAreServed();
    const ms = await c.closed;
    clearInterval(drip);
    expect(ms).toBeGreaterThanOrEqual(350);
    expect(ms).toBeLessThan(2_500);
    expect(c.received()).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(c.received()).toMatch(/X-Service-ErrorCode: Http\.RequestTimeout/i);
  });

  it("a body that never completes gets 408 after REQUEST_TIMEOUT_MS, and nothing runs", async () => {
    const c = await connect();
    c.socket.write(
      "POST /UpdateSubscriptions?boxId=b&userId=u HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789",
    );
    await othersAreServed();
    const ms = await c.closed;
    expect(ms).toBeGreaterThanOrEqual(700);
    expect(ms).toBeLessThan(3_000);
    expect(c.received()).toMatch(/^HTTP\/1\.1 408 /);
  });

  it("a body sent one byte at a time is cut off at REQUEST_TIMEOUT_MS", async () => {
    const c = await connect();
    c.socket.write(
      "POST /UpdateSubscriptions?boxId=b&userId=u HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n",
    );
    const drip = setInterval(() => c.socket.writable && c.socket.write("x"), 50);
    const ms = await c.closed;
    clearInterval(drip);
    expect(ms).toBeLessThan(3_000);
    expect(c.received()).toMatch(/^HTTP\/1\.1 408 /);
  });

  it("an idle keep-alive connection is closed after KEEP_ALIVE_TIMEOUT_MS", async () => {
    const c = await connect();
    c.socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    const ms = await c.closed;
    expect(c.received()).toMatch(/^HTTP\/1\.1 200 /);
    expect(ms).toBeGreaterThanOrEqual(350);
    expect(ms).toBeLessThan(2_500);
  });
});

describe("cleartext HTTP/2", () => {
  it("a session with no open stream is closed after H2_IDLE_TIMEOUT_MS", async () => {
    const started = Date.now();
    const session = http2.connect(h.baseUrl);
    session.on("error", () => undefined);
    const status = await new Promise<number>((resolve, reject) => {
      const stream = session.request({ ":path": "/healthz" });
      stream.on("response", (headers) => resolve(Number(headers[":status"])));
      stream.on("error", reject);
      stream.resume();
    });
    expect(status).toBe(200);
    const ms = await new Promise<number>((resolve) =>
      session.once("close", () => resolve(Date.now() - started)),
    );
    expect(ms).toBeGreaterThanOrEqual(350);
    expect(ms).toBeLessThan(2_500);
  });

  it("a partial h2c preface is closed too", async () => {
    const c = await connect();
    c.socket.write("PRI * HTTP/2.0\r\n");
    await othersAreServed();
    expect(await c.closed).toBeLessThan(3_000);
  });

  it("a request stream whose body never ends gets 408 after REQUEST_TIMEOUT_MS", async () => {
    const session = http2.connect(h.baseUrl);
    session.on("error", () => undefined);
    try {
      const started = Date.now();
      const status = await new Promise<number>((resolve) => {
        const stream = session.request({
          ":method": "POST",
          ":path": "/UpdateSubscriptions?boxId=b&userId=u",
        });
        stream.write(Buffer.from([0x0a]));
        stream.on("response", (headers) => resolve(Number(headers[":status"])));
        stream.on("error", () => resolve(-1));
        stream.resume();
      });
      expect(status).toBe(408);
      expect(Date.now() - started).toBeGreaterThanOrEqual(700);
      await othersAreServed();
    } finally {
      session.destroy();
    }
  });
});

describe("keep-alive longer than the headers timeout (KEEP_ALIVE_TIMEOUT_MS 65 s, HEADERS_TIMEOUT_MS 20 s by default)", () => {
  it("an idle kept-alive connection is not cut by the headers timer: Node starts it at a request's first byte", async () => {
    const own = await startHarness(undefined, { ...LIMITS, headersMs: 300, keepAliveMs: 2_000 });
    try {
      const socket = net.connect(own.port, "127.0.0.1");
      let received = "";
      socket.on("data", (c: Buffer) => {
        received += c.toString("latin1");
      });
      await new Promise((r) => socket.once("connect", r));
      socket.write("GET /livez HTTP/1.1\r\nHost: x\r\n\r\n");
      await new Promise((r) => setTimeout(r, 900));
      socket.write("GET /livez HTTP/1.1\r\nHost: x\r\n\r\n");
      await new Promise((r) => setTimeout(r, 200));
      expect(received.match(/HTTP\/1\.1 200 OK/g)).toHaveLength(2);
      socket.destroy();
    } finally {
      await own.close();
    }
  });
});
