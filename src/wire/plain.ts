/**
 * Every answer that is not an RPC response: legacy errors, 404s, 405s,
 * timeouts, health. Errors are short text, or problem+json for clients that
 * asked for JSON, always with X-Service-ErrorCode (docs/api.md §3).
 */

import type { ServerResponse } from "node:http";
import { HTTP_ERRORS, type LegacyError, legacyError } from "./errors";
import type { NodeRequest, NodeResponse } from "./http";

const JSON_ACCEPT = /application\/json/i;
const PROBLEM_ACCEPT = /application\/(?:problem\+)?json/i;

/** Legacy answers are JSON when Accept contains application/json, protobuf otherwise. */
export function wantsJson(accept: string | undefined): boolean {
  return JSON_ACCEPT.test(accept ?? "");
}

/** Errors are problem+json when the client asked for JSON or for problem+json. */
function wantsProblemJson(req: NodeRequest): boolean {
  return PROBLEM_ACCEPT.test(req.headers.accept ?? "");
}

/** One form of an error answer: its status, headers (Content-Length included) and body. */
export interface ErrorForm {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** The error as text, or as problem+json when Accept asks for JSON, with `headers` added. */
export function errorForm(
  error: LegacyError,
  accept: string | undefined,
  headers: Readonly<Record<string, string>> = {},
): ErrorForm {
  return PROBLEM_ACCEPT.test(accept ?? "")
    ? formOf(error, problemJson(error), "application/problem+json", headers)
    : formOf(error, error.message, "text/plain; charset=utf-8", headers);
}

function formOf(
  error: LegacyError,
  body: string,
  contentType: string,
  headers: Readonly<Record<string, string>>,
): ErrorForm {
  return {
    status: error.status,
    body,
    headers: {
      ...headers,
      "x-service-errorcode": error.errorCode,
      "content-type": contentType,
      // An error text may echo input: never let a browser sniff it into HTML (docs/security.md).
      "x-content-type-options": "nosniff",
      "content-length": String(Buffer.byteLength(body, "utf8")),
    },
  };
}

function problemJson(error: LegacyError): string {
  return JSON.stringify({
    type: "about:blank",
    title: HTTP_ERRORS[error.status].title,
    status: error.status,
    detail: error.message,
    errorCode: error.errorCode,
  });
}

export function sendError(
  req: NodeRequest,
  res: NodeResponse,
  error: LegacyError,
  headers: Readonly<Record<string, string>> = {},
): void {
  req.resume();
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const form = errorForm(error, req.headers.accept, headers);
  // problem+json or text by Accept: a cache must not give one client's form to another.
  addVary(res, "Accept");
  (res as ServerResponse).writeHead(form.status, form.headers);
  if (req.method === "HEAD") res.end();
  else res.end(form.body);
}

/** An error answer made once and sent many times (admission's refusals): both bodies, every header. */
export interface PreparedError {
  readonly status: number;
  readonly text: { readonly body: string; readonly headers: Readonly<Record<string, string>> };
  readonly problem: { readonly body: string; readonly headers: Readonly<Record<string, string>> };
}

/** What sendError would answer, made once: text and problem+json, with `headers` added. */
export function prepareError(
  error: LegacyError,
  headers: Readonly<Record<string, string>> = {},
): PreparedError {
  return {
    status: error.status,
    text: formOf(error, error.message, "text/plain; charset=utf-8", headers),
    problem: formOf(error, problemJson(error), "application/problem+json", headers),
  };
}

/** Sends a prepared error as sendError would send it (HEAD: no body). */
export function sendPrepared(req: NodeRequest, res: NodeResponse, prepared: PreparedError): void {
  req.resume();
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const form = wantsProblemJson(req) ? prepared.problem : prepared.text;
  // problem+json or text by Accept (kept beside what CORS added to Vary).
  addVary(res, "Accept");
  (res as ServerResponse).writeHead(prepared.status, form.headers);
  if (req.method === "HEAD") res.end();
  else res.end(form.body);
}

/** 405 with its Allow header: the one way every room refuses a method. */
export function sendMethodNotAllowed(
  req: NodeRequest,
  res: NodeResponse,
  allowed: readonly string[],
  what: string,
): void {
  sendError(req, res, legacyError(405, `use ${allowed.join(" or ")} for ${what}`), {
    allow: allowed.join(", "),
  });
}

export function sendJson(res: NodeResponse, status: number, value: unknown): void {
  const bytes = Buffer.from(JSON.stringify(value), "utf8");
  res.statusCode = status;
  res.setHeader("content-type", "application/json; charset=utf-8");
  res.setHeader("content-length", String(bytes.length));
  res.end(bytes);
}

/**
 * A whole HTTP/1.1 error response for a connection whose request never
 * became a request object (bad syntax, headers too large, too slow).
 */
export function rawErrorResponse(error: LegacyError): string {
  const body = Buffer.from(error.message, "utf8");
  return [
    `HTTP/1.1 ${error.status} ${HTTP_ERRORS[error.status].title}`,
    "Connection: close",
    "Content-Type: text/plain; charset=utf-8",
    "X-Content-Type-Options: nosniff",
    `Content-Length: ${body.length}`,
    `X-Service-ErrorCode: ${error.errorCode}`,
    "",
    error.message,
  ].join("\r\n");
}

/** Adds field names ("A" or "A, B") to Vary, keeping what is there (compression adds Accept-Encoding, CORS Origin). */
export function addVary(res: NodeResponse, name: string): void {
  const current = res.getHeader("vary");
  if (current === undefined) {
    res.setHeader("vary", name);
    return;
  }
  const names = new Set(
    String(current ?? "")
      .split(",")
      .map((v) => v.trim())
      .filter(Boolean),
  );
  for (const added of name.split(", ")) names.add(added);
  res.setHeader("vary", [...names].join(", "));
}
