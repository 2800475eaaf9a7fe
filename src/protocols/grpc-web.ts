/**
 * gRPC-Web (HTTP/1.1 and HTTP/2): gRPC's headers and envelopes, with the
 * status in a last envelope of its own (flag 0x80: `name: value` lines)
 * instead of HTTP trailers, which browsers cannot read.
 * `application/grpc-web-text` (base64 bodies) is not served: 415.
 */
import type { ConnectError } from "@connectrpc/connect";
import { ENVELOPE_HEADER_BYTES, encodeEnvelope, writeEnvelope } from "../wire/body";
import { type NodeResponse, sendHead } from "../wire/http";
import { errorMetadata, grpcStatusTrailers } from "../wire/rpc-errors";
import { COMPRESSED_FLAG } from "./envelopes";
import type { RpcAdapter } from "./face";
import { GRPC_DIALECT } from "./grpc";
import { clientTimeoutMs, readSettings } from "./settings";

const TRAILER_FLAG = 0x80;
const RESERVED: ReadonlySet<string> = new Set([
  "content-type",
  "grpc-status",
  "grpc-message",
  "grpc-status-details-bin",
  "grpc-encoding",
]);

/** The trailer envelope's message: the response trailers and the status, as `name: value\r\n` lines. */
function trailerLines(trailers: Headers, error: ConnectError | null): Buffer {
  const lines: string[] = [];
  trailers.forEach((value, name) => {
    lines.push(`${name}: ${value}\r\n`);
  });
  if (error)
    for (const [name, value] of errorMetadata(error, RESERVED)) lines.push(`${name}: ${value}\r\n`);
  for (const [name, value] of Object.entries(grpcStatusTrailers(error))) {
    lines.push(`${name}: ${value}\r\n`);
  }
  return Buffer.from(lines.join(""), "utf8");
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
  methods: () => ["POST"],
  clientTimeoutMs: (req) => clientTimeoutMs(req, GRPC_DIALECT),
  rpcSystem: "grpc",
  needsTrailers: false,
  enveloped: () => true,
  settings: (req, type, codecs) =>
    readSettings(req, GRPC_DIALECT, type, type.json ? codecs.json : codecs.proto),
  contentType: (settings) =>
    settings.codec.binary ? "application/grpc-web+proto" : "application/grpc-web+json",

  async writeAnswer(res, settings, context, payload) {
    head(res, context.responseHeader, this.contentType(settings), settings.answerCoding);
    // The message and the trailers in one body, each copied once.
    const trailer = trailerLines(context.responseTrailer, null);
    const body = Buffer.allocUnsafe(2 * ENVELOPE_HEADER_BYTES + payload.length + trailer.length);
    const end = writeEnvelope(body, 0, settings.answerCoding ? COMPRESSED_FLAG : 0, payload);
    writeEnvelope(body, end, TRAILER_FLAG, trailer);
    res.setHeader("content-length", String(body.length));
    res.end(body);
  },

  writeError(res, type, headers, trailers, error) {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    head(res, headers, type?.json ? "application/grpc-web+json" : "application/grpc-web+proto");
    const frame = encodeEnvelope(TRAILER_FLAG, trailerLines(trailers, error));
    res.setHeader("content-length", String(frame.length));
    res.end(frame);
  },

  writeStreamHead(res, settings, context) {
    head(res, context.responseHeader, this.contentType(settings), settings.answerCoding);
    sendHead(res);
  },

  writeStreamEnd(res, _settings, context, error) {
    res.end(encodeEnvelope(TRAILER_FLAG, trailerLines(context.responseTrailer, error)));
  },
};
