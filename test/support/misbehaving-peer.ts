/**
 * A local HTTP "server" that misbehaves on purpose, for tests of outbound
 * clients (the JWKS fetch, the OTLP exporter): raw `node:net` sockets, so it
 * can lie about lengths, cut bodies, drip, hang, redirect or send garbage.
 *
 * A scenario is chosen per server (`startPeer("slow-drip")`) or per request
 * (`peer.urlFor("big-503")`: the first path segment names it). It counts
 * connections and requests and records who closed each connection, so a test
 * can check that its client let go of the socket.
 */
import { spawn } from "node:child_process";
import net from "node:net";

export const SCENARIOS = [
  "big-200", // (a) 200, Content-Length 100 KiB, the body, then close
  "big-503", // (b) 503 with a 100 KiB body, then close
  "big-404", // (c) 404 with a 70 KiB body, then close
  "truncated", // (d) Content-Length 32 KiB, 8 KiB sent, then close mid-body
  "overlong", // (e) Content-Length 11, 1 KiB sent, connection left open
  "cut-chunk", // (f) chunked, cut off inside a chunk, then close
  "slow-drip", // (g) 200 headers (no length), then one byte every 200 ms, forever
  "silent", // (h) the request is read, nothing is ever answered
  "redirect-302", // (i) 302 to /ok on this peer
  "redirect-307", // (i) 307 to /ok on this peer
  "huge-headers", // (j) a 200 whose header section is 1 MiB
  "garbage", // (k) bytes that are not HTTP, connection left open
  "ok", // (l) a well-behaved 200 with a small JSON body (keep-alive)
  "close-on-accept", // (m) the connection is closed as soon as it is accepted
] as const;
export type Scenario = (typeof SCENARIOS)[number];

export interface PeerOptions {
  /** Body size of big-200 / big-503 / big-404 (defaults 100 KiB, 100 KiB, 70 KiB). */
  readonly bodyBytes?: number;
  /** big-*: no Content-Length, the body runs until the close. */
  readonly undeclared?: boolean;
  /** Body of "ok" (default `{"keys":[]}`). */
  readonly okBody?: string;
  /** Gap between the bytes of "slow-drip" (default 200 ms). */
  readonly dripMs?: number;
  /** Location of the redirects (default: this peer's /ok). */
  readonly redirectTo?: string;
}

export interface ConnectionRecord {
  /** Scenarios answered on this connection, in order. */
  readonly scenarios: Scenario[];
  /** "peer": this server ended it; "client": the client sent FIN or reset first. */
  closedBy: "peer" | "client" | undefined;
  closed: boolean;
}

export interface RequestRecord {
  readonly method: string;
  readonly path: string;
  readonly scenario: Scenario;
}

export interface Peer {
  /** The base URL, answered with the server's scenario (any path). */
  readonly url: string;
  /** A URL whose request is answered with `scenario`, whatever the server's. */
  urlFor(scenario: Scenario): string;
  /** Complete request heads received (a request that never finishes its head is not counted). */
  requests(): number;
  requestLog(): readonly RequestRecord[];
  connections(): number;
  connectionLog(): readonly ConnectionRecord[];
  /** Connections still open. */
  open(): number;
  /** Resolves true once every connection is closed, false if some are still open after `timeoutMs`. */
  allClosed(timeoutMs?: number): Promise<boolean>;
  /** Destroys every connection and stops listening. */
  close(): Promise<void>;
}

const KiB = 1024;
const HEAD_LIMIT = 64 * KiB;

/** Starts a peer on 127.0.0.1 (a free port) answering `scenario` unless a request's path names another. */
export async function startPeer(
  scenario: Scenario = "ok",
  options: PeerOptions = {},
): Promise<Peer> {
  const connections: ConnectionRecord[] = [];
  const requests: RequestRecord[] = [];
  const sockets = new Set<net.Socket>();
  let base = "";

  const server = net.createServer((socket) => {
    const record: ConnectionRecord = { scenarios: [], closedBy: undefined, closed: false };
    connections.push(record);
    sockets.add(socket);
    const timers = new Set<NodeJS.Timeout>();
    const endByPeer = (destroy = false) => {
      record.closedBy ??= "peer";
      if (destroy) socket.destroy();
      else socket.end();
    };
    socket.on("end", () => {
      record.closedBy ??= "client"; // net ends our side too (allowHalfOpen is off)
    });
    socket.on("error", () => {
      record.closedBy ??= "client";
    });
    socket.on("close", () => {
      record.closed = true;
      sockets.delete(socket);
      for (const t of timers) clearInterval(t);
    });

    if (scenario === "close-on-accept") {
      record.scenarios.push(scenario);
      endByPeer(true);
      return;
    }

    const ctx: Answer = { socket, timers, endByPeer, options, base: () => base };
    let buffered: Buffer = Buffer.alloc(0);
    let busy = false; // a scenario that never finishes its answer owns the connection
    socket.on("data", (chunk: Buffer) => {
      if (busy) return;
      buffered = Buffer.concat([buffered, chunk]);
      for (;;) {
        const request = takeRequest(buffered);
        if (request === "bad") return endByPeer(true);
        if (request === "incomplete") return;
        buffered = request.rest;
        const named = request.path.split("/")[1] ?? "";
        const chosen = (SCENARIOS as readonly string[]).includes(named)
          ? (named as Scenario)
          : scenario;
        requests.push({ method: request.method, path: request.path, scenario: chosen });
        record.scenarios.push(chosen);
        if (!answer(chosen, ctx)) {
          busy = true;
          return;
        }
      }
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const address = server.address() as net.AddressInfo;
  base = `http://127.0.0.1:${address.port}`;

  return {
    url: `${base}/`,
    urlFor: (s) => `${base}/${s}`,
    requests: () => requests.length,
    requestLog: () => requests,
    connections: () => connections.length,
    connectionLog: () => connections,
    open: () => sockets.size,
    async allClosed(timeoutMs = 2_000) {
      const until = Date.now() + timeoutMs;
      while (sockets.size > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
      return sockets.size === 0;
    },
    close() {
      for (const s of sockets) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

interface Answer {
  readonly socket: net.Socket;
  readonly timers: Set<NodeJS.Timeout>;
  readonly endByPeer: (destroy?: boolean) => void;
  readonly options: PeerOptions;
  readonly base: () => string;
}

/** Writes the answer of `scenario`; false when it keeps the connection (no further request is read). */
function answer(scenario: Scenario, ctx: Answer): boolean {
  const { socket, options, endByPeer } = ctx;
  const head = (status: string, headers: readonly string[]) =>
    `HTTP/1.1 ${status}\r\n${headers.map((h) => `${h}\r\n`).join("")}\r\n`;
  const sized = (status: string, fallback: number) => {
    const size = options.bodyBytes ?? fallback;
    const length = options.undeclared ? [] : [`Content-Length: ${size}`];
    socket.write(head(status, ["Content-Type: application/json", ...length, "Connection: close"]));
    pump(socket, size, () => endByPeer());
  };
  switch (scenario) {
    case "big-200":
      sized("200 OK", 100 * KiB);
      return false;
    case "big-503":
      sized("503 Service Unavailable", 100 * KiB);
      return false;
    case "big-404":
      sized("404 Not Found", 70 * KiB);
      return false;
    case "truncated":
      socket.write(
        head("200 OK", ["Content-Type: application/json", `Content-Length: ${32 * KiB}`]),
      );
      socket.write(Buffer.alloc(8 * KiB, 0x20));
      endByPeer();
      return false;
    case "overlong": {
      const body = `{"keys":[]}${"x".repeat(KiB)}`;
      socket.write(head("200 OK", ["Content-Type: application/json", "Content-Length: 11"]) + body);
      return false;
    }
    case "cut-chunk":
      socket.write(
        head("200 OK", ["Content-Type: application/json", "Transfer-Encoding: chunked"]),
      );
      socket.write(`1000\r\n${"x".repeat(100)}`);
      endByPeer();
      return false;
    case "slow-drip": {
      socket.write(head("200 OK", ["Content-Type: application/json", "Connection: close"]));
      const drip = setInterval(() => socket.writable && socket.write(" "), options.dripMs ?? 200);
      ctx.timers.add(drip);
      return false;
    }
    case "silent":
      return false;
    case "redirect-302":
    case "redirect-307": {
      const location = options.redirectTo ?? `${ctx.base()}/ok`;
      const status = scenario === "redirect-302" ? "302 Found" : "307 Temporary Redirect";
      socket.write(
        head(status, [`Location: ${location}`, "Content-Length: 0", "Connection: close"]),
      );
      endByPeer();
      return false;
    }
    case "huge-headers": {
      const line = `X-Padding: ${"p".repeat(1000)}\r\n`;
      const lines = Math.ceil((1024 * KiB) / line.length);
      socket.write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n");
      let sent = 0;
      const next = () => {
        while (sent < lines && !socket.destroyed) {
          sent++;
          if (!socket.write(line)) return void socket.once("drain", next);
        }
        if (!socket.destroyed)
          socket.write('Content-Length: 11\r\nConnection: close\r\n\r\n{"keys":[]}');
      };
      next();
      return false;
    }
    case "garbage":
      socket.write(
        Buffer.from(
          "SSH-2.0-OpenSSH_9.6\r\n\u0000\u00ff\u00fe garbage \u0001\u0002\r\n\r\n",
          "latin1",
        ),
      );
      return false;
    case "ok": {
      const body = Buffer.from(options.okBody ?? '{"keys":[]}');
      socket.write(
        head("200 OK", ["Content-Type: application/json", `Content-Length: ${body.length}`]),
      );
      socket.write(body);
      return true;
    }
    case "close-on-accept": // per server only; a request naming it is closed at once
      endByPeer(true);
      return false;
  }
}

/** Writes `size` filler bytes with backpressure (a 500 MB body is never held in memory), then `done`. */
function pump(socket: net.Socket, size: number, done: () => void): void {
  const block = Buffer.alloc(Math.min(size, 64 * KiB), 0x61);
  let left = size;
  const next = () => {
    while (left > 0 && !socket.destroyed) {
      const n = Math.min(left, block.length);
      left -= n;
      if (!socket.write(n === block.length ? block : block.subarray(0, n))) {
        socket.once("drain", next);
        return;
      }
    }
    if (!socket.destroyed) done();
  };
  next();
}

interface ParsedRequest {
  readonly method: string;
  readonly path: string;
  readonly rest: Buffer;
}

/** One request (head and body, Content-Length or chunked) off the front of `data`. */
function takeRequest(data: Buffer): ParsedRequest | "incomplete" | "bad" {
  const end = data.indexOf("\r\n\r\n");
  if (end < 0) return data.length > HEAD_LIMIT ? "bad" : "incomplete";
  const lines = data.subarray(0, end).toString("latin1").split("\r\n");
  const [method = "", path = "/"] = (lines[0] ?? "").split(" ");
  const header = (name: string) =>
    lines
      .slice(1)
      .find((l) => l.toLowerCase().startsWith(`${name}:`))
      ?.slice(name.length + 1)
      .trim();
  let at = end + 4;
  if (header("transfer-encoding")?.toLowerCase().includes("chunked")) {
    for (;;) {
      const eol = data.indexOf("\r\n", at);
      if (eol < 0) return "incomplete";
      const size = Number.parseInt(data.subarray(at, eol).toString("latin1"), 16);
      if (Number.isNaN(size)) return "bad";
      if (size > 0) {
        at = eol + 2 + size + 2;
        continue;
      }
      // The last chunk: an empty line, or trailers and then an empty line.
      if (data.subarray(eol + 2, eol + 4).toString("latin1") === "\r\n") at = eol + 4;
      else {
        const trailersEnd = data.indexOf("\r\n\r\n", eol + 2);
        if (trailersEnd < 0) return "incomplete";
        at = trailersEnd + 4;
      }
      break;
    }
  } else {
    at += Number(header("content-length") ?? "0");
  }
  if (at > data.length) return "incomplete";
  return { method, path, rest: data.subarray(at) };
}

/**
 * Runs `program` (an ES module, TypeScript through tsx) in a fresh Node
 * process of the project's Node, where an uncaught error would end it: its
 * exit code, standard output and standard error.
 */
export async function runInFreshProcess(
  program: string,
): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", program], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (d: Buffer) => {
    out += d;
  });
  child.stderr.on("data", (d: Buffer) => {
    err += d;
  });
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  return { code, out, err };
}

/**
 * Records every uncaught exception and unhandled rejection of the test
 * file's process: a misbehaving peer must cause neither. Call at the top
 * of a file; `caught` holds what was seen.
 */
export function watchUnhandled(hooks: {
  beforeAll: (fn: () => void) => void;
  afterAll: (fn: () => void) => void;
}): unknown[] {
  const caught: unknown[] = [];
  const record = (error: unknown) => caught.push(error);
  hooks.beforeAll(() => {
    process.on("uncaughtException", record);
    process.on("unhandledRejection", record);
  });
  hooks.afterAll(() => {
    process.off("uncaughtException", record);
    process.off("unhandledRejection", record);
  });
  return caught;
}
