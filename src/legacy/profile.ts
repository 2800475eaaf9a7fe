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
  type DescMessage,
  type DescMethod,
  getOption,
  type Message,
  toBinary,
} from "@bufbuild/protobuf";
import type { ConnectError } from "@connectrpc/connect";
import { HttpProfile, http_profile } from "../../gen/docflow/legacy/options_pb";
import type { Exchange } from "../transcoder/exchange";
import type { Profile } from "../transcoder/json-profile";
import { RuleError } from "../transcoder/rules";
import { COMPRESS_MIN_BYTES, compress, negotiateCoding } from "../wire/compression";
import { answerHeadersOf, connectToLegacyError } from "../wire/errors";
import type { NodeRequest, NodeResponse } from "../wire/http";
import { addVary, sendError, sendMethodNotAllowed, wantsJson } from "../wire/plain";
import { decodeRequest } from "./decode";
import { type LegacyRoute, legacyRoutesOf } from "./http-rules";
import { messageToLegacyJson } from "./legacy-json";
import { LEGACY_OPENAPI } from "./openapi";

const PROTOBUF_CONTENT_TYPE = "application/x-protobuf";
const JSON_CONTENT_TYPE = "application/json; charset=utf-8";

/** The exchange of our front door: the legacy answers are written on Node's response itself. */
export interface NodeExchange extends Exchange {
  readonly req: NodeRequest;
  readonly res: NodeResponse;
}

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
  const node = (exchange: Exchange) => exchange as NodeExchange;
  return {
    name: LEGACY_PROFILE_NAME,
    caseInsensitivePaths: true,
    exactTrailingSlash: true,
    openApi: LEGACY_OPENAPI,
    check(binding) {
      routeOf(binding.method);
    },
    decode: (binding, _variables, query, exchange) =>
      decodeRequest(routeOf(binding.method), node(exchange).req, query),
    answer: (binding, exchange, output) =>
      writeAnswer(node(exchange).req, node(exchange).res, binding.method.output, output),
    answerStream() {
      // http-rules.ts refuses a legacy path for a streaming method at start-up.
      return Promise.reject(new Error("the legacy paths have no streaming methods"));
    },
    async fail(exchange, error) {
      writeError(node(exchange).req, node(exchange).res, error);
    },
    async methodNotAllowed(exchange, allowed, template) {
      sendMethodNotAllowed(node(exchange).req, node(exchange).res, allowed, template);
    },
  };
}

/** The answer as legacy JSON or protobuf, compressed when the client accepts it and it is worth it. */
async function writeAnswer(
  req: NodeRequest,
  res: NodeResponse,
  schema: DescMessage,
  message: Message,
): Promise<void> {
  const asJson = wantsJson(req);
  res.statusCode = 200;
  if (schema.fields.length === 0) {
    // Restore/Delete: 200 with an empty body (SDKs treat 204 as a failure).
    res.setHeader("content-length", "0");
    res.end();
    return;
  }
  let body: Uint8Array = asJson
    ? Buffer.from(messageToLegacyJson(schema, message), "utf8")
    : toBinary(schema, message);
  res.setHeader("content-type", asJson ? JSON_CONTENT_TYPE : PROTOBUF_CONTENT_TYPE);
  // The body is JSON or protobuf by Accept, compressed or not by Accept-Encoding.
  addVary(res, "Accept, Accept-Encoding");
  const coding =
    body.length >= COMPRESS_MIN_BYTES ? negotiateCoding(req.headers["accept-encoding"]) : undefined;
  if (coding) {
    body = await compress(body, coding);
    res.setHeader("content-encoding", coding);
  }
  res.setHeader("content-length", String(body.length));
  res.end(body);
}

/** The legacy status of the error, its X-Service-ErrorCode and, on a 401, its challenge (on a refusal, Retry-After). */
function writeError(req: NodeRequest, res: NodeResponse, error: ConnectError): void {
  sendError(req, res, connectToLegacyError(error), answerHeadersOf(error));
}
