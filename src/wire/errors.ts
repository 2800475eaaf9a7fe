/**
 * The one table of error statuses (docs/api.md §4). `CODES` gives every code
 * the HTTP status the Connect protocol answers it with (the transcoder's JSON
 * profile answers the same), and the legacy HTTP status; `DOMAIN_ERRORS` maps
 * each domain error kind to a code and a legacy status; `HTTP_ERRORS` gives
 * each legacy status its X-Service-ErrorCode, title and the OpenAPI
 * document's words. Every other mapping (the protocol adapters, the bridge,
 * the transcoder, metrics and traces, the OpenAPI document, the front's own
 * answers) reads from here. A code's names are not restated here: Connect's
 * `invalid_argument` is connect-es's `codeToString`, the `google.rpc.Code`
 * (and gRPC) `INVALID_ARGUMENT` is the transcoder's `googleCodeName`.
 */
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb";
import { type DomainError, ErrorKind } from "../domain/errors";

/** google.rpc.ErrorInfo.domain of the errors this service raises. */
export const ERROR_DOMAIN = "docflow-api";

/** Short message shown for every 5xx: details go to the log only. */
export const INTERNAL_MESSAGE = "unexpected processing error";

/**
 * Every HTTP status the service answers with an error body: its
 * X-Service-ErrorCode, its title, and (for the statuses any legacy operation
 * may answer) what the OpenAPI document says of it.
 */
export const HTTP_ERRORS = {
  400: {
    errorCode: "Http.BadRequest",
    title: "Bad Request",
    described: "Malformed data, or a missing or invalid parameter. Nothing changes.",
  },
  401: {
    errorCode: "Http.Unauthorized",
    title: "Unauthorized",
    described:
      "The Authorization header is missing or wrong: unknown or disabled API client, unknown or expired token, an invalid Bearer token, or more than one Authorization header. WWW-Authenticate names the scheme(s) and, for Bearer, the error.",
  },
  402: {
    errorCode: "Http.PaymentRequired",
    title: "Payment Required",
    described: "The organization of the box has no remaining API subscription.",
  },
  403: {
    errorCode: "Http.Forbidden",
    title: "Forbidden",
    described:
      'Access to the box with this token is forbidden (unknown boxes too), the Bearer token lacks the required scope (WWW-Authenticate error="insufficient_scope"), or the caller lacks the rights.',
  },
  404: { errorCode: "Http.NotFound", title: "Not Found", described: undefined },
  405: {
    errorCode: "Http.MethodNotAllowed",
    title: "Method Not Allowed",
    described: "Wrong HTTP method; the Allow header names the right one.",
  },
  408: { errorCode: "Http.RequestTimeout", title: "Request Timeout", described: undefined },
  409: { errorCode: "Http.Conflict", title: "Conflict", described: undefined },
  412: {
    errorCode: "Http.PreconditionFailed",
    title: "Precondition Failed",
    described: undefined,
  },
  429: {
    errorCode: "Http.TooManyRequests",
    title: "Too Many Requests",
    described:
      "This client is over its share of an instance other clients wait for (X-Service-ErrorCode Service.ClientOverShare), or too many authentications failed from its address or with its API key (Auth.TooManyFailures). Nothing was done; retry after Retry-After seconds.",
  },
  413: { errorCode: "Http.PayloadTooLarge", title: "Content Too Large", described: undefined },
  415: {
    errorCode: "Http.UnsupportedMediaType",
    title: "Unsupported Media Type",
    described: undefined,
  },
  431: {
    errorCode: "Http.RequestHeaderFieldsTooLarge",
    title: "Request Header Fields Too Large",
    described: undefined,
  },
  // Never sent: a client that closed its connection reads nothing. It names the outcome in logs.
  499: {
    errorCode: "Http.ClientClosedRequest",
    title: "Client Closed Request",
    described: undefined,
  },
  500: {
    errorCode: "Http.InternalServerError",
    title: "Internal Server Error",
    described: "Unexpected processing error.",
  },
  501: { errorCode: "Http.NotImplemented", title: "Not Implemented", described: undefined },
  503: {
    errorCode: "Http.ServiceUnavailable",
    title: "Service Unavailable",
    described:
      "The instance is over its capacity (X-Service-ErrorCode Service.Overloaded). Nothing was done; retry after Retry-After seconds, with jitter.",
  },
  505: {
    errorCode: "Http.VersionNotSupported",
    title: "HTTP Version Not Supported",
    described: undefined,
  },
} as const;
export type HttpErrorStatus = keyof typeof HTTP_ERRORS;

interface CodeRow {
  /** The Connect protocol's HTTP status for an error of this code (and the JSON profile's). */
  readonly connectStatus: number;
  /** The legacy paths' status, for errors that carry no ErrorInfo of ours. */
  readonly legacyStatus: HttpErrorStatus;
}

/** Every code (OK aside): both of its HTTP statuses. */
export const CODES: Readonly<Record<Code, CodeRow>> = {
  [Code.Canceled]: { connectStatus: 499, legacyStatus: 499 },
  // docs/api.md §4: everything unexpected is a plain 500 on the legacy paths.
  [Code.Unknown]: { connectStatus: 500, legacyStatus: 500 },
  [Code.InvalidArgument]: { connectStatus: 400, legacyStatus: 400 },
  // A missed deadline is the service's fault: a plain 500 on the legacy paths.
  [Code.DeadlineExceeded]: { connectStatus: 504, legacyStatus: 500 },
  [Code.NotFound]: { connectStatus: 404, legacyStatus: 404 },
  [Code.AlreadyExists]: { connectStatus: 409, legacyStatus: 409 },
  [Code.PermissionDenied]: { connectStatus: 403, legacyStatus: 403 },
  // The one resource we exhaust is the request size limit; 429 would invite SDK retries.
  [Code.ResourceExhausted]: { connectStatus: 429, legacyStatus: 413 },
  // Only the ErrorInfo reason API_SUBSCRIPTION_ENDED makes it a legacy 402.
  [Code.FailedPrecondition]: { connectStatus: 400, legacyStatus: 400 },
  [Code.Aborted]: { connectStatus: 409, legacyStatus: 409 },
  [Code.OutOfRange]: { connectStatus: 400, legacyStatus: 400 },
  [Code.Unimplemented]: { connectStatus: 501, legacyStatus: 501 },
  [Code.Internal]: { connectStatus: 500, legacyStatus: 500 },
  // docs/api.md §4: an outage is unavailable on gRPC/Connect and a plain 500 on legacy paths.
  [Code.Unavailable]: { connectStatus: 503, legacyStatus: 500 },
  [Code.DataLoss]: { connectStatus: 500, legacyStatus: 500 },
  [Code.Unauthenticated]: { connectStatus: 401, legacyStatus: 401 },
};

/** The code of a gRPC status number, `null` for OK; any number outside the table is Unknown. */
export function codeOfGrpcStatus(status: number): Code | null {
  if (status === 0) return null;
  return CODES[status as Code] === undefined ? Code.Unknown : (status as Code);
}

interface KindRow {
  readonly code: Code;
  readonly httpStatus: HttpErrorStatus;
  /** The resource API's status (the JSON profile), where it is not the code's Connect status. */
  readonly restStatus?: HttpErrorStatus;
  /** google.rpc.ErrorInfo.reason on gRPC/Connect. */
  readonly reason: string;
}

/** Domain error kinds. */
export const DOMAIN_ERRORS: Readonly<Record<ErrorKind, KindRow>> = {
  [ErrorKind.InvalidArgument]: {
    code: Code.InvalidArgument,
    httpStatus: 400,
    reason: "INVALID_ARGUMENT",
  },
  [ErrorKind.Unauthenticated]: {
    code: Code.Unauthenticated,
    httpStatus: 401,
    reason: "UNAUTHENTICATED",
  },
  // 402 has no code of its own: failed_precondition + ErrorInfo reason, turned into 402 on legacy paths.
  // The resource API says what the legacy paths say: an HTTP client branches on the status.
  [ErrorKind.SubscriptionEnded]: {
    code: Code.FailedPrecondition,
    httpStatus: 402,
    restStatus: 402,
    reason: "API_SUBSCRIPTION_ENDED",
  },
  [ErrorKind.PermissionDenied]: {
    code: Code.PermissionDenied,
    httpStatus: 403,
    reason: "PERMISSION_DENIED",
  },
  [ErrorKind.NotFound]: { code: Code.NotFound, httpStatus: 404, reason: "NOT_FOUND" },
  [ErrorKind.Conflict]: { code: Code.AlreadyExists, httpStatus: 409, reason: "ALREADY_EXISTS" },
  // Only the legacy bridge raises it (an unsupported Content-Encoding); RPC protocols negotiate their own.
  [ErrorKind.UnsupportedMediaType]: {
    code: Code.InvalidArgument,
    httpStatus: 415,
    reason: "UNSUPPORTED_MEDIA_TYPE",
  },
  [ErrorKind.Unavailable]: { code: Code.Unavailable, httpStatus: 500, reason: "UNAVAILABLE" },
  // docs/api.md §4.1: gRPC clients retry unavailable (with backoff, on another instance)…
  [ErrorKind.Overloaded]: { code: Code.Unavailable, httpStatus: 503, reason: "OVERLOADED" },
  // …and treat resource_exhausted as a quota of their own, not to be retried at once.
  [ErrorKind.ClientOverShare]: {
    code: Code.ResourceExhausted,
    httpStatus: 429,
    reason: "CLIENT_OVER_SHARE",
  },
  // A quota of the caller's own making, not to be retried at once, as a share.
  [ErrorKind.TooManyFailures]: {
    code: Code.ResourceExhausted,
    httpStatus: 429,
    reason: "AUTH_FAILURE_BUDGET",
  },
  // AIP-154's failed_precondition; HTTP's own answer to a false If-Match (RFC 9110 §13.1.1).
  [ErrorKind.PreconditionFailed]: {
    code: Code.FailedPrecondition,
    httpStatus: 412,
    restStatus: 412,
    reason: "ETAG_MISMATCH",
  },
};

/** The HTTP status the resource API (the transcoder's JSON profile) answers an error with. */
export function restStatusOf(error: ConnectError): number {
  const row = domainRowOf(error);
  return row?.restStatus ?? CODES[error.code].connectStatus;
}

/** The domain error row an error came from, by its ErrorInfo (ours: domain ERROR_DOMAIN). */
function domainRowOf(error: ConnectError): KindRow | undefined {
  const info = error.findDetails(ErrorInfoSchema).find((detail) => detail.domain === ERROR_DOMAIN);
  return info && Object.values(DOMAIN_ERRORS).find((r) => r.reason === info.reason);
}

/**
 * A 401's challenge (and a Bearer 403's `insufficient_scope`), docs/api.md §5.1:
 * ConnectError metadata, so a response header (Connect, legacy) or
 * header/trailer (gRPC, gRPC-Web) on every protocol.
 */
export const CHALLENGE_HEADER = "www-authenticate";

/** When to come back, in seconds (RFC 9110 §10.2.3), on a refusal: a response header (trailer on gRPC). */
export const RETRY_AFTER_HEADER = "retry-after";
/** gRPC's retry pushback (gRFC A6), in ms: a trailer the gRPC family reads when it retries. */
export const RETRY_PUSHBACK_HEADER = "grpc-retry-pushback-ms";

/** The WWW-Authenticate an error carries, for the legacy answer. */
export function challengeOf(error: ConnectError): string | undefined {
  return error.metadata.get(CHALLENGE_HEADER) ?? undefined;
}

/** The plain-HTTP answer's headers an error carries: its challenge, and when to come back. */
export function answerHeadersOf(error: ConnectError): Record<string, string> {
  const headers: Record<string, string> = {};
  const challenge = error.metadata.get(CHALLENGE_HEADER);
  if (challenge !== null) headers[CHALLENGE_HEADER] = challenge;
  const retryAfter = error.metadata.get(RETRY_AFTER_HEADER);
  if (retryAfter !== null) headers[RETRY_AFTER_HEADER] = retryAfter;
  return headers;
}

export function domainToConnectError(error: DomainError): ConnectError {
  const row = DOMAIN_ERRORS[error.kind];
  const info = create(ErrorInfoSchema, {
    reason: row.reason,
    domain: ERROR_DOMAIN,
    metadata: { errorCode: error.errorCode },
  });
  const metadata: Record<string, string> = {};
  if (error.challenge) metadata[CHALLENGE_HEADER] = error.challenge;
  if (error.retryAfterS !== undefined) {
    metadata[RETRY_AFTER_HEADER] = String(error.retryAfterS);
    metadata[RETRY_PUSHBACK_HEADER] = String(error.retryAfterS * 1000);
  }
  return new ConnectError(
    error.message,
    row.code,
    metadata,
    [{ desc: ErrorInfoSchema, value: info }],
    error.cause,
  );
}

export interface LegacyError {
  readonly status: HttpErrorStatus;
  /** Sent as X-Service-ErrorCode. */
  readonly errorCode: string;
  /** Short, human-readable, safe to show. */
  readonly message: string;
}

export function connectToLegacyError(error: ConnectError): LegacyError {
  const info = error.findDetails(ErrorInfoSchema).find((detail) => detail.domain === ERROR_DOMAIN);
  const row = domainRowOf(error);
  const status = row?.httpStatus ?? CODES[error.code].legacyStatus;
  // A 503 is a refusal that did nothing: its message and code are safe to show, unlike a fault's.
  const hidden = status >= 500 && status !== 503;
  return legacyError(
    status,
    hidden ? INTERNAL_MESSAGE : error.rawMessage,
    hidden ? undefined : info?.metadata.errorCode,
  );
}

export function legacyError(
  status: HttpErrorStatus,
  message: string,
  errorCode?: string,
): LegacyError {
  return { status, message, errorCode: errorCode ?? HTTP_ERRORS[status].errorCode };
}
