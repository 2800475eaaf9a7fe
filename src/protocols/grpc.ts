/**
 * gRPC (over HTTP/2): `application/grpc[+proto|+json]`, POST, enveloped
 * messages, `grpc-timeout`, `grpc-encoding` / `grpc-accept-encoding`, the
 * status in trailers (`grpc-status`, `grpc-message`,
 * `grpc-status-details-bin`), after the headers, also for an error before
 * any message.
 */
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import { ACCEPTED_CODINGS, answerCoding, codingOf } from "../wire/compression";
import { type NodeRequest, type NodeResponse, sendHead } from "../wire/http";
import { errorMetadata, grpcStatusTrailers } from "../wire/rpc-errors";
import {
  type CallSettings,
  COMPRESSED_FLAG,
  type Codecs,
  header,
  type RpcAdapter,
} from "./adapter";

const CONTENT_TYPE = /^application\/grpc(?:\+(?:(json)(?:; ?charset=utf-?8)?|proto))?$/i;
const TIMEOUT = /^(\d{1,8})([HMSmun])$/;
const UNIT_MS: Readonly<Record<string, number>> = {
  H: 3_600_000,
  M: 60_000,
  S: 1_000,
  m: 1,
  u: 0.001,
  n: 0.000001,
};
/** Headers the protocol writes itself: an error's metadata never overrides them. */
const RESERVED: ReadonlySet<string> = new Set([
  "content-type",
  "grpc-status",
  "grpc-message",
  "grpc-status-details-bin",
  "grpc-encoding",
]);

/** A gRPC timeout header in milliseconds; an error for a malformed one. */
export function parseGrpcTimeout(value: string | null): number | undefined | ConnectError {
  if (value === null) return undefined;
  const match = TIMEOUT.exec(value);
  if (!match) {
    return new ConnectError(
      `protocol error: invalid grpc timeout value: ${value.slice(0, 40)}`,
      Code.InvalidArgument,
    );
  }
  return Number(match[1]) * (UNIT_MS[match[2] as string] as number);
}

/** The gRPC family's client deadline, in ms: `grpc-timeout`, when well formed. */
export function grpcClientTimeoutMs(req: NodeRequest): number | undefined {
  const timeout = parseGrpcTimeout(header(req, "grpc-timeout"));
  return typeof timeout === "number" ? timeout : undefined;
}

/**
 * The settings the gRPC family (gRPC, gRPC-Web) reads from its headers:
 * codec by content type, timeout, request coding, answer coding.
 */
export function grpcSettings(req: NodeRequest, codecs: Codecs, json: boolean): CallSettings {
  const timeout = parseGrpcTimeout(header(req, "grpc-timeout"));
  const requested = header(req, "grpc-encoding");
  const requestCoding = codingOf(requested);
  const base = {
    codec: json ? codecs.json : codecs.proto,
    timeoutMs: typeof timeout === "number" ? timeout : undefined,
    requestCoding: requestCoding ?? ("identity" as const),
    answerCoding: answerCoding(requestCoding ?? "identity", header(req, "grpc-accept-encoding")),
  };
  if (requestCoding === undefined) {
    return {
      ...base,
      refused: new ConnectError(
        `unknown compression "${(requested ?? "").slice(0, 40)}": supported encodings are ${ACCEPTED_CODINGS}`,
        Code.Unimplemented,
        { "grpc-accept-encoding": ACCEPTED_CODINGS },
      ),
    };
  }
  if (timeout instanceof ConnectError) return { ...base, refused: timeout };
  return base;
}

function setHeaders(res: NodeResponse, headers: Headers, except?: ReadonlySet<string>): void {
  headers.forEach((value, name) => {
    if (!except?.has(name)) res.setHeader(name, value);
  });
}

function trailersOf(context: { responseTrailer: Headers }, error: ConnectError | null) {
  const out: Record<string, string> = {};
  context.responseTrailer.forEach((value, name) => {
    out[name] = value;
  });
  if (error) for (const [name, value] of errorMetadata(error, RESERVED)) out[name] = value;
  return { ...out, ...grpcStatusTrailers(error) };
}

/** HTTP/2 and HTTP/1.1 alike: headers sent, then the end with trailers. */
function endWithTrailers(res: NodeResponse, trailers: Record<string, string>, frame?: Uint8Array) {
  res.addTrailers(trailers);
  if (frame) res.end(frame);
  else {
    // Headers first: ending an h2 answer with no data and unsent headers would drop the trailers.
    sendHead(res);
    res.end();
  }
}

export const grpc: RpcAdapter = {
  name: "grpc",
  accepts: (req) => CONTENT_TYPE.test(req.headers["content-type"] ?? ""),
  methods: () => ["POST"],
  clientTimeoutMs: grpcClientTimeoutMs,
  rpcSystem: "grpc",
  needsTrailers: true,
  enveloped: () => true,
  settings: (req, _route, codecs) =>
    grpcSettings(
      req,
      codecs,
      CONTENT_TYPE.exec(req.headers["content-type"] ?? "")?.[1] !== undefined,
    ),
  contentType: (settings) =>
    settings.codec.binary ? "application/grpc+proto" : "application/grpc+json",

  async writeAnswer(res, settings, context, payload) {
    res.statusCode = 200;
    setHeaders(res, context.responseHeader);
    if (settings.answerCoding) res.setHeader("grpc-encoding", settings.answerCoding);
    const frame = Buffer.allocUnsafe(5 + payload.length);
    frame[0] = settings.answerCoding ? COMPRESSED_FLAG : 0;
    frame.writeUInt32BE(payload.length, 1);
    frame.set(payload, 5);
    endWithTrailers(res, trailersOf(context, null), frame);
  },

  writeError(res, settings, headers, trailers, error) {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    // Headers, then the status in trailers (not trailers-only): grpc-go reads a
    // trailers-only answer's header fields as trailers, losing the headers a
    // handler set before it failed.
    res.statusCode = 200;
    setHeaders(res, headers, RESERVED);
    res.setHeader(
      "content-type",
      settings?.codec.binary === false ? "application/grpc+json" : "application/grpc+proto",
    );
    endWithTrailers(res, trailersOf({ responseTrailer: trailers }, error));
  },

  writeStreamHead(res, settings, context: HandlerContext) {
    res.statusCode = 200;
    setHeaders(res, context.responseHeader);
    if (settings.answerCoding) res.setHeader("grpc-encoding", settings.answerCoding);
    sendHead(res);
  },

  writeStreamEnd(res, _settings, context, error) {
    endWithTrailers(res, trailersOf(context, error));
  },
};
