/**
 * gRPC (over HTTP/2): `application/grpc[+proto|+json]`, POST, enveloped
 * messages, `grpc-timeout`, `grpc-encoding` / `grpc-accept-encoding`, the
 * status in trailers (`grpc-status`, `grpc-message`,
 * `grpc-status-details-bin`), after the headers, also for an error before
 * any message.
 */
import type { ConnectError, HandlerContext } from "@connectrpc/connect";
import { encodeEnvelope } from "../wire/body";
import { type NodeResponse, sendHead } from "../wire/http";
import { errorMetadata, grpcStatusTrailers } from "../wire/rpc-errors";
import { COMPRESSED_FLAG } from "./envelopes";
import type { RpcAdapter } from "./face";
import { clientTimeoutMs, readSettings, type SettingsDialect } from "./settings";

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

/** The gRPC family's (gRPC, gRPC-Web) settings headers. */
export const GRPC_DIALECT: SettingsDialect = {
  timeoutHeader: "grpc-timeout",
  timeoutName: "grpc timeout",
  timeoutMs(value) {
    const match = TIMEOUT.exec(value);
    return match ? Number(match[1]) * (UNIT_MS[match[2] as string] as number) : undefined;
  },
  codingHeader: "grpc-encoding",
  acceptHeader: "grpc-accept-encoding",
};

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
  methods: () => ["POST"],
  clientTimeoutMs: (req) => clientTimeoutMs(req, GRPC_DIALECT),
  rpcSystem: "grpc",
  needsTrailers: true,
  enveloped: () => true,
  settings: (req, type, codecs) =>
    readSettings(req, GRPC_DIALECT, type, type.json ? codecs.json : codecs.proto),
  contentType: (settings) =>
    settings.codec.binary ? "application/grpc+proto" : "application/grpc+json",

  async writeAnswer(res, settings, context, payload) {
    res.statusCode = 200;
    setHeaders(res, context.responseHeader);
    if (settings.answerCoding) res.setHeader("grpc-encoding", settings.answerCoding);
    const frame = encodeEnvelope(settings.answerCoding ? COMPRESSED_FLAG : 0, payload);
    endWithTrailers(res, trailersOf(context, null), frame);
  },

  writeError(res, type, headers, trailers, error) {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    // Headers, then the status in trailers (not trailers-only): grpc-go reads a
    // trailers-only answer's header fields as trailers, losing the headers a
    // handler set before it failed.
    res.statusCode = 200;
    setHeaders(res, headers, RESERVED);
    res.setHeader("content-type", type?.json ? "application/grpc+json" : "application/grpc+proto");
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
