/**
 * gRPC-Web (HTTP/1.1 and HTTP/2): gRPC's headers and envelopes, with the
 * status in a last envelope of its own (flag 0x80: `name: value` lines)
 * instead of HTTP trailers, which browsers cannot read.
 * `application/grpc-web-text` (base64 bodies) is not served: 415.
 */
import type { ConnectError } from "@connectrpc/connect";
import { type NodeResponse, sendHead } from "../wire/http";
import { errorMetadata, grpcStatusTrailers } from "../wire/rpc-errors";
import { COMPRESSED_FLAG, type RpcAdapter } from "./adapter";
import { grpcClientTimeoutMs, grpcSettings } from "./grpc";

const CONTENT_TYPE = /^application\/grpc-web(?:\+(?:(json)(?:; ?charset=utf-?8)?|proto))?$/i;
const TRAILER_FLAG = 0x80;
const RESERVED: ReadonlySet<string> = new Set([
  "content-type",
  "grpc-status",
  "grpc-message",
  "grpc-status-details-bin",
  "grpc-encoding",
]);

/** The trailer envelope: the response trailers and the status, as `name: value\r\n` lines. */
function trailerFrame(trailers: Headers, error: ConnectError | null): Buffer {
  const lines: string[] = [];
  trailers.forEach((value, name) => {
    lines.push(`${name}: ${value}\r\n`);
  });
  if (error)
    for (const [name, value] of errorMetadata(error, RESERVED)) lines.push(`${name}: ${value}\r\n`);
  for (const [name, value] of Object.entries(grpcStatusTrailers(error))) {
    lines.push(`${name}: ${value}\r\n`);
  }
  const data = Buffer.from(lines.join(""), "utf8");
  const frame = Buffer.allocUnsafe(5 + data.length);
  frame[0] = TRAILER_FLAG;
  frame.writeUInt32BE(data.length, 1);
  data.copy(frame, 5);
  return frame;
}

function head(res: NodeResponse, headers: Headers, contentType: string, coding?: string) {
  res.statusCode = 200;
  headers.forEach((value, name) => {
    if (!RESERVED.has(name)) res.setHeader(name, value);
  });
  res.setHeader("content-type", contentType);
  if (coding) res.setHeader("grpc-encoding", coding);
}

export const grpcWeb: RpcAdapter = {
  name: "grpc-web",
  accepts: (req) => CONTENT_TYPE.test(req.headers["content-type"] ?? ""),
  methods: () => ["POST"],
  clientTimeoutMs: grpcClientTimeoutMs,
  rpcSystem: "grpc",
  needsTrailers: false,
  enveloped: () => true,
  settings(req, _route, codecs) {
    const match = CONTENT_TYPE.exec(req.headers["content-type"] ?? "");
    return grpcSettings(req, codecs, match?.[1] !== undefined);
  },
  contentType: (settings) =>
    settings.codec.binary ? "application/grpc-web+proto" : "application/grpc-web+json",

  async writeAnswer(res, settings, context, payload) {
    head(res, context.responseHeader, this.contentType(settings), settings.answerCoding);
    const message = Buffer.allocUnsafe(5 + payload.length);
    message[0] = settings.answerCoding ? COMPRESSED_FLAG : 0;
    message.writeUInt32BE(payload.length, 1);
    message.set(payload, 5);
    const trailer = trailerFrame(context.responseTrailer, null);
    res.setHeader("content-length", String(message.length + trailer.length));
    res.end(Buffer.concat([message, trailer]));
  },

  writeError(res, settings, headers, trailers, error) {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    head(
      res,
      headers,
      settings?.codec.binary === false ? "application/grpc-web+json" : "application/grpc-web+proto",
    );
    const frame = trailerFrame(trailers, error);
    res.setHeader("content-length", String(frame.length));
    res.end(frame);
  },

  writeStreamHead(res, settings, context) {
    head(res, context.responseHeader, this.contentType(settings), settings.answerCoding);
    sendHead(res);
  },

  writeStreamEnd(res, _settings, context, error) {
    res.end(trailerFrame(context.responseTrailer, error));
  },
};
