/**
 * The Connect protocol. Unary calls: POST with `application/proto` or
 * `application/json`, `Content-Encoding` / `Accept-Encoding`, the answer as
 * the body with an HTTP status, trailers as `trailer-` headers, errors as a
 * JSON body with the code's HTTP status; or GET (methods without side
 * effects) with the message in the query. Streams: `application/connect+proto`
 * or `+json`, enveloped messages, `Connect-Content-Encoding`, and an
 * end-of-stream message (flag 0x02) carrying the error and the trailers.
 */
import { base64Decode } from "@bufbuild/protobuf/wire";
import { Code, ConnectError } from "@connectrpc/connect";
import type { MethodRoute } from "../call/route";
import { encodeEnvelope } from "../wire/body";
import { CODES } from "../wire/errors";
import { headerOf, type NodeRequest, type NodeResponse, sendHead } from "../wire/http";
import { connectErrorJson, errorMetadata } from "../wire/rpc-errors";
import type { CallSettings, Checked, Codecs, ContentType, RpcAdapter } from "./face";
import { clientTimeoutMs, readSettings, type SettingsDialect } from "./settings";

const TIMEOUT = /^\d{1,10}$/;
const END_STREAM_FLAG = 0b10;
const RESERVED: ReadonlySet<string> = new Set([
  "content-type",
  "content-length",
  "content-encoding",
  "connect-content-encoding",
]);

const isStream = (route: MethodRoute) => route.spec.kind !== "unary";
const streamed = (type: ContentType | undefined) => type?.media === "connect-stream";

const timeout = {
  timeoutHeader: "connect-timeout-ms",
  timeoutName: "connect timeout",
  timeoutMs: (value: string) => (TIMEOUT.test(value) ? Number(value) : undefined),
};
/** Unary calls (and GET, whose request coding is in the query) name their codings in HTTP's headers. */
const UNARY_DIALECT: SettingsDialect = {
  ...timeout,
  codingHeader: "content-encoding",
  acceptHeader: "accept-encoding",
};
/** Streams, in headers of their own (each message is compressed, not the body). */
const STREAM_DIALECT: SettingsDialect = {
  ...timeout,
  codingHeader: "connect-content-encoding",
  acceptHeader: "connect-accept-encoding",
};

const refused = (message: string): Checked<never> => ({
  ok: false,
  error: new ConnectError(message, Code.InvalidArgument),
});

/** Connect GET: the settings, and the message, from the query. */
function getSettings(req: NodeRequest, type: ContentType, codecs: Codecs): Checked<CallSettings> {
  const url = req.url ?? "";
  const query = new URLSearchParams(url.slice(url.indexOf("?") + 1));
  const encoding = query.get("encoding");
  const checked = readSettings(
    req,
    UNARY_DIALECT,
    type,
    encoding === "json" ? codecs.json : codecs.proto,
    query.get("compression"),
  );
  if (!checked.ok) return checked;
  const version = query.get("connect");
  if (version !== null && version !== "v1") {
    return refused(`connect must be "v1": got "${version.slice(0, 20)}"`);
  }
  if (encoding !== "json" && encoding !== "proto") {
    return refused(
      `protocol error: unsupported encoding "${(encoding ?? "").slice(0, 20)}": use json or proto`,
    );
  }
  const message = query.get("message") ?? "";
  if (query.get("base64") !== "1") {
    return { ok: true, value: { ...checked.value, message: Buffer.from(message, "utf8") } };
  }
  try {
    return { ok: true, value: { ...checked.value, message: base64Decode(message) } };
  } catch {
    return refused("protocol error: invalid base64 message");
  }
}

/** The answer's headers: the context's, then its trailers as `trailer-` headers (unary only). */
function setHeaders(res: NodeResponse, headers: Headers, trailers?: Headers): void {
  headers.forEach((value, name) => {
    if (!RESERVED.has(name)) res.setHeader(name, value);
  });
  trailers?.forEach((value, name) => {
    res.setHeader(`trailer-${name}`, value);
  });
}

/** The end-of-stream message: `{error?, metadata?}` (metadata: the trailers, every value a list). */
function endStream(trailers: Headers, error: ConnectError | null): Buffer {
  const metadata: Record<string, string[]> = {};
  const add = (name: string, value: string) => {
    const values = metadata[name] ?? [];
    values.push(value);
    metadata[name] = values;
  };
  trailers.forEach((value, name) => {
    add(name, value);
  });
  if (error) for (const [name, value] of errorMetadata(error, RESERVED)) add(name, value);
  const json: Record<string, unknown> = {};
  if (error) json.error = connectErrorJson(error);
  if (Object.keys(metadata).length > 0) json.metadata = metadata;
  return encodeEnvelope(END_STREAM_FLAG, Buffer.from(JSON.stringify(json), "utf8"));
}

function streamContentType(json: boolean): string {
  return json ? "application/connect+json" : "application/connect+proto";
}

export const connect: RpcAdapter = {
  name: "connect",
  methods: (route) => (route.allowGet && !isStream(route) ? ["POST", "GET"] : ["POST"]),
  clientTimeoutMs: (req) => clientTimeoutMs(req, UNARY_DIALECT),
  rpcSystem: "connectrpc",
  needsTrailers: false,
  enveloped: isStream,

  settings(req, type, codecs) {
    if (req.method === "GET") return getSettings(req, type, codecs);
    const checked = readSettings(
      req,
      streamed(type) ? STREAM_DIALECT : UNARY_DIALECT,
      type,
      type.json ? codecs.json : codecs.proto,
    );
    if (!checked.ok) return checked;
    const version = headerOf(req, "connect-protocol-version");
    if (version !== null && version !== "1") {
      return refused(`connect-protocol-version must be "1": got "${version.slice(0, 20)}"`);
    }
    return checked;
  },

  contentType(settings) {
    if (streamed(settings.type)) return streamContentType(!settings.codec.binary);
    return settings.codec.binary ? "application/proto" : "application/json";
  },

  async writeAnswer(res, settings, context, payload) {
    res.statusCode = 200;
    setHeaders(res, context.responseHeader, context.responseTrailer);
    res.setHeader("content-type", this.contentType(settings));
    if (settings.answerCoding) res.setHeader("content-encoding", settings.answerCoding);
    res.setHeader("content-length", String(payload.length));
    res.end(payload);
  },

  writeError(res, type, headers, trailers, error) {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (type?.media === "connect-stream") {
      res.statusCode = 200;
      setHeaders(res, headers);
      res.setHeader("content-type", streamContentType(type.json));
      const frame = endStream(trailers, error);
      res.setHeader("content-length", String(frame.length));
      res.end(frame);
      return;
    }
    res.statusCode = CODES[error.code].connectStatus;
    setHeaders(res, headers, trailers);
    for (const [name, value] of errorMetadata(error, RESERVED)) res.setHeader(name, value);
    const body = Buffer.from(JSON.stringify(connectErrorJson(error)), "utf8");
    res.setHeader("content-type", "application/json");
    res.setHeader("content-length", String(body.length));
    res.end(body);
  },

  writeStreamHead(res, settings, context) {
    res.statusCode = 200;
    setHeaders(res, context.responseHeader);
    res.setHeader("content-type", this.contentType(settings));
    if (settings.answerCoding) res.setHeader("connect-content-encoding", settings.answerCoding);
    sendHead(res);
  },

  writeStreamEnd(res, _settings, context, error) {
    res.end(endStream(context.responseTrailer, error));
  },
};
