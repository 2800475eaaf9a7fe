/**
 * Negotiation: the one place that decides, before anything of a request is
 * read, which protocol adapter serves it or which refusal it gets
 * (docs/api.md §3). Its Content-Type is parsed here, once, and handed on to
 * the adapter. For a method's path: the adapter; or 415 when no protocol
 * takes the content type, 405 with `Allow` for a wrong verb, 505 for gRPC
 * over HTTP/1.0 (its status travels in trailers, which HTTP/1.0 cannot
 * carry). For a path that is no method: gRPC's UNIMPLEMENTED to the gRPC
 * family (what grpcurl and buf curl expect), else 404.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import type { MethodRoute } from "../call/route";
import { legacyError } from "../wire/errors";
import type { NodeRequest, NodeResponse } from "../wire/http";
import { sendError, sendMethodNotAllowed } from "../wire/plain";
import { connect } from "./connect";
import type { ContentType, RpcAdapter } from "./face";
import { grpc } from "./grpc";
import { grpcWeb } from "./grpc-web";

/** What a request gets instead of a call. */
export type Refusal =
  /** A verb the route does not take (on the request's protocol, or on any): 405 with Allow. */
  | {
      readonly kind: "method-not-allowed";
      readonly allowed: readonly string[];
      readonly path: string;
    }
  /** A content type no protocol here takes: Connect's answer, 415. */
  | { readonly kind: "unsupported-media-type" }
  /** gRPC on HTTP/1.0: its status could not reach the client, so nothing runs. */
  | { readonly kind: "http-version" }
  /** A path that is no method, asked by the gRPC family: that protocol's UNIMPLEMENTED. */
  | { readonly kind: "unimplemented"; readonly adapter: RpcAdapter; readonly error: ConnectError }
  /** A path that is no method, asked by anyone else. */
  | { readonly kind: "not-found"; readonly path: string };

export interface Negotiated {
  readonly ok: true;
  readonly adapter: RpcAdapter;
  readonly type: ContentType;
}

export interface Refused {
  readonly ok: false;
  readonly refusal: Refusal;
  /** The protocol the request speaks, when an answer can be written in it (admission's refusals). */
  readonly speaks: RpcAdapter | undefined;
}

export type Negotiation = Negotiated | Refused;

/**
 * `application/grpc-web…` or `application/grpc…` (group 1; served when the
 * whole value matches, group 2 its JSON codec), or Connect's
 * `application/[connect+](proto|json)` (group 3 a stream's, group 4 JSON).
 */
const CONTENT_TYPE =
  /^application\/(?:(grpc-web|grpc)(?:\+(?:(json)(?:; ?charset=utf-?8)?|proto)$)?|(connect\+)?(?:(json)(?:; ?charset=utf-?8)?|proto)$)/i;

const contentType = (
  media: ContentType["media"],
  json: boolean,
  family: ContentType["family"] = undefined,
): ContentType => Object.freeze({ media, json, family });
/** Every content type there is to tell apart, made once. */
const TYPES = {
  none: contentType(undefined, false),
  grpc: [contentType("grpc", false, "grpc"), contentType("grpc", true, "grpc")],
  grpcWeb: [contentType("grpc-web", false, "grpc-web"), contentType("grpc-web", true, "grpc-web")],
  grpcOther: contentType(undefined, false, "grpc"),
  grpcWebOther: contentType(undefined, false, "grpc-web"),
  connect: [contentType("connect", false), contentType("connect", true)],
  connectStream: [contentType("connect-stream", false), contentType("connect-stream", true)],
} as const;

/** A Content-Type value, parsed: one match, no allocation beyond it. */
function parseContentType(value: string | undefined): ContentType {
  const m = CONTENT_TYPE.exec(value ?? "");
  if (!m) return TYPES.none;
  const family = m[1];
  if (family !== undefined) {
    const web = family.length === "grpc-web".length;
    // A prefix of the family with more after it: no protocol here takes it.
    if (m[0].length !== value?.length) return web ? TYPES.grpcWebOther : TYPES.grpcOther;
    return (web ? TYPES.grpcWeb : TYPES.grpc)[m[2] === undefined ? 0 : 1];
  }
  return (m[3] === undefined ? TYPES.connect : TYPES.connectStream)[m[4] === undefined ? 0 : 1];
}

const POST: readonly string[] = ["POST"];
const POST_GET: readonly string[] = ["POST", "GET"];
const UNSUPPORTED: Refused = Object.freeze({
  ok: false,
  refusal: Object.freeze({ kind: "unsupported-media-type" }),
  speaks: undefined,
});
const HTTP10: Refused = Object.freeze({
  ok: false,
  refusal: Object.freeze({ kind: "http-version" }),
  speaks: undefined,
});

/** HTTP/2, or HTTP/1.1 (trailers after a chunked body); not HTTP/1.0. */
function canCarryTrailers(req: NodeRequest): boolean {
  return req.httpVersionMajor >= 2 || req.httpVersionMinor >= 1;
}

/** The protocol a content type (and, for Connect GET, the verb) picks for `route`. */
function adapterFor(req: NodeRequest, route: MethodRoute, type: ContentType) {
  if (type.media === "grpc") return grpc;
  if (type.media === "grpc-web") return grpcWeb;
  const unary = route.spec.kind === "unary";
  if (req.method === "GET") return unary ? connect : undefined;
  return type.media === (unary ? "connect" : "connect-stream") ? connect : undefined;
}

/**
 * The adapter that serves a request for `route`, with its content type; or
 * the refusal it gets. No route: the refusal of a path that is no method,
 * named by `shownPath` (what of the path may be echoed).
 */
export function negotiate(req: NodeRequest, route: MethodRoute): Negotiation;
export function negotiate(req: NodeRequest, route: undefined, shownPath: string): Refused;
export function negotiate(
  req: NodeRequest,
  route: MethodRoute | undefined,
  shownPath = "",
): Negotiation {
  const type = parseContentType(req.headers["content-type"]);
  if (route === undefined) return unknownMethod(req, type, shownPath);
  const adapter = adapterFor(req, route, type);
  if (adapter === undefined) {
    const allowed = route.allowGet ? POST_GET : POST;
    if (!allowed.includes(req.method ?? "")) {
      return {
        ok: false,
        refusal: { kind: "method-not-allowed", allowed, path: route.path },
        speaks: undefined,
      };
    }
    return UNSUPPORTED;
  }
  if (adapter.needsTrailers && !canCarryTrailers(req)) return HTTP10;
  const methods = adapter.methods(route);
  if (!methods.includes(req.method ?? "")) {
    return {
      ok: false,
      refusal: { kind: "method-not-allowed", allowed: methods, path: route.path },
      speaks: adapter,
    };
  }
  // Connect GET has no content type of its own: unary, its codec from the query.
  return { ok: true, adapter, type: req.method === "GET" ? TYPES.connect[0] : type };
}

/** A path no route serves: gRPC's UNIMPLEMENTED for the gRPC family (by prefix), else 404. */
function unknownMethod(req: NodeRequest, type: ContentType, shownPath: string): Refused {
  const adapter = type.family === "grpc-web" ? grpcWeb : type.family === "grpc" ? grpc : undefined;
  if (adapter === undefined) {
    return { ok: false, refusal: { kind: "not-found", path: shownPath }, speaks: undefined };
  }
  if (adapter.needsTrailers && !canCarryTrailers(req)) return HTTP10;
  const error = new ConnectError(`unknown method ${shownPath}`, Code.Unimplemented);
  return { ok: false, refusal: { kind: "unimplemented", adapter, error }, speaks: adapter };
}

/** Writes a refusal: a plain HTTP answer, or (UNIMPLEMENTED) the protocol's own error. */
export function writeRefusal(req: NodeRequest, res: NodeResponse, refusal: Refusal): void {
  switch (refusal.kind) {
    case "method-not-allowed":
      sendMethodNotAllowed(req, res, refusal.allowed, refusal.path);
      return;
    case "unsupported-media-type":
      sendError(req, res, legacyError(415, "unsupported content type"));
      return;
    case "http-version":
      sendError(
        req,
        res,
        legacyError(505, "gRPC carries its status in trailers, which HTTP/1.0 cannot: use HTTP/2"),
      );
      return;
    case "unimplemented":
      req.resume();
      refusal.adapter.writeError(res, undefined, new Headers(), new Headers(), refusal.error);
      return;
    case "not-found":
      sendError(req, res, legacyError(404, `no such path: ${refusal.path}`));
      return;
  }
}
