/**
 * The legacy HTTP bridge (SPEC §3): a request on a legacy path becomes the
 * request message of its RPC and runs, in process, through the very same
 * interceptors and handler as on Connect and gRPC (connect-es's own
 * `invokeUnaryImplementation`, the function its router calls) — with no
 * encoding to protobuf and back in between. The answer is written as legacy
 * protobuf or JSON.
 */
import { create, type DescMessage, type Message, toBinary } from "@bufbuild/protobuf";
import { ConnectError, type ContextValues, createHandlerContext } from "@connectrpc/connect";
import { COMPRESS_MIN_BYTES, compress, negotiateCoding } from "../http/compression";
import { addVary } from "../http/cors";
import type { NodeRequest, NodeResponse } from "../http/responder";
import { sendError, wantsJson } from "../http/responder";
import {
  CHALLENGE_HEADER,
  challengeOf,
  connectToLegacyError,
  legacyError,
} from "../rpc/error-table";
import { PIPELINE_HEADERS, type Pipeline, type UnarySpec } from "../rpc/router";
import { decodeRequest } from "./decode";
import { type LegacyRoute, legacyRoutesOf } from "./http-rules";
import { messageToLegacyJson } from "./legacy-json";

const PROTOBUF_CONTENT_TYPE = "application/x-protobuf";
const JSON_CONTENT_TYPE = "application/json; charset=utf-8";

interface BoundRoute extends LegacyRoute {
  readonly spec: UnarySpec;
}

export interface LegacyBridge {
  readonly routes: readonly LegacyRoute[];
  /** The routes of a path (case-insensitive, like the original API); undefined when none. */
  match(path: string): readonly LegacyRoute[] | undefined;
  /** Answers a request on one of `match(path)`'s routes. */
  handle(
    req: NodeRequest,
    res: NodeResponse,
    candidates: readonly LegacyRoute[],
    query: string,
    values: ContextValues,
  ): Promise<void>;
}

export function createLegacyBridge(pipeline: Pipeline): LegacyBridge {
  const routes: BoundRoute[] = legacyRoutesOf(pipeline.handlers.map((h) => h.method)).map(
    (route) => {
      const spec = pipeline.unary(route.method);
      if (!spec) throw new Error(`${route.method.name}: no unary implementation`);
      return { ...route, spec };
    },
  );
  const byPath = new Map<string, BoundRoute[]>();
  for (const route of routes) {
    const key = route.path.toLowerCase();
    byPath.set(key, [...(byPath.get(key) ?? []), route]);
  }

  return {
    routes,
    match: (path) => byPath.get(path.toLowerCase()),
    async handle(req, res, candidates, query, values) {
      const route = candidates.find((r) => r.verb === req.method) as BoundRoute | undefined;
      if (!route) {
        const allow = candidates.map((r) => r.verb).join(", ");
        sendError(req, res, legacyError(405, `use ${allow} for ${candidates[0]?.path}`), {
          allow,
        });
        return;
      }
      const abort = new AbortController();
      res.once("close", () => {
        if (!res.writableFinished) abort.abort();
      });
      try {
        const output = await invoke(pipeline, route, req, query, values, abort.signal);
        await sendMessage(req, res, route.method.output, output);
      } catch (error) {
        const e = ConnectError.from(error);
        const challenge = challengeOf(e);
        sendError(
          req,
          res,
          connectToLegacyError(e),
          challenge ? { [CHALLENGE_HEADER]: challenge } : {},
        );
      }
    },
  };
}

/**
 * Runs the call through the pipeline. A request that cannot be decoded still
 * runs the interceptors, with an implementation that reports why: so a bad
 * request without valid credentials is a 401, as the order of checks says.
 */
async function invoke(
  pipeline: Pipeline,
  route: BoundRoute,
  req: NodeRequest,
  query: string,
  values: ContextValues,
  signal: AbortSignal,
): Promise<Message> {
  let spec = route.spec;
  let input: Message;
  try {
    input = await decodeRequest(route, req, query);
  } catch (error) {
    spec = { ...spec, impl: () => Promise.reject(error) };
    input = create(route.method.input);
  }
  const requestHeader = new Headers();
  for (const name of PIPELINE_HEADERS) {
    const value = req.headers[name];
    if (typeof value === "string") requestHeader.set(name, value);
  }
  const context = createHandlerContext({
    service: route.method.parent,
    method: route.method,
    protocolName: "legacy",
    requestMethod: req.method ?? "GET",
    url: route.path,
    requestHeader,
    requestSignal: signal,
    contextValues: values,
  });
  return pipeline.invoke(spec, context, input);
}

/** The answer as legacy JSON or protobuf, compressed when the client accepts it and it is worth it. */
async function sendMessage(
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
  addVary(res, "Accept-Encoding");
  const coding =
    body.length >= COMPRESS_MIN_BYTES ? negotiateCoding(req.headers["accept-encoding"]) : undefined;
  if (coding) {
    body = await compress(body, coding);
    res.setHeader("content-encoding", coding);
  }
  res.setHeader("content-length", String(body.length));
  res.end(body);
}
