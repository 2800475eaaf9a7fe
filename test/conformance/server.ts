/**
 * The server under test of the Connect conformance suite (connectconformance
 * --mode server, run by test/conformance/run.sh): ConformanceService served
 * through the service's own front door — the listener (HTTP/1.1 and h2c on
 * one port), the route table, negotiation, the protocol adapters and the
 * interceptor chain of createHttpServer. Only what is served differs: this
 * service instead of ours, public (no credentials), its JSON registry, and
 * the size limit the runner asks for.
 *
 * No generated code: the suite's protos come from the Go module cache, built
 * by `buf build` into a descriptor set (CONFORMANCE_IMAGE), and the service is
 * implemented against the descriptors found there.
 *
 * The runner's protocol: one length-prefixed ServerCompatRequest on stdin;
 * one length-prefixed ServerCompatResponse on stdout (nothing else ever goes
 * to stdout: logs go to stderr); SIGTERM ends it.
 */
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import {
  create,
  createFileRegistry,
  type DescMessage,
  type DescService,
  type FileRegistry,
  fromBinary,
  type Message,
  toBinary,
} from "@bufbuild/protobuf";
import { type Any, anyPack, FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import {
  Code,
  ConnectError,
  type ConnectRouter,
  type HandlerContext,
  type ServiceImpl,
} from "@connectrpc/connect";
import { DEFAULT_TIMEOUTS } from "../../src/config";
import type { Deps } from "../../src/deps";
import type { ListenerTls } from "../../src/http/listener";
import { createHttpServer } from "../../src/http/server";
import { readTlsMaterial } from "../../src/http/tls";
import { createLogger } from "../../src/log";
import { makeCertificates } from "../support/tls-certs";

const PKG = "connectrpc.conformance.v1";

interface ProtoHeader {
  name: string;
  value: string[];
}
interface ProtoError {
  code: number;
  message?: string;
  details: Any[];
}
interface UnaryResponseDefinition {
  responseHeaders: ProtoHeader[];
  response:
    | { case: "responseData"; value: Uint8Array }
    | { case: "error"; value: ProtoError }
    | { case: undefined; value?: undefined };
  responseTrailers: ProtoHeader[];
  responseDelayMs: number;
  rawResponse?: Message;
}
interface StreamResponseDefinition {
  responseHeaders: ProtoHeader[];
  responseData: Uint8Array[];
  responseDelayMs: number;
  error?: ProtoError;
  responseTrailers: ProtoHeader[];
  rawResponse?: Message;
}
type UnaryLikeRequest = Message & { responseDefinition?: UnaryResponseDefinition };
type ServerStreamRequest = Message & { responseDefinition?: StreamResponseDefinition };
type BidiStreamRequest = Message & {
  responseDefinition?: StreamResponseDefinition;
  fullDuplex: boolean;
};
interface ServerCompatRequest {
  httpVersion: number;
  useTls: boolean;
  /** PEM: when set, the server must require a client certificate it signed. */
  clientTlsCert: Uint8Array;
  messageReceiveLimit: number;
}

const imagePath =
  process.env.CONFORMANCE_IMAGE ??
  new URL("../../test-results/conformance/image.binpb", import.meta.url).pathname;
const registry: FileRegistry = createFileRegistry(
  fromBinary(FileDescriptorSetSchema, readFileSync(imagePath)),
);
const message = (name: string): DescMessage => {
  const desc = registry.getMessage(`${PKG}.${name}`);
  if (!desc) throw new Error(`${PKG}.${name} is not in ${imagePath}`);
  return desc;
};
const service = registry.getService(`${PKG}.ConformanceService`) as DescService;
if (!service) throw new Error(`${PKG}.ConformanceService is not in ${imagePath}`);
const ServerCompatRequestDesc = message("ServerCompatRequest");
const ServerCompatResponseDesc = message("ServerCompatResponse");
const PayloadDesc = message("ConformancePayload");
const RequestInfoDesc = message("ConformancePayload.RequestInfo");
const ConnectGetInfoDesc = message("ConformancePayload.ConnectGetInfo");
const HeaderDesc = message("Header");

function headersToProto(headers: Headers): Message[] {
  const out: Message[] = [];
  headers.forEach((value, name) => {
    out.push(create(HeaderDesc, { name, value: [value] }));
  });
  return out;
}

function append(target: Headers, headers: ProtoHeader[] | undefined): void {
  for (const h of headers ?? []) for (const v of h.value) target.append(h.name, v);
}

/** What the call looked like, echoed back: headers, timeout, requests, Connect GET's query. */
function requestInfo(ctx: HandlerContext, requests: Any[], full = true): Message {
  if (!full) return create(RequestInfoDesc, { requests });
  const timeoutMs = ctx.timeoutMs();
  let connectGetInfo: Message | undefined;
  if (ctx.protocolName === "connect" && ctx.requestMethod === "GET") {
    const grouped = new Map<string, string[]>();
    for (const [k, v] of new URL(ctx.url, "http://localhost").searchParams) {
      grouped.set(k, [...(grouped.get(k) ?? []), v]);
    }
    connectGetInfo = create(ConnectGetInfoDesc, {
      queryParams: [...grouped].map(([name, value]) => create(HeaderDesc, { name, value })),
    });
  }
  return create(RequestInfoDesc, {
    requestHeaders: headersToProto(ctx.requestHeader),
    requests,
    ...(timeoutMs !== undefined ? { timeoutMs: BigInt(Math.max(0, Math.round(timeoutMs))) } : {}),
    ...(connectGetInfo ? { connectGetInfo } : {}),
  });
}

function payload(data: Uint8Array | undefined, info: Message | undefined): Message {
  return create(PayloadDesc, {
    ...(data !== undefined ? { data } : {}),
    ...(info !== undefined ? { requestInfo: info } : {}),
  });
}

/** The definition's error: its details as they came (raw Any), and the request info when given. */
function errorOf(err: ProtoError, info?: Message): ConnectError {
  const code = err.code >= 1 && err.code <= 16 ? (err.code as Code) : Code.Unknown;
  const e = new ConnectError(err.message ?? "", code);
  for (const d of err.details) {
    e.details.push({ type: d.typeUrl.slice(d.typeUrl.lastIndexOf("/") + 1), value: d.value });
  }
  if (info !== undefined) e.details.push({ desc: RequestInfoDesc, value: info });
  return e;
}

/** Waits `ms`, or less when the call's signal aborts (deadline, client gone). */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0) return signal.aborted ? Promise.reject(signal.reason) : Promise.resolve();
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

function noRaw(def: { rawResponse?: Message } | undefined): void {
  if (def?.rawResponse !== undefined) {
    throw new ConnectError("raw_response is only for the reference server", Code.InvalidArgument);
  }
}

async function unaryAnswer(
  def: UnaryResponseDefinition | undefined,
  requests: Any[],
  ctx: HandlerContext,
) {
  noRaw(def);
  const info = requestInfo(ctx, requests);
  if (def === undefined) return { payload: payload(undefined, info) };
  append(ctx.responseHeader, def.responseHeaders);
  append(ctx.responseTrailer, def.responseTrailers);
  if (def.response.case === "error") throw errorOf(def.response.value, info);
  await sleep(def.responseDelayMs, ctx.signal);
  return {
    payload: payload(def.response.case === "responseData" ? def.response.value : undefined, info),
  };
}

function routes(router: ConnectRouter): ConnectRouter {
  const input = (name: string) => {
    const method = service.methods.find((m) => m.name === name);
    if (!method) throw new Error(`no method ${name}`);
    return method.input;
  };
  const impl = {
    unary: (req: UnaryLikeRequest, ctx: HandlerContext) =>
      unaryAnswer(req.responseDefinition, [anyPack(input("Unary"), req)], ctx),
    idempotentUnary: (req: UnaryLikeRequest, ctx: HandlerContext) =>
      unaryAnswer(req.responseDefinition, [anyPack(input("IdempotentUnary"), req)], ctx),
    async clientStream(reqs: AsyncIterable<UnaryLikeRequest>, ctx: HandlerContext) {
      let def: UnaryResponseDefinition | undefined;
      const seen: Any[] = [];
      for await (const req of reqs) {
        if (seen.length === 0) def = req.responseDefinition;
        seen.push(anyPack(input("ClientStream"), req));
      }
      return unaryAnswer(def, seen, ctx);
    },
    async *serverStream(req: ServerStreamRequest, ctx: HandlerContext) {
      const def = req.responseDefinition;
      noRaw(def);
      if (def === undefined) return;
      const requests = [anyPack(input("ServerStream"), req)];
      append(ctx.responseHeader, def.responseHeaders);
      append(ctx.responseTrailer, def.responseTrailers);
      let sent = 0;
      for (const data of def.responseData) {
        await sleep(def.responseDelayMs, ctx.signal);
        yield { payload: payload(data, sent === 0 ? requestInfo(ctx, requests) : undefined) };
        sent++;
      }
      if (def.error !== undefined) {
        throw errorOf(def.error, sent === 0 ? requestInfo(ctx, requests) : undefined);
      }
    },
    async *bidiStream(reqs: AsyncIterable<BidiStreamRequest>, ctx: HandlerContext) {
      let def: StreamResponseDefinition | undefined;
      let fullDuplex = false;
      let first = true;
      let sent = 0;
      let pending: Any[] = [];
      for await (const req of reqs) {
        pending.push(anyPack(input("BidiStream"), req));
        if (first) {
          first = false;
          def = req.responseDefinition;
          fullDuplex = req.fullDuplex;
          noRaw(def);
          append(ctx.responseHeader, def?.responseHeaders);
          append(ctx.responseTrailer, def?.responseTrailers);
        }
        if (!fullDuplex) continue;
        if (sent >= (def?.responseData.length ?? 0)) break;
        await sleep(def?.responseDelayMs ?? 0, ctx.signal);
        yield { payload: payload(def?.responseData[sent], requestInfo(ctx, pending, sent === 0)) };
        sent++;
        pending = [];
      }
      if (def === undefined) return;
      for (; sent < def.responseData.length; sent++) {
        await sleep(def.responseDelayMs, ctx.signal);
        yield {
          payload: payload(
            def.responseData[sent],
            sent === 0 ? requestInfo(ctx, pending) : undefined,
          ),
        };
      }
      if (def.error !== undefined) {
        throw errorOf(def.error, sent === 0 ? requestInfo(ctx, pending) : undefined);
      }
    },
    // Unimplemented is left out: the service answers it with Code.Unimplemented.
  };
  // A registry's DescService has no static method types to check `impl` against.
  return router.service(service, impl as unknown as ServiceImpl<DescService>);
}

function readRequest(): ServerCompatRequest {
  const input = readFileSync(0);
  const length = input.readUInt32BE(0);
  return fromBinary(
    ServerCompatRequestDesc,
    input.subarray(4, 4 + length),
  ) as unknown as ServerCompatRequest;
}

async function main(): Promise<void> {
  const req = readRequest();
  // TLS as the service serves it (TLS_CERT_FILE, TLS_KEY_FILE, TLS_CLIENT_CA_FILE): files
  // made for this run; the runner trusts the CA it is given back as pem_cert.
  let tls: ListenerTls | undefined;
  let caPem: Buffer | undefined;
  if (req.useTls) {
    const certs = await makeCertificates();
    certs.issue("server", "0x5005");
    caPem = certs.ca;
    const clientCaFile = req.clientTlsCert.length > 0 ? certs.file("client-ca.pem") : undefined;
    if (clientCaFile) writeFileSync(clientCaFile, req.clientTlsCert);
    const files = {
      certFile: certs.file("server.pem"),
      keyFile: certs.file("server.key"),
      ...(clientCaFile ? { clientCaFile } : {}),
    };
    tls = { files, material: readTlsMaterial(files), reloadIntervalMs: 3_600_000 };
  }
  // The log goes to a file (CONFORMANCE_LOG, set by run.sh): the suite's error cases log
  // thousands of lines, which would bury anything Node itself says on stderr.
  const logFile = process.env.CONFORMANCE_LOG;
  const log = createLogger("warn", (line) =>
    logFile ? appendFileSync(logFile, `${line}\n`) : process.stderr.write(`${line}\n`),
  );
  // The interceptors need only these of the service's dependencies for a public service.
  const deps = { log, now: () => new Date(), healthy: async () => true } as unknown as Deps;
  const server = createHttpServer(
    deps,
    { ...DEFAULT_TIMEOUTS, shutdownMs: 1_000 },
    {
      corsAllowedOrigins: [],
      routes,
      publicServices: new Set([service.typeName]),
      jsonRegistry: registry,
      ...(req.messageReceiveLimit > 0 && { maxRequestBytes: req.messageReceiveLimit }),
      tls,
    },
  );
  const address = await server.listen(0, "127.0.0.1");
  const body = toBinary(
    ServerCompatResponseDesc,
    create(ServerCompatResponseDesc, {
      host: address.address,
      port: address.port,
      ...(caPem ? { pemCert: caPem } : {}),
    }),
  );
  const prefix = Buffer.alloc(4);
  prefix.writeUInt32BE(body.length);
  process.stdout.write(Buffer.concat([prefix, body]));
  process.on("SIGTERM", () => {
    void server.close().finally(() => process.exit(0));
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`conformance server failed: ${String(error)}\n`);
  process.exit(1);
});
