/**
 * The outcome of one RPC call, as the observability room reports it: which
 * RPC system, which method, and which status code. The pipeline's outermost
 * interceptor writes the code the call ended with into a per-request holder;
 * calls the router rejects before any interceptor runs (an undecodable or too
 * large body) get theirs from the answer itself (the gRPC status trailer, the
 * gRPC-Web trailer frame, the Connect HTTP status), read by the front.
 */
import { Code, ConnectError, createContextKey, type Interceptor } from "@connectrpc/connect";
import type { UniversalServerResponse } from "@connectrpc/connect/protocol";

/**
 * `rpc.system.name`: `grpc` for gRPC and gRPC-Web, `connectrpc` for Connect,
 * and `docflow_legacy` for the legacy HTTP bridge (our own value: it is none
 * of the registered systems, and it runs the same RPC).
 */
export type RpcSystem = "grpc" | "connectrpc" | "docflow_legacy";

/** `rpc.method` of a gRPC/Connect call to a method this service does not serve (never the path itself). */
export const UNKNOWN_RPC_METHOD = "_OTHER";

/** Codes that are the server's fault: `error.type` is set and the span status is ERROR. */
export const SERVER_ERROR_CODES: ReadonlySet<Code> = new Set([
  Code.Unknown,
  Code.DeadlineExceeded,
  Code.Unimplemented,
  Code.Internal,
  Code.Unavailable,
  Code.DataLoss,
]);

/** What the interceptor saw: `null` for success, a code for an error; `undefined` until it ran. */
export interface CallOutcome {
  code: Code | null | undefined;
  /** The fully qualified method the pipeline ran (`docflow.api.v1.X/Y`). */
  method: string | undefined;
}

export const callOutcomeKey = createContextKey<CallOutcome | undefined>(undefined, {
  description: "call outcome",
});

/** Outermost interceptor: records how the call ended, for metrics and traces. */
export const outcomeInterceptor: Interceptor = (next) => async (req) => {
  const outcome = req.contextValues.get(callOutcomeKey);
  if (!outcome) return next(req);
  outcome.method = `${req.service.typeName}/${req.method.name}`;
  try {
    const res = await next(req);
    outcome.code = null;
    return res;
  } catch (error) {
    outcome.code = ConnectError.from(error).code;
    throw error;
  }
};

/** `snake_case` name of a code (`invalid_argument`), as the Connect protocol spells it. */
const CODE_NAMES: ReadonlyMap<Code, string> = new Map(
  Object.entries(Code)
    .filter((e): e is [string, Code] => typeof e[1] === "number")
    .map(([name, code]) => [code, name.replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase()]),
);

export function codeName(code: Code): string {
  return CODE_NAMES.get(code) ?? "unknown";
}

/**
 * `rpc.response.status_code`: gRPC (and the legacy bridge) `OK`,
 * `INVALID_ARGUMENT`, …; Connect: the Connect code on errors, nothing on success.
 */
export function statusCodeOf(system: RpcSystem, code: Code | null): string | undefined {
  if (system === "connectrpc") return code === null ? undefined : codeName(code);
  return code === null ? "OK" : codeName(code).toUpperCase();
}

/** Connect unary error status → code, for answers given before any interceptor ran. */
const CONNECT_STATUS_CODES: Readonly<Record<number, Code>> = {
  400: Code.InvalidArgument,
  401: Code.Unauthenticated,
  403: Code.PermissionDenied,
  404: Code.Unimplemented,
  408: Code.DeadlineExceeded,
  409: Code.Aborted,
  412: Code.FailedPrecondition,
  413: Code.ResourceExhausted,
  415: Code.Internal,
  429: Code.ResourceExhausted,
  499: Code.Canceled,
  501: Code.Unimplemented,
  503: Code.Unavailable,
  504: Code.DeadlineExceeded,
};

const TRAILER_FLAG = 0x80;

/**
 * Watches an RPC answer for its status, in case no interceptor ran: the gRPC
 * trailer (filled in once the body is sent), or the gRPC-Web trailer frame
 * (the body is passed through untouched, each chunk looked at).
 */
export function watchResponse(
  res: UniversalServerResponse,
  grpcWeb: boolean,
): { response: UniversalServerResponse; code(): Code | null | undefined } {
  let webStatus: string | undefined;
  let response = res;
  if (grpcWeb && res.body) {
    const body = res.body;
    response = {
      ...res,
      body: (async function* () {
        for await (const chunk of body) {
          if (chunk[0] === TRAILER_FLAG && chunk.length > 5) {
            const match = /grpc-status:\s*(\d+)/i.exec(Buffer.from(chunk).toString("latin1", 5));
            if (match) webStatus = match[1];
          }
          yield chunk;
        }
      })(),
    };
  }
  return {
    response,
    code() {
      const grpc = res.trailer?.get("grpc-status") ?? res.header?.get("grpc-status") ?? webStatus;
      if (grpc !== undefined && grpc !== null) {
        const n = Number(grpc);
        return n === 0 ? null : CODE_NAMES.has(n) ? (n as Code) : Code.Unknown;
      }
      if (res.trailer !== undefined || grpcWeb) return undefined;
      if (res.status === 200) return null;
      return CONNECT_STATUS_CODES[res.status] ?? Code.Unknown;
    },
  };
}
