/** A real server on a free port, over a test database, with clients for every protocol. */
import { EventEmitter } from "node:events";
import http from "node:http";
import type { DescMessage, DescMethodUnary, DescService, MessageShape } from "@bufbuild/protobuf";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import { type Client, Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import type { Db, MongoClient } from "mongodb";
import { afterAll, beforeAll } from "vitest";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb";
import { StatusSchema } from "../../gen/google/rpc/status_pb";
import { type AdmissionConfig, DEFAULT_ADMISSION } from "../../src/admission/admission";
import { DEFAULT_TIMEOUTS, type Timeouts } from "../../src/config";
import { createDeps, type Deps, type DepsOptions } from "../../src/deps";
import { loadFixture } from "../../src/fixtures/load";
import { createHttpServer, type HttpServer, type HttpServerOptions } from "../../src/http/server";
import { createLogger, type LogLevel } from "../../src/log";
import { createObserver } from "../../src/observability/observer";
import type { Tracing } from "../../src/observability/tracing";
import { createPipeline } from "../../src/rpc/pipeline";
import { type Database, type DatabaseOptions, openDatabase } from "../../src/storage/database";
import type { ReadCacheOptions } from "../../src/storage/read-cache";
import { startTestDatabase, type TestDatabase } from "./database";
import { baseFixture } from "./fixture";
import { createInMemoryTransport } from "./in-memory-transport";
import { guardProjections } from "./projection-guard";

/**
 * What every tier that needs a database has (in-memory and server): the
 * fixture loaded, the handlers' dependencies, their log lines.
 */
export interface Served {
  readonly db: Db;
  readonly deps: Deps;
  readonly logs: string[];
  /**
   * The first log line (parsed) that `matches`, waiting for it if it is not
   * there yet: a causal wait, bounded only to fail rather than hang.
   */
  waitForLog(matches: (line: LogLine) => boolean): Promise<LogLine>;
  close(): Promise<void>;
}

/** The server tier: the service's front on a free port, over a test database. */
export interface Harness extends Served {
  readonly baseUrl: string;
  readonly port: number;
  readonly server: HttpServer;
}

/** A harness the calls reach without a port (the in-memory tier), or a served port. */
export function isServer(h: Served): h is Harness {
  return "baseUrl" in h;
}

/**
 * Starts a harness before the file's tests and closes it after them; the
 * returned object reads through to it.
 */
export function useHarness(
  fixture: () => unknown = baseFixture,
  timeouts: Timeouts = TEST_TIMEOUTS,
  options: HarnessOptions = {},
): Harness {
  let current: Harness | undefined;
  beforeAll(async () => {
    current = await startHarness(fixture(), timeouts, TEST_CACHE, options);
  });
  afterAll(async () => {
    await current?.close();
  });
  const get = (): Harness => {
    if (!current) throw new Error("the harness is not started yet");
    return current;
  };
  return {
    get baseUrl() {
      return get().baseUrl;
    },
    get port() {
      return get().port;
    },
    get db() {
      return get().db;
    },
    get deps() {
      return get().deps;
    },
    get server() {
      return get().server;
    },
    get logs() {
      return get().logs;
    },
    waitForLog: (matches) => get().waitForLog(matches),
    close: () => get().close(),
  };
}

/** The service's own cache settings: tests run the cached path production runs. */
export const TEST_CACHE = { ttlMs: 5_000, maxEntries: 10_000 };

/**
 * Admission of test servers: the service's defaults, but a call may wait up
 * to the call deadline for a slot. Tests run two files at a time on loaded
 * CI machines and send bursts of 50–200 calls (the concurrency tests), whose
 * waits there can pass the 100 ms a production queue allows; a refusal would
 * be the machine's noise, not the rule under test. The admission tests
 * (test/server/overload.test.ts) set their own.
 */
export const TEST_ADMISSION: AdmissionConfig = {
  ...DEFAULT_ADMISSION,
  queueTargetMs: 10_000,
  // The target is also bounded by the SLO less the service time: 10 s of room too.
  sloMs: 20_000,
};

/**
 * The failure budget of test servers: on, as in production, but wide enough
 * for the hundreds of refused calls the auth and protocol tests send from one
 * address. The budget's own tests (test/server/security.test.ts) set theirs.
 */
export const TEST_AUTH_FAILURES = { perAddress: 100_000, perKey: 100_000, windowMs: 60_000 };

/** Timeouts of test servers: the service's defaults unless a test asks for others. */
export const TEST_TIMEOUTS: Timeouts = { ...DEFAULT_TIMEOUTS, shutdownMs: 5_000 };

/** What a test may add: test hooks of the domain, a command listener, the server's options, a database. */
export type HarnessOptions = Pick<
  DepsOptions,
  "groupHooks" | "markHooks" | "bearer" | "serviceAuthAliases" | "authFailures"
> &
  Pick<DatabaseOptions, "onCommand"> &
  Partial<HttpServerOptions> & {
    /** A database to serve instead of a fresh one; the harness leaves it running. */
    readonly database?: TestDatabase;
    /** Traces (an in-memory exporter in tests): SERVER spans, MongoDB spans, ids in log lines. */
    readonly tracing?: Promise<Tracing>;
    /** The address to listen on (default 127.0.0.1; calls go to 127.0.0.1 either way). */
    readonly listenHost?: string;
    /** Watches the database client as main.ts does for metrics (command and pool monitoring). */
    readonly databaseMonitor?: (client: MongoClient) => void;
    /** The least level logged (default info). */
    readonly logLevel?: LogLevel;
  };

/**
 * The database with the fixture and the handlers' dependencies, no port:
 * what the in-memory tier runs on (see `startHarness` for the server tier).
 */
export async function startServed(
  fixture: unknown = baseFixture(),
  timeouts: Timeouts = TEST_TIMEOUTS,
  cache: ReadCacheOptions = TEST_CACHE,
  options: HarnessOptions = {},
): Promise<Served & { readonly tracing: Tracing | undefined }> {
  const testDb: TestDatabase = options.database
    ? { ...options.database, close: async () => undefined }
    : await startTestDatabase();
  // Whatever fails from here on, the database started above is not left running.
  let database: Database | undefined;
  try {
    const tracing = await options.tracing;
    database = await openDatabase({
      uri: testDb.uri,
      name: testDb.name,
      operationTimeoutMs: timeouts.databaseMs,
      onCommand: options.onCommand,
      monitor:
        tracing || options.databaseMonitor
          ? (client) => {
              tracing?.attach(client);
              options.databaseMonitor?.(client);
            }
          : undefined,
    });
    const open = database;
    await loadFixture(open.db, fixture);
    const logs: string[] = [];
    const logWritten = new EventEmitter();
    // The stores read through the projection guard: a field read but not projected is
    // missing here as on a real server (the embedded engine ignores projections).
    const deps = createDeps(
      { ...open, db: guardProjections(open.db) },
      createLogger(
        options.logLevel ?? "info",
        (line) => {
          logs.push(line);
          logWritten.emit("line");
        },
        () => tracing?.logFields(),
      ),
      {
        healthTimeoutMs: timeouts.healthMs,
        cache,
        groupHooks: options.groupHooks,
        markHooks: options.markHooks,
        bearer: options.bearer,
        serviceAuthAliases: options.serviceAuthAliases,
        authFailures: options.authFailures ?? TEST_AUTH_FAILURES,
      },
    );
    return {
      db: open.db,
      deps,
      logs,
      tracing,
      waitForLog: (matches) => waitForLog(logs, logWritten, matches),
      async close() {
        await open.close();
        await testDb.close();
      },
    };
  } catch (error) {
    await database?.close().catch(() => undefined);
    await testDb.close().catch(() => undefined);
    throw error;
  }
}

/** The server tier: `startServed` and the service's front listening on a free port. */
export async function startHarness(
  fixture: unknown = baseFixture(),
  timeouts: Timeouts = TEST_TIMEOUTS,
  cache: ReadCacheOptions = TEST_CACHE,
  options: HarnessOptions = {},
): Promise<Harness> {
  const served = await startServed(fixture, timeouts, cache, options);
  try {
    const server = createHttpServer(served.deps, timeouts, {
      corsAllowedOrigins: options.corsAllowedOrigins ?? [],
      publicUrl: options.publicUrl,
      tls: options.tls,
      demoCredentials: options.demoCredentials,
      observer:
        options.observer ??
        (served.tracing ? createObserver(undefined, served.tracing.tracer) : undefined),
      admission: options.admission ?? TEST_ADMISSION,
      connections: options.connections,
      trustedProxies: options.trustedProxies,
      opsPort: options.opsPort,
      maxRequestBytes: options.maxRequestBytes,
      routes: options.routes,
    });
    const address = await server.listen(0, options.listenHost ?? "127.0.0.1");
    return {
      ...served,
      baseUrl: `http://127.0.0.1:${address.port}`,
      port: address.port,
      server,
      async close() {
        await server.close();
        await served.close();
      },
    };
  } catch (error) {
    await served.close().catch(() => undefined);
    throw error;
  }
}

/**
 * The in-memory tier: `startServed` before the file's tests, closed after
 * them. Calls reach the service's pipeline through the in-memory transport
 * (protocol "in-memory"): no port, no HTTP.
 */
export function useInMemory(
  fixture: () => unknown = baseFixture,
  options: HarnessOptions = {},
): Served {
  let current: Served | undefined;
  beforeAll(async () => {
    current = await startServed(fixture(), TEST_TIMEOUTS, TEST_CACHE, options);
  });
  afterAll(async () => {
    await current?.close();
  });
  const get = (): Served => {
    if (!current) throw new Error("the in-memory harness is not started yet");
    return current;
  };
  return {
    get db() {
      return get().db;
    },
    get deps() {
      return get().deps;
    },
    get logs() {
      return get().logs;
    },
    waitForLog: (matches) => get().waitForLog(matches),
    close: () => get().close(),
  };
}

/** A log line as written: one JSON object. */
export type LogLine = Record<string, unknown>;

/** How long a test waits for a log line before it fails (not a sleep: it returns at the line). */
const LOG_WAIT_MS = 15_000;

function waitForLog(
  logs: readonly string[],
  written: EventEmitter,
  matches: (line: LogLine) => boolean,
): Promise<LogLine> {
  const find = () => logs.map((l) => JSON.parse(l) as LogLine).find(matches);
  return new Promise((resolve, reject) => {
    const found = find();
    if (found) return resolve(found);
    const timer = setTimeout(() => {
      written.off("line", check);
      reject(new Error("no such log line was written"));
    }, LOG_WAIT_MS);
    function check() {
      const line = find();
      if (!line) return;
      clearTimeout(timer);
      written.off("line", check);
      resolve(line);
    }
    written.on("line", check);
  });
}

// ---------------------------------------------------------------- RPC protocols

export const RPC_PROTOCOLS = ["connect-json", "connect-binary", "grpc", "grpc-web"] as const;
/** The wire protocols, and "in-memory": the service's pipeline with no network (in-memory-transport.ts). */
export type RpcProtocol = (typeof RPC_PROTOCOLS)[number] | "in-memory";

/** What any protocol answered, in one shape. */
export type RpcResult<O> =
  | { ok: true; message: O }
  | { ok: false; code: Code; message: string; reason?: string; errorCode?: string };

export async function callRpc<I extends DescMessage, O extends DescMessage>(
  target: Served,
  protocol: RpcProtocol,
  method: DescMethodUnary<I, O>,
  request: MessageShape<I>,
  authorization?: string,
  extraHeaders: Record<string, string> = {},
): Promise<RpcResult<MessageShape<O>>> {
  const headers: Record<string, string> = {
    ...extraHeaders,
    ...(authorization ? { authorization } : {}),
  };
  if (protocol === "in-memory") {
    return unaryOver(inMemoryTransport(target), method, request, headers);
  }
  const h = server(target, protocol);
  if (protocol === "grpc") {
    return grpcUnary(h, method, request, headers);
  }
  const transport =
    protocol === "grpc-web"
      ? createGrpcWebTransport({ baseUrl: h.baseUrl, httpVersion: "1.1" })
      : createConnectTransport({
          baseUrl: h.baseUrl,
          httpVersion: "1.1",
          useBinaryFormat: protocol === "connect-binary",
        });
  return unaryOver(transport, method, request, headers);
}

/** A harness with a port, for a protocol that needs one. */
export function server(target: Served, protocol: string): Harness {
  if (!isServer(target)) throw new Error(`${protocol} needs the server tier (a port)`);
  return target;
}

async function unaryOver<I extends DescMessage, O extends DescMessage>(
  transport: Transport,
  method: DescMethodUnary<I, O>,
  request: MessageShape<I>,
  headers: Record<string, string>,
): Promise<RpcResult<MessageShape<O>>> {
  try {
    const res = await transport.unary(method, undefined, undefined, headers, request);
    return { ok: true, message: res.message };
  } catch (error) {
    const e = ConnectError.from(error);
    const info = e.findDetails(ErrorInfoSchema)[0];
    return {
      ok: false,
      code: e.code,
      message: e.rawMessage,
      reason: info?.reason,
      errorCode: info?.metadata.errorCode,
    };
  }
}

const inMemory = new WeakMap<Deps, Transport>();

/** The service's routes and interceptors in memory: the tier for domain rules (STYLE.md). */
function inMemoryTransport(h: Served): Transport {
  let transport = inMemory.get(h.deps);
  if (!transport) {
    transport = createInMemoryTransport(
      createPipeline(h.deps, { callDeadlineMs: TEST_TIMEOUTS.callDeadlineMs }),
    );
    inMemory.set(h.deps, transport);
  }
  return transport;
}

/** A typed Connect client, for tests that need only one protocol. */
export function connectClient<S extends DescService>(
  h: Harness,
  service: S,
  authorization?: string,
): Client<S> {
  const transport = createConnectTransport({
    baseUrl: h.baseUrl,
    httpVersion: "1.1",
    interceptors: authorization
      ? [
          (next) => (req) => {
            req.header.set("authorization", authorization);
            return next(req);
          },
        ]
      : [],
  });
  return createClient(service, transport);
}

/** A real gRPC client (@grpc/grpc-js) over h2c. */
export function grpcUnary<I extends DescMessage, O extends DescMessage>(
  h: Harness,
  method: DescMethodUnary<I, O>,
  request: MessageShape<I>,
  headers: Record<string, string>,
): Promise<RpcResult<MessageShape<O>>> {
  const client = new grpc.Client(`127.0.0.1:${h.port}`, grpc.credentials.createInsecure());
  const metadata = new grpc.Metadata();
  for (const [k, v] of Object.entries(headers)) metadata.set(k, v);
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      `/${method.parent.typeName}/${method.name}`,
      (m: MessageShape<I>) => Buffer.from(toBinary(method.input, m)),
      (b: Buffer) => fromBinary(method.output, b),
      request,
      metadata,
      (error, response) => {
        client.close();
        if (error) {
          const bin = error.metadata?.get("grpc-status-details-bin")[0];
          let reason: string | undefined;
          let errorCode: string | undefined;
          if (bin instanceof Buffer) {
            const status = fromBinary(StatusSchema, bin);
            for (const any of status.details) {
              const info = anyUnpack(any, ErrorInfoSchema);
              if (info) {
                reason = info.reason;
                errorCode = info.metadata.errorCode;
              }
            }
          }
          resolve({
            ok: false,
            code: error.code as number as Code,
            message: error.details,
            reason,
            errorCode,
          });
        } else if (response) {
          resolve({ ok: true, message: response });
        } else {
          resolve({ ok: false, code: Code.Unknown, message: "no response" });
        }
      },
    );
  });
}

// ---------------------------------------------------------------- legacy HTTP

export interface LegacyResponse {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: Buffer;
  readonly text: string;
}

export interface LegacyRequest {
  readonly method: string;
  /** Path and query, e.g. `/GetSubscriptions?boxId=…`. */
  readonly path: string;
  /** Sent exactly as given: no Accept or Content-Type unless listed. */
  readonly headers?: Record<string, string>;
  readonly body?: Uint8Array | string;
}

/** A bare node:http request, so that no Accept or Content-Type is added. */
export function legacy(h: Harness, req: LegacyRequest): Promise<LegacyResponse> {
  return new Promise((resolve, reject) => {
    const body = typeof req.body === "string" ? Buffer.from(req.body, "utf8") : req.body;
    const r = http.request(
      {
        host: "127.0.0.1",
        port: h.port,
        method: req.method,
        path: req.path,
        headers: {
          ...(req.headers ?? {}),
          ...(body ? { "content-length": String(body.length) } : {}),
        },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const all = Buffer.concat(chunks);
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: all,
            text: all.toString("utf8"),
          });
        });
      },
    );
    r.on("error", reject);
    r.end(body);
  });
}

export { create };
