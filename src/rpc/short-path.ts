/**
 * What the unary short paths (grpc-unary.ts, connect-unary.ts) share: which
 * calls they take, the request headers and signal they hand the pipeline, and
 * the replay of what they read when they hand a request to the router.
 */
import type { UniversalHandler } from "@connectrpc/connect/protocol";
import { type Compression, compressionNegotiate } from "@connectrpc/connect/protocol";
import type { NodeRequest, NodeResponse } from "../http/responder";
import { PIPELINE_HEADERS, type Pipeline, RPC_COMPRESSION, type UnarySpec } from "./router";

const AVAILABLE = RPC_COMPRESSION as Compression[];

/** A call a short path takes: its implementation, the client's deadline, the compressions. */
export interface UnaryCall {
  readonly spec: UnarySpec;
  readonly timeoutMs: number | undefined;
  /** How a compressed request body is compressed (the protocol's encoding header). */
  readonly requestCompression: Compression | undefined;
  /** From the protocol's accept-encoding header (or the encoding when it says nothing): how the answer is. */
  readonly responseCompression: Compression | undefined;
}

/** Hands the request to the router; `body` replaces the request body (the bytes already read, then the rest). */
export type ToRouter = (body?: AsyncIterable<Uint8Array>) => Promise<void>;

/**
 * The call, when the method is unary and the request's encoding and deadline
 * are ones the router would accept; undefined otherwise (the router answers).
 */
export function unaryCallOf(
  pipeline: Pipeline,
  req: NodeRequest,
  handler: UniversalHandler,
  protocol: {
    readonly encoding: string;
    readonly acceptEncoding: string;
    readonly timeout: { readonly timeoutMs?: number; readonly error?: unknown };
  },
): UnaryCall | undefined {
  const negotiated = compressionNegotiate(
    AVAILABLE,
    header(req, protocol.encoding),
    header(req, protocol.acceptEncoding),
    protocol.acceptEncoding,
  );
  if (negotiated.error || protocol.timeout.error) return undefined;
  const spec = pipeline.unary(handler.method);
  if (!spec) return undefined;
  return {
    spec,
    timeoutMs: protocol.timeout.timeoutMs,
    requestCompression: negotiated.request ?? undefined,
    responseCompression: negotiated.response ?? undefined,
  };
}

/** The request headers the pipeline reads (PIPELINE_HEADERS), nothing else. */
export function pipelineHeaders(req: NodeRequest): Headers {
  const headers = new Headers();
  for (const name of PIPELINE_HEADERS) {
    const value = req.headers[name];
    if (typeof value === "string") headers.set(name, value);
  }
  return headers;
}

/** An abort signal for the call: aborted when the answer's stream closes before it finished. */
export function callSignal(res: NodeResponse): AbortSignal {
  const abort = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) abort.abort();
  });
  return abort.signal;
}

export function header(req: NodeRequest, name: string): string | null {
  const value = req.headers[name];
  return typeof value === "string" ? value : null;
}

export function toNodeHeaders(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of headers) out[name] = value;
  return out;
}

/** The chunks already read, then whatever is left of `rest`. */
export async function* replay(read: readonly Buffer[], rest: NodeRequest | undefined) {
  yield* read;
  if (rest) {
    for await (const chunk of rest) yield chunk as Buffer;
  }
}
