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
import { ACCEPTED_CODINGS, answerCoding, codingOf } from "../wire/compression";
import { CODES } from "../wire/errors";
import { type NodeRequest, type NodeResponse, sendHead } from "../wire/http";
import { connectErrorJson, errorMetadata } from "../wire/rpc-errors";
import { type CallSettings, type Codecs, header, type RpcAdapter } from "./adapter";

const UNARY = /^application\/(?:(json)(?:; ?charset=utf-?8)?|proto)$/i;
const STREAM = /^application\/connect\+(?:(json)(?:; ?charset=utf-?8)?|proto)$/i;
const TIMEOUT = /^\d{1,10}$/;
const END_STREAM_FLAG = 0b10;
const RESERVED: ReadonlySet<string> = new Set([
  "content-type",
  "content-length",
  "content-encoding",
  "connect-content-encoding",
]);

const isStream = (route: MethodRoute) => route.spec.kind !== "unary";

interface ConnectSettings extends CallSettings {
  readonly stream: boolean;
  /** GET: the query's `message`, decoded from base64 when `base64=1`. */
  readonly query?: URLSearchParams;
}

function timeoutOf(req: NodeRequest): number | undefined | ConnectError {
  const value = header(req, "connect-timeout-ms");
  if (value === null) return undefined;
  if (!TIMEOUT.test(value)) {
    return new ConnectError(
      `protocol error: invalid connect timeout value: ${value.slice(0, 40)}`,
      Code.InvalidArgument,
    );
  }
  return Number(value);
}

function settingsOf(
  codecs: Codecs,
  json: boolean,
  stream: boolean,
  timeout: number | undefined | ConnectError,
  requested: string | null,
  accepted: string | null,
  acceptHeader: string,
  query?: URLSearchParams,
): ConnectSettings {
  const requestCoding = codingOf(requested);
  const base = {
    codec: json ? codecs.json : codecs.proto,
    stream,
    query,
    timeoutMs: typeof timeout === "number" ? timeout : undefined,
    requestCoding: requestCoding ?? ("identity" as const),
    answerCoding: answerCoding(requestCoding ?? "identity", accepted),
  };
  if (requestCoding === undefined) {
    return {
      ...base,
      refused: new ConnectError(
        `unknown compression "${(requested ?? "").slice(0, 40)}": supported encodings are ${ACCEPTED_CODINGS}`,
        Code.Unimplemented,
        { [acceptHeader]: ACCEPTED_CODINGS },
      ),
    };
  }
  if (timeout instanceof ConnectError) return { ...base, refused: timeout };
  const version = query ? query.get("connect") : null;
  if (version !== null && version !== "v1") {
    return {
      ...base,
      refused: new ConnectError(
        `connect must be "v1": got "${version.slice(0, 20)}"`,
        Code.InvalidArgument,
      ),
    };
  }
  return base;
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
  const data = Buffer.from(JSON.stringify(json), "utf8");
  const frame = Buffer.allocUnsafe(5 + data.length);
  frame[0] = END_STREAM_FLAG;
  frame.writeUInt32BE(data.length, 1);
  data.copy(frame, 5);
  return frame;
}

export const connect: RpcAdapter = {
  name: "connect",
  accepts(req, route) {
    if (req.method === "GET") return !isStream(route);
    return (isStream(route) ? STREAM : UNARY).test(req.headers["content-type"] ?? "");
  },
  methods: (route) => (route.allowGet && !isStream(route) ? ["POST", "GET"] : ["POST"]),
  clientTimeoutMs(req) {
    const timeout = timeoutOf(req);
    return typeof timeout === "number" ? timeout : undefined;
  },
  rpcSystem: "connectrpc",
  needsTrailers: false,
  enveloped: isStream,

  settings(req, route, codecs) {
    if (req.method === "GET") {
      const url = req.url ?? "";
      const query = new URLSearchParams(url.slice(url.indexOf("?") + 1));
      const encoding = query.get("encoding");
      const settings = settingsOf(
        codecs,
        encoding === "json",
        false,
        timeoutOf(req),
        query.get("compression"),
        header(req, "accept-encoding"),
        "accept-encoding",
        query,
      );
      if (encoding !== "json" && encoding !== "proto" && !settings.refused) {
        return {
          ...settings,
          refused: new ConnectError(
            `protocol error: unsupported encoding "${(encoding ?? "").slice(0, 20)}": use json or proto`,
            Code.InvalidArgument,
          ),
        };
      }
      return settings;
    }
    const stream = isStream(route);
    const contentType = req.headers["content-type"] ?? "";
    const json = (stream ? STREAM : UNARY).exec(contentType)?.[1] !== undefined;
    const settings = settingsOf(
      codecs,
      json,
      stream,
      timeoutOf(req),
      header(req, stream ? "connect-content-encoding" : "content-encoding"),
      header(req, stream ? "connect-accept-encoding" : "accept-encoding"),
      stream ? "connect-accept-encoding" : "accept-encoding",
    );
    const version = header(req, "connect-protocol-version");
    if (version !== null && version !== "1" && !settings.refused) {
      return {
        ...settings,
        refused: new ConnectError(
          `connect-protocol-version must be "1": got "${version.slice(0, 20)}"`,
          Code.InvalidArgument,
        ),
      };
    }
    return settings;
  },

  contentType(settings) {
    const stream = (settings as ConnectSettings).stream;
    if (stream)
      return settings.codec.binary ? "application/connect+proto" : "application/connect+json";
    return settings.codec.binary ? "application/proto" : "application/json";
  },

  unaryInput(_req, settings) {
    const query = (settings as ConnectSettings).query;
    if (!query) return undefined;
    const message = query.get("message") ?? "";
    if (query.get("base64") === "1") {
      try {
        return base64Decode(message);
      } catch {
        return new ConnectError("protocol error: invalid base64 message", Code.InvalidArgument);
      }
    }
    return Buffer.from(message, "utf8");
  },

  async writeAnswer(res, settings, context, payload) {
    res.statusCode = 200;
    setHeaders(res, context.responseHeader, context.responseTrailer);
    res.setHeader("content-type", this.contentType(settings));
    if (settings.answerCoding) res.setHeader("content-encoding", settings.answerCoding);
    res.setHeader("content-length", String(payload.length));
    res.end(payload);
  },

  writeError(res, settings, headers, trailers, error) {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if ((settings as ConnectSettings | undefined)?.stream) {
      res.statusCode = 200;
      setHeaders(res, headers);
      res.setHeader("content-type", this.contentType(settings as CallSettings));
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
