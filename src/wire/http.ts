/**
 * Node's request and response of either HTTP version, as every room above
 * sees them, and how their headers are read.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";

export type NodeRequest = IncomingMessage | Http2ServerRequest;
export type NodeResponse = ServerResponse | Http2ServerResponse;

/**
 * Whether the request is gone: its connection closed before its body was read
 * to the end, and what had arrived was dropped (Node destroys an HTTP/1.1
 * request whose connection closes before its answer). Its 'close' was emitted
 * already, and no 'end' will come: a reader starting now must not wait for
 * either (one did, and the call held its admission slot for good: a reader
 * after authentication's database round trip, the connection closed meanwhile).
 */
export function requestGone(req: NodeRequest): boolean {
  return req.destroyed && !req.readableEnded;
}

/** A request header as one string (Node joins repeated ones), or null when absent. */
export function headerOf(req: NodeRequest, name: string): string | null {
  const value = req.headers[name];
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join(", ") : value;
}

/**
 * The request headers as connect-es shows them to interceptors and handlers
 * (a `Headers` init): Node's merged `req.headers`, repeated values appended,
 * HTTP/2 pseudo-headers left out.
 */
export function requestHeaders(req: NodeRequest): [string, string][] {
  const out: [string, string][] = [];
  const headers = req.headers;
  for (const name in headers) {
    if (name.charCodeAt(0) === 0x3a /* ":" */) continue;
    const value = headers[name];
    if (typeof value === "string") out.push([name, value]);
    else if (Array.isArray(value)) for (const v of value) out.push([name, v]);
  }
  return out;
}

/** Writes a chunk of the body (the headers first, if not yet sent); false: wait for 'drain'. */
export function writeChunk(res: NodeResponse, chunk: Uint8Array): boolean {
  return (res as ServerResponse).write(chunk);
}

/** Sends the status and headers now (an HTTP/2 HEADERS frame), before any body. */
export function sendHead(res: NodeResponse): void {
  if (!res.headersSent) (res as ServerResponse).writeHead(res.statusCode);
}
