/**
 * The standard profile: HTTP/JSON as google/api/http.proto specifies it.
 * - Request: path variables (decoded by the spec's rules), the query by field
 *   paths (query.ts), the body as proto3 JSON (`*`, a field of any kind), or
 *   any content type into a google.api.HttpBody.
 * - Answer: proto3 JSON of the response (or of its `response_body` field),
 *   an HttpBody as its own content type and bytes; server-streaming as
 *   newline-delimited JSON, or Server-Sent Events when the client asks for
 *   `text/event-stream`.
 * - Errors: google.rpc.Status in Google's JSON (status.ts), the HTTP status
 *   from the host's error table.
 * - System parameters: `$alt` / `alt` = `json` or `json;enum-encoding=int`
 *   (enums as numbers in the answer), as Google's APIs take them.
 */
import {
  create,
  type DescField,
  type DescMessage,
  fromJson,
  type JsonValue,
  type Message,
  type Registry,
  toJson,
} from "@bufbuild/protobuf";
import { reflect } from "@bufbuild/protobuf/reflect";
import { Code, ConnectError } from "@connectrpc/connect";
import type { Exchange } from "./exchange";
import type { Profile } from "./profile";
import { applyQuery, QueryError, setText, splitQuery } from "./query";
import type { BoundVariable } from "./route-table";
import type { Binding } from "./rules";
import { statusJson } from "./status";

export interface JsonProfileOptions {
  /** Resolves google.protobuf.Any and error details in JSON. */
  readonly registry?: Registry;
  /**
   * The HTTP status of an error: the host's error table (this service's is
   * src/wire/errors.ts), so that one table says every status it answers.
   */
  readonly statusOf: (error: ConnectError) => number;
  /**
   * The entity tag of a GET answer's bytes (quoted, RFC 9110 §8.8.3), for
   * `ETag` and `If-None-Match`: given by the host, which has the hashes.
   * Without it, GET answers carry no ETag. An implementation that names its
   * resource's tag (the response header `etag`, AIP-154) is answered with
   * that tag instead, on every answer, so that `If-Match` can name it.
   */
  readonly etagOf?: (body: Uint8Array) => string;
  /** `Cache-Control` of GET answers (e.g. "private, no-cache" when answers depend on the caller). */
  readonly cacheControl?: string;
  /** Which bindings create a resource, and the answer's field naming it (Profile.created). */
  readonly created?: (binding: Binding<Profile>) => DescField | undefined;
}

const JSON_TYPE = "application/json; charset=utf-8";
const NDJSON_TYPE = "application/x-ndjson";
const SSE_TYPE = "text/event-stream";
const SYSTEM_PARAMETERS: ReadonlySet<string> = new Set(["$alt", "alt"]);
const JSON_MEDIA = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

export function createJsonProfile(options: JsonProfileOptions): Profile {
  const { registry, statusOf, etagOf, cacheControl, created } = options;
  const writeOptions = (query: string) => ({ registry, enumAsInteger: enumsAsNumbers(query) });
  const encode = (
    binding: Binding<Profile>,
    output: Message,
    query: string,
  ): Uint8Array | HttpBodyAnswer => {
    const { schema, value } = answerOf(binding, output);
    if (binding.httpBodyResponse) return httpBodyOf(value as Message);
    return new TextEncoder().encode(
      JSON.stringify(jsonOf(schema, value, binding.responseField, writeOptions(query))),
    );
  };
  const profile: Profile = {
    name: "json",
    caseInsensitivePaths: false,
    headWhereGet: true,
    created,
    async decode(binding, variables, query, exchange) {
      try {
        return await decodeRequest(binding, variables, query, exchange, registry);
      } catch (error) {
        if (error instanceof QueryError)
          throw new ConnectError(error.message, Code.InvalidArgument);
        throw error;
      }
    },
    async answer(binding, exchange, output, query, header) {
      const body = encode(binding, output, query);
      if (body instanceof Uint8Array) {
        const headers: Record<string, string> = { "content-type": JSON_TYPE };
        const own = header?.get("etag") ?? undefined;
        if (own !== undefined) headers.etag = own;
        if (binding.httpMethod === "GET") {
          // A representation of a resource: validators for revalidation (RFC 9110 §13, §13.1.2).
          if (cacheControl) headers["cache-control"] = cacheControl;
          const etag = own ?? etagOf?.(body);
          if (etag !== undefined) {
            headers.etag = etag;
            if (noneMatch(exchange.header("if-none-match"), etag)) {
              delete headers["content-type"];
              await exchange.respond(304, headers, new Uint8Array(0));
              return;
            }
          }
        }
        const location = created && locationOf(created(binding), exchange.path, output);
        if (location !== undefined) headers.location = location;
        await exchange.respond(location === undefined ? 200 : 201, headers, body);
      } else {
        await exchange.respond(200, { "content-type": body.contentType }, body.data);
      }
    },
    async answerStream(binding, exchange, outputs, query) {
      const sse = /\btext\/event-stream\b/i.test(exchange.header("accept") ?? "");
      const it = outputs[Symbol.asyncIterator]();
      let first: IteratorResult<Message>;
      try {
        first = await it.next();
      } catch (error) {
        // Nothing was sent: the error is the answer.
        await profile.fail(exchange, asConnectError(error));
        return;
      }
      if (first.done !== true && binding.httpBodyResponse) {
        await streamHttpBody(exchange, first.value, it);
        return;
      }
      const writer = exchange.startStream(200, { "content-type": sse ? SSE_TYPE : NDJSON_TYPE });
      const record = (json: JsonValue, event?: string) =>
        new TextEncoder().encode(
          sse
            ? `${event ? `event: ${event}\n` : ""}data: ${JSON.stringify(json)}\n\n`
            : `${JSON.stringify(json)}\n`,
        );
      try {
        for (let next = first; next.done !== true; next = await it.next()) {
          const { schema, value } = answerOf(binding, next.value);
          await writer.write(
            record(jsonOf(schema, value, binding.responseField, writeOptions(query))),
          );
        }
      } catch (error) {
        const e = asConnectError(error);
        if (!exchange.closed)
          await writer.write(record(statusJson(e, statusOf(e), registry), "error"));
      }
      writer.end();
    },
    async fail(exchange, error) {
      const status = statusOf(error);
      const body = new TextEncoder().encode(JSON.stringify(statusJson(error, status, registry)));
      const headers: Record<string, string> = { "content-type": JSON_TYPE };
      // A refusal says when to come back (RFC 9110 §10.2.3), as its metadata did.
      const retryAfter = error.metadata.get("retry-after");
      if (retryAfter !== null) headers["retry-after"] = retryAfter;
      await exchange.respond(status, headers, body);
    },
    async methodNotAllowed(exchange, allowed) {
      const error = new ConnectError(
        `${exchange.httpMethod} is not allowed here; allowed: ${allowed.join(", ")}`,
        Code.Unimplemented,
      );
      const body = new TextEncoder().encode(JSON.stringify(statusJson(error, 405, registry)));
      await exchange.respond(405, { "content-type": JSON_TYPE, allow: allowed.join(", ") }, body);
    },
  };
  return profile;
}

/**
 * Where a created resource is (RFC 9110 §15.3.2): the request's path (a
 * collection; a trailing "/" dropped) and the answer's naming field, one
 * segment, percent-encoded. Undefined: not a create, or nothing to name it by.
 */
function locationOf(
  field: DescField | undefined,
  path: string | undefined,
  output: Message,
): string | undefined {
  if (!field || path === undefined) return undefined;
  const id = reflect(field.parent, output).get(field);
  if (typeof id !== "string" || id === "") return undefined;
  return `${path.endsWith("/") ? path.slice(0, -1) : path}/${encodeURIComponent(id)}`;
}

interface HttpBodyAnswer {
  readonly contentType: string;
  readonly data: Uint8Array;
}

function asConnectError(error: unknown): ConnectError {
  return error instanceof ConnectError
    ? error
    : new ConnectError("internal error", Code.Internal, undefined, undefined, error);
}

/** `$alt=json;enum-encoding=int` asks for enums as numbers. */
function enumsAsNumbers(query: string): boolean {
  if (!query.includes("alt=")) return false;
  return splitQuery(query, { plusIsSpace: true }).some(
    (p) =>
      (p.name === "$alt" || p.name === "alt") && /(^|;)\s*enum-encoding=int\s*(;|$)/.test(p.value),
  );
}

/** What the answer writes: the response, or its response_body field's value. */
function answerOf(
  binding: Binding<Profile>,
  output: Message,
): { schema: DescMessage; value: unknown } {
  const field = binding.responseField;
  if (!field) return { schema: binding.method.output, value: output };
  return {
    schema: binding.method.output,
    value: reflect(binding.method.output, output).get(field),
  };
}

/** The JSON of the answer: the message, or (response_body) the one field's JSON. */
function jsonOf(
  schema: DescMessage,
  value: unknown,
  field: DescField | undefined,
  options: { registry?: Registry; enumAsInteger: boolean },
): JsonValue {
  if (!field) return toJson(schema, value as Message, options);
  // The field's JSON is what the message's JSON holds under its name.
  const holder = create(schema);
  reflect(schema, holder).set(field, value as never);
  const json = toJson(schema, holder, { ...options, alwaysEmitImplicit: true }) as Record<
    string,
    JsonValue
  >;
  return json[field.jsonName] ?? null;
}

/**
 * A stream of google.api.HttpBody: one body, the first message's content type,
 * each message's bytes as they come. An error after the first cannot be said
 * in a body of any type: the answer is cut off (an incomplete body, never one
 * that looks whole).
 */
async function streamHttpBody(
  exchange: Exchange,
  first: Message,
  rest: AsyncIterator<Message>,
): Promise<void> {
  const head = httpBodyOf(first);
  const writer = exchange.startStream(200, { "content-type": head.contentType });
  try {
    await writer.write(head.data);
    for (let next = await rest.next(); next.done !== true; next = await rest.next()) {
      await writer.write(httpBodyOf(next.value).data);
    }
  } catch {
    writer.abort();
    return;
  }
  writer.end();
}

function httpBodyOf(message: Message): HttpBodyAnswer {
  const m = message as unknown as { contentType?: string; data?: Uint8Array };
  return {
    contentType: m.contentType || "application/octet-stream",
    data: m.data ?? new Uint8Array(),
  };
}

async function decodeRequest(
  binding: Binding<Profile>,
  variables: readonly BoundVariable[],
  query: string,
  exchange: Exchange,
  registry: Registry | undefined,
): Promise<Message> {
  const schema = binding.method.input;
  let message: Message = create(schema);
  if (binding.body === "") {
    exchange.skipBody();
  } else {
    const bytes = await exchange.readBody();
    const contentType = exchange.header("content-type") ?? "";
    if (binding.httpBodyRequest) {
      const body = { contentType, data: bytes };
      if (binding.bodyField) {
        const desc = (binding.bodyField as DescField & { message: DescMessage }).message;
        reflect(schema, message).set(binding.bodyField, reflect(desc, create(desc, body as never)));
      } else {
        message = create(schema, body as never);
      }
    } else if (bytes.length > 0) {
      if (contentType !== "" && !JSON_MEDIA.test(contentType)) {
        throw new ConnectError(`the body must be JSON, not ${contentType}`, Code.InvalidArgument);
      }
      const json = parseJson(bytes);
      if (json === null && binding.bodyField?.fieldKind === "message") {
        // As for a body of the whole request: a message is an object. (Inside one, proto3
        // JSON's null still means "not set".)
        throw new ConnectError("the body must be a JSON object, not null", Code.InvalidArgument);
      }
      if (binding.bodyField) {
        const holder = fromJsonOrThrow(schema, { [binding.bodyField.jsonName]: json }, registry);
        reflect(schema, message).set(
          binding.bodyField,
          reflect(schema, holder).get(binding.bodyField) as never,
        );
      } else {
        message = fromJsonOrThrow(schema, json, registry);
      }
    }
  }
  const root = reflect(schema, message);
  binding.pathFields.forEach((fields, i) => {
    const variable = variables[i] as BoundVariable;
    setText(root, fields, `path variable ${variable.fieldPath.join(".")}`, variable.value);
  });
  applyQuery(
    message,
    { schema, bound: binding.bound, allInBody: binding.body === "*" },
    splitQuery(query, { plusIsSpace: true, ignore: SYSTEM_PARAMETERS }),
  );
  return message;
}

function parseJson(bytes: Uint8Array): JsonValue {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new ConnectError("the body is not valid UTF-8", Code.InvalidArgument);
  }
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    throw new ConnectError("the body is not valid JSON", Code.InvalidArgument);
  }
}

function fromJsonOrThrow(
  schema: DescMessage,
  json: JsonValue,
  registry: Registry | undefined,
): Message {
  try {
    return fromJson(schema, json, { registry });
  } catch (error) {
    throw new ConnectError(
      `the body is not a valid ${schema.typeName}: ${error instanceof Error ? error.message : String(error)}`,
      Code.InvalidArgument,
    );
  }
}

/**
 * Whether an `If-None-Match` field matches `etag` (RFC 9110 §13.1.2): `*`,
 * or a list of entity tags compared weakly (a `W/` prefix ignored).
 */
function noneMatch(field: string | undefined, etag: string): boolean {
  if (field === undefined) return false;
  const bare = (tag: string) => (tag.startsWith("W/") ? tag.slice(2) : tag);
  const ours = bare(etag);
  for (const part of field.split(",")) {
    const tag = part.trim();
    if (tag === "*" || bare(tag) === ours) return true;
  }
  return false;
}
