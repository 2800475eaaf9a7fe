/**
 * The legacy HTTP bridge (SPEC §3): a request on a legacy path becomes the
 * request message of its RPC and is sent, in process, through the same
 * Connect router — so the same interceptors (auth, errors) and handlers
 * serve it. The answer is turned back into legacy protobuf or JSON.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import { create, type DescMessage, fromBinary, type Message, toBinary } from "@bufbuild/protobuf";
import { ConnectError, type ConnectRouter, type Transport } from "@connectrpc/connect";
import { createUniversalHandlerClient } from "@connectrpc/connect/protocol";
import { createTransport } from "@connectrpc/connect/protocol-connect";
import type { App } from "../app";
import { authenticate } from "../domain/auth";
import { connectToLegacyError, type LegacyError, legacyError } from "../rpc/error-table";
import { toConnectError } from "../rpc/interceptors";
import { findMissingRequiredField } from "../rpc/required-fields";
import { MAX_REQUEST_BYTES } from "../rpc/router";
import { type LegacyRoute, legacyRoutesOf } from "./http-rules";
import { LegacyJsonError, legacyJsonToMessage, messageToLegacyJson } from "./legacy-json";
import { QueryError, queryFields, readQuery } from "./query";

type NodeRequest = IncomingMessage | Http2ServerRequest;
type NodeResponse = ServerResponse | Http2ServerResponse;

const PROTOBUF_CONTENT_TYPE = "application/x-protobuf";
const JSON_CONTENT_TYPE = "application/json; charset=utf-8";

/** Legacy responses are JSON when Accept contains application/json, protobuf otherwise. */
export function wantsJson(req: NodeRequest): boolean {
  return /application\/json/i.test(req.headers.accept ?? "");
}

/** The request cannot be turned into a message: a 400 (or 413), but only after authentication. */
class BadRequest extends Error {
  constructor(
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

export interface LegacyBridge {
  readonly routes: readonly LegacyRoute[];
  /** Answers a request on a legacy path; false when no legacy path matches. */
  handle(req: NodeRequest, res: NodeResponse): Promise<boolean>;
}

export function createLegacyBridge(router: ConnectRouter, app: App): LegacyBridge {
  const routes = legacyRoutesOf(router.handlers);
  const byPath = new Map<string, LegacyRoute[]>();
  for (const route of routes) {
    const key = route.path.toLowerCase();
    byPath.set(key, [...(byPath.get(key) ?? []), route]);
  }
  const transport = createInProcessTransport(router);

  return {
    routes,
    async handle(req, res) {
      const url = new URL(req.url ?? "/", "http://legacy");
      const candidates = byPath.get(url.pathname.toLowerCase());
      if (!candidates) {
        return false;
      }
      const json = wantsJson(req);
      const route = candidates.find((r) => r.verb === req.method);
      if (!route) {
        req.resume();
        res.setHeader("allow", candidates.map((r) => r.verb).join(", "));
        sendError(
          res,
          legacyError(405, `use ${candidates.map((r) => r.verb).join(" or ")} for ${url.pathname}`),
          json,
        );
        return true;
      }
      const abort = new AbortController();
      res.on("close", () => abort.abort());
      try {
        const input = await decodeRequest(route, req, url).catch(async (error: unknown) => {
          // The order of checks puts 401 before 400: authenticate before reporting bad input.
          if (error instanceof BadRequest) {
            await authenticate(req.headers.authorization, app.credentials, app.now);
          }
          throw error;
        });
        const headers = new Headers();
        if (req.headers.authorization !== undefined) {
          headers.set("authorization", req.headers.authorization);
        }
        const response = await transport.unary(
          route.method,
          abort.signal,
          undefined,
          headers,
          input,
        );
        sendMessage(res, route.method.output, response.message, json);
      } catch (error) {
        sendError(res, toLegacyError(app, error, route), json);
      }
      return true;
    },
  };
}

/** A Connect client of the router's own handlers, with no network in between. */
function createInProcessTransport(router: ConnectRouter): Transport {
  return createTransport({
    httpClient: createUniversalHandlerClient(router.handlers),
    baseUrl: "http://in-process",
    useBinaryFormat: true,
    interceptors: [],
    acceptCompression: [],
    sendCompression: null,
    compressMinBytes: Number.MAX_SAFE_INTEGER,
    readMaxBytes: Number.MAX_SAFE_INTEGER,
    writeMaxBytes: Number.MAX_SAFE_INTEGER,
  });
}

async function decodeRequest(route: LegacyRoute, req: NodeRequest, url: URL): Promise<Message> {
  const schema = route.method.input;
  let fields: Record<string, unknown>;
  try {
    fields = readQuery(url.searchParams, queryFields(schema, route.body));
  } catch (error) {
    throw error instanceof QueryError ? new BadRequest(error.message) : error;
  }
  if (route.body === "") {
    req.resume();
    return create(schema, fields);
  }
  const body = await readBody(req);
  const isJson = /^application\/json\s*(;|$)/i.test(req.headers["content-type"] ?? "");
  const bodySchema = route.body === "*" ? schema : bodyFieldSchema(schema, route.body);
  const bodyMessage = isJson ? decodeJson(bodySchema, body) : decodeBinary(bodySchema, body);
  const missing = findMissingRequiredField(bodySchema, bodyMessage);
  if (missing) {
    throw new BadRequest(`${missing} is required`);
  }
  if (route.body === "*") {
    return Object.assign(bodyMessage, fields);
  }
  const field = schema.fields.find((f) => f.name === route.body);
  return create(schema, { ...fields, [field?.localName ?? route.body]: bodyMessage });
}

function bodyFieldSchema(schema: DescMessage, name: string): DescMessage {
  const field = schema.fields.find((f) => f.name === name);
  if (field?.fieldKind !== "message") {
    throw new Error(`${schema.typeName}.${name} is not a message field`);
  }
  return field.message;
}

function decodeJson(schema: DescMessage, body: Uint8Array): Message {
  try {
    return legacyJsonToMessage(schema, new TextDecoder("utf-8", { fatal: true }).decode(body));
  } catch (error) {
    throw new BadRequest(
      error instanceof LegacyJsonError ? error.message : "the request body is not valid UTF-8",
    );
  }
}

function decodeBinary(schema: DescMessage, body: Uint8Array): Message {
  try {
    return fromBinary(schema, body);
  } catch {
    throw new BadRequest(`the request body is not a valid protobuf ${schema.name}`);
  }
}

async function readBody(req: NodeRequest): Promise<Uint8Array> {
  const declared = Number(req.headers["content-length"] ?? 0);
  if (declared > MAX_REQUEST_BYTES) {
    req.resume();
    throw new BadRequest(`the request body is larger than ${MAX_REQUEST_BYTES} bytes`, 413);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > MAX_REQUEST_BYTES) {
      throw new BadRequest(`the request body is larger than ${MAX_REQUEST_BYTES} bytes`, 413);
    }
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}

function toLegacyError(app: App, error: unknown, route: LegacyRoute): LegacyError {
  if (error instanceof BadRequest) {
    return legacyError(error.status, error.message);
  }
  if (error instanceof ConnectError) {
    return connectToLegacyError(error);
  }
  return connectToLegacyError(toConnectError(app, error, route.method.name));
}

function sendMessage(
  res: NodeResponse,
  schema: DescMessage,
  message: Message,
  asJson: boolean,
): void {
  res.statusCode = 200;
  if (schema.fields.length === 0) {
    // Restore/Delete: 200 with an empty body (SDKs treat 204 as a failure).
    res.setHeader("content-length", "0");
    res.end();
    return;
  }
  const body = asJson
    ? Buffer.from(messageToLegacyJson(schema, message), "utf8")
    : Buffer.from(toBinary(schema, message));
  res.setHeader("content-type", asJson ? JSON_CONTENT_TYPE : PROTOBUF_CONTENT_TYPE);
  res.setHeader("content-length", String(body.length));
  res.end(body);
}

const STATUS_TITLES: Readonly<Record<number, string>> = {
  400: "Bad Request",
  401: "Unauthorized",
  402: "Payment Required",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  409: "Conflict",
  413: "Content Too Large",
  500: "Internal Server Error",
  501: "Not Implemented",
};

/** Errors as short text, or problem+json for JSON clients, with X-Service-ErrorCode. */
export function sendError(res: NodeResponse, error: LegacyError, asJson: boolean): void {
  const body = asJson
    ? JSON.stringify({
        type: "about:blank",
        title: STATUS_TITLES[error.status] ?? "Error",
        status: error.status,
        detail: error.message,
        errorCode: error.errorCode,
      })
    : error.message;
  const bytes = Buffer.from(body, "utf8");
  res.statusCode = error.status;
  res.setHeader("x-service-errorcode", error.errorCode);
  res.setHeader("content-type", asJson ? "application/problem+json" : "text/plain; charset=utf-8");
  res.setHeader("content-length", String(bytes.length));
  res.end(bytes);
}
