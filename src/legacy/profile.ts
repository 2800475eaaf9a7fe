/**
 * The legacy paths (docs/api.md §3) as a profile of the transcoder
 * (src/transcoder, docs/transcoding.md): the bindings of the methods marked
 * `(docflow.legacy.http_profile) = HTTP_PROFILE_LEGACY` are matched in the
 * one route table, their literals whatever their case, and served the way
 * the legacy SDKs expect: query and body by decode.ts (an empty value means
 * absent, unknown parameters are ignored, PascalCase JSON with string
 * booleans, binary protobuf without a Content-Type), answers as legacy
 * protobuf or JSON, errors as text or problem+json with X-Service-ErrorCode;
 * described in the OpenAPI document by its style (openapi.ts).
 */
import {
  create,
  type DescField,
  type DescMessage,
  type DescMethod,
  getOption,
  isFieldSet,
  type Message,
  toBinary,
} from "@bufbuild/protobuf";
import { HttpProfile, http_profile } from "../../gen/docflow/legacy/options_pb";
import type { Exchange } from "../transcoder/exchange";
import type { Profile } from "../transcoder/profile";
import { RuleError } from "../transcoder/rules";
import {
  answerHeadersOf,
  connectToLegacyError,
  type LegacyError,
  legacyError,
} from "../wire/errors";
import { errorForm, wantsJson } from "../wire/plain";
import { decodeRequest } from "./decode";
import { type LegacyRoute, legacyRoutesOf } from "./http-rules";
import { messageToLegacyJson } from "./legacy-json";
import { LEGACY_OPENAPI } from "./openapi";
import { notOnLegacyPaths } from "./query";

const PROTOBUF_CONTENT_TYPE = "application/x-protobuf";
const JSON_CONTENT_TYPE = "application/json; charset=utf-8";

export const LEGACY_PROFILE_NAME = "legacy";

/** Whether a method's bindings are legacy paths. */
export const isLegacy = (method: DescMethod): boolean =>
  getOption(method, http_profile) === HttpProfile.LEGACY;

/** The profile of the legacy methods among `methods`; their rules are checked here (http-rules.ts). */
export function createLegacyProfile(methods: Iterable<DescMethod>): Profile {
  const routes = legacyRoutesOf([...methods].filter(isLegacy));
  const byMethod = new Map(routes.map((r) => [r.method as DescMethod, r]));
  const routeOf = (method: DescMethod): LegacyRoute => {
    const route = byMethod.get(method);
    if (!route) throw new RuleError(`${method.name}: not a legacy method`);
    return route;
  };
  return {
    name: LEGACY_PROFILE_NAME,
    caseInsensitivePaths: true,
    exactTrailingSlash: true,
    openApi: LEGACY_OPENAPI,
    check(binding) {
      routeOf(binding.method);
    },
    decode: (binding, _variables, query, exchange) =>
      decodeRequest(routeOf(binding.method), exchange, query),
    answer: (binding, exchange, output) => writeAnswer(exchange, binding.method.output, output),
    answerStream() {
      // http-rules.ts refuses a legacy path for a streaming method at start-up.
      return Promise.reject(new Error("the legacy paths have no streaming methods"));
    },
    fail: (exchange, error) =>
      writeError(exchange, connectToLegacyError(error), answerHeadersOf(error)),
    methodNotAllowed: (exchange, allowed, template) =>
      writeError(exchange, legacyError(405, `use ${allowed.join(" or ")} for ${template}`), {
        allow: allowed.join(", "),
      }),
  };
}

/** The answer as legacy JSON or protobuf (the exchange compresses it when the client accepts it and it is worth it). */
function writeAnswer(exchange: Exchange, schema: DescMessage, message: Message): Promise<void> {
  if (schema.fields.length === 0) {
    // Restore/Delete: 200 with an empty body (SDKs treat 204 as a failure).
    return exchange.respond(200, {}, EMPTY);
  }
  message = legacyFormOf(schema, message);
  // The body is JSON or protobuf by Accept (the exchange adds Accept, Accept-Encoding to Vary).
  return wantsJson(exchange.header("accept"))
    ? exchange.respond(
        200,
        { "content-type": JSON_CONTENT_TYPE },
        Buffer.from(messageToLegacyJson(schema, message), "utf8"),
      )
    : exchange.respond(200, { "content-type": PROTOBUF_CONTENT_TYPE }, toBinary(schema, message));
}

const EMPTY = new Uint8Array(0);

/** Each answer message's fields the legacy paths never write, found once. */
const hiddenFields = new WeakMap<DescMessage, readonly DescField[]>();

/** The answer without its `(docflow.legacy.not_on_legacy_paths)` fields: the legacy wire as the SDKs know it. */
function legacyFormOf(schema: DescMessage, message: Message): Message {
  let hidden = hiddenFields.get(schema);
  if (!hidden) {
    hidden = schema.fields.filter(notOnLegacyPaths);
    hiddenFields.set(schema, hidden);
  }
  if (!hidden.some((field) => isFieldSet(message, field))) return message;
  // A shallow copy without them (a deep clone of a page cost 10 µs, 1.5 % of the call):
  // the values are shared, and nothing changes them once the handler answered.
  const from = message as unknown as Record<string, unknown>;
  const copy = create(schema) as unknown as Record<string, unknown>;
  for (const field of schema.fields) {
    if (hidden.includes(field) || !isFieldSet(message, field)) continue;
    const key = field.oneof ? field.oneof.localName : field.localName;
    copy[key] = from[key];
  }
  return copy as unknown as Message;
}

/** The legacy status, text or problem+json by Accept, X-Service-ErrorCode, and `headers` (a 401's challenge, a refusal's Retry-After, a 405's Allow). */
function writeError(
  exchange: Exchange,
  error: LegacyError,
  headers: Readonly<Record<string, string>>,
): Promise<void> {
  exchange.skipBody();
  const form = errorForm(error, exchange.header("accept"), headers);
  return exchange.respond(form.status, form.headers, Buffer.from(form.body, "utf8"));
}
