/**
 * The legacy HTTP bridge (docs/api.md §3), the fourth protocol adapter: a request on
 * a legacy path becomes the request message of its RPC (query and body,
 * decode.ts) and runs through `callUnary`, the way every protocol's calls
 * run — the same interceptors and implementation, no encoding to protobuf
 * and back. The answer is written as legacy protobuf or JSON, an error as
 * the legacy status with X-Service-ErrorCode.
 */
import type { DescMessage, DescMethod, Message } from "@bufbuild/protobuf";
import { toBinary } from "@bufbuild/protobuf";
import type { ConnectError } from "@connectrpc/connect";
import type { FrontCall } from "../protocols/adapter";
import { callUnary, Undecodable } from "../rpc/call";
import type { Pipeline } from "../rpc/pipeline";
import { COMPRESS_MIN_BYTES, compress, negotiateCoding } from "../wire/compression";
import { CHALLENGE_HEADER, challengeOf, connectToLegacyError } from "../wire/errors";
import { clientGone, type NodeRequest, type NodeResponse, requestHeaders } from "../wire/http";
import { addVary, sendError, sendMethodNotAllowed, wantsJson } from "../wire/plain";
import { decodeRequest } from "./decode";
import { type LegacyRoute, legacyRoutesOf } from "./http-rules";
import { messageToLegacyJson } from "./legacy-json";

const PROTOBUF_CONTENT_TYPE = "application/x-protobuf";
const JSON_CONTENT_TYPE = "application/json; charset=utf-8";

/** A route with the pipeline's route of its method. */
interface BoundRoute extends LegacyRoute {
  readonly call: NonNullable<ReturnType<Pipeline["route"]>>;
}

export interface LegacyBridge {
  readonly routes: readonly LegacyRoute[];
  /** The routes of a path (case-insensitive, like the original API); undefined when none. */
  match(path: string): readonly LegacyRoute[] | undefined;
  /** Answers a request on one of `match(path)`'s routes. */
  serve(
    req: NodeRequest,
    res: NodeResponse,
    candidates: readonly LegacyRoute[],
    query: string,
    front: FrontCall,
  ): Promise<void>;
}

/** The bridge of the pipeline's methods with a rule, but those `elsewhere` says another serves. */
export function createLegacyBridge(
  pipeline: Pipeline,
  elsewhere: (method: DescMethod) => boolean = () => false,
): LegacyBridge {
  const routes: BoundRoute[] = legacyRoutesOf(
    [...pipeline.routes.values()].map((r) => r.method).filter((m) => !elsewhere(m)),
  ).map((route) => {
    const call = pipeline.route(route.method);
    if (call?.spec.kind !== "unary")
      throw new Error(`${route.method.name}: no unary implementation`);
    return { ...route, call };
  });
  const byPath = new Map<string, BoundRoute[]>();
  for (const route of routes) {
    const key = route.path.toLowerCase();
    byPath.set(key, [...(byPath.get(key) ?? []), route]);
  }

  return {
    routes,
    match: (path) => byPath.get(path.toLowerCase()),
    async serve(req, res, candidates, query, front) {
      const route = candidates.find((r) => r.verb === req.method) as BoundRoute | undefined;
      if (!route) {
        sendMethodNotAllowed(
          req,
          res,
          candidates.map((r) => r.verb),
          candidates[0]?.path ?? "",
        );
        return;
      }
      const gone = clientGone(res);
      // A request that cannot be decoded still runs the interceptors: without
      // valid credentials it is a 401 first, as the order of checks says.
      let input: Message | Undecodable;
      try {
        input = await decodeRequest(route, req, query);
      } catch (error) {
        if (gone.aborted) return;
        input = new Undecodable(error);
      }
      const outcome = await callUnary(
        pipeline.interceptors,
        {
          route: route.call,
          protocolName: "legacy",
          requestMethod: req.method ?? "GET",
          url: route.path,
          timeoutMs: undefined,
          requestHeader: requestHeaders(req),
          requestSignal: gone,
          values: front.values,
        },
        input,
      );
      if (res.destroyed) return;
      if (outcome.error) {
        writeError(req, res, outcome.error);
        return;
      }
      await writeAnswer(req, res, route.method.output, outcome.output);
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

/** The legacy status of the error, its X-Service-ErrorCode and, on a 401, its challenge. */
function writeError(req: NodeRequest, res: NodeResponse, error: ConnectError): void {
  const challenge = challengeOf(error);
  sendError(
    req,
    res,
    connectToLegacyError(error),
    challenge ? { [CHALLENGE_HEADER]: challenge } : {},
  );
}
