/**
 * The one table of error statuses (SPEC §4): domain error kinds → Connect
 * codes and legacy HTTP statuses, Connect codes → legacy statuses, and each
 * legacy status's X-Service-ErrorCode and title. Every other mapping (the
 * bridge, the front's own answers, the OpenAPI document) reads from here.
 */
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb";
import { type DomainError, ErrorKind } from "../domain/errors";

/** google.rpc.ErrorInfo.domain of the errors this service raises. */
const ERROR_DOMAIN = "docflow-api";

/** Short message shown for every 5xx: details go to the log only. */
export const INTERNAL_MESSAGE = "unexpected processing error";

/** Every HTTP status the service answers with an error body, its X-Service-ErrorCode and title. */
export const HTTP_ERRORS = {
  400: { errorCode: "Http.BadRequest", title: "Bad Request" },
  401: { errorCode: "Http.Unauthorized", title: "Unauthorized" },
  402: { errorCode: "Http.PaymentRequired", title: "Payment Required" },
  403: { errorCode: "Http.Forbidden", title: "Forbidden" },
  404: { errorCode: "Http.NotFound", title: "Not Found" },
  405: { errorCode: "Http.MethodNotAllowed", title: "Method Not Allowed" },
  408: { errorCode: "Http.RequestTimeout", title: "Request Timeout" },
  409: { errorCode: "Http.Conflict", title: "Conflict" },
  413: { errorCode: "Http.PayloadTooLarge", title: "Content Too Large" },
  415: { errorCode: "Http.UnsupportedMediaType", title: "Unsupported Media Type" },
  431: { errorCode: "Http.RequestHeaderFieldsTooLarge", title: "Request Header Fields Too Large" },
  // Never sent: a client that closed its connection reads nothing. It names the outcome in logs.
  499: { errorCode: "Http.ClientClosedRequest", title: "Client Closed Request" },
  500: { errorCode: "Http.InternalServerError", title: "Internal Server Error" },
  501: { errorCode: "Http.NotImplemented", title: "Not Implemented" },
  503: { errorCode: "Http.ServiceUnavailable", title: "Service Unavailable" },
  505: { errorCode: "Http.VersionNotSupported", title: "HTTP Version Not Supported" },
} as const;
export type HttpErrorStatus = keyof typeof HTTP_ERRORS;

interface KindRow {
  readonly code: Code;
  readonly httpStatus: HttpErrorStatus;
  /** google.rpc.ErrorInfo.reason on gRPC/Connect. */
  readonly reason: string;
}

/** Domain error kinds. */
export const ERROR_TABLE: Readonly<Record<ErrorKind, KindRow>> = {
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
  [ErrorKind.SubscriptionEnded]: {
    code: Code.FailedPrecondition,
    httpStatus: 402,
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
  // SPEC §4: an outage is unavailable on gRPC/Connect and a plain 500 on legacy paths.
  [ErrorKind.Unavailable]: { code: Code.Unavailable, httpStatus: 500, reason: "UNAVAILABLE" },
};

/** The legacy status of every Connect code, for errors that carry no ErrorInfo of ours. */
export const STATUS_BY_CODE: Readonly<Record<Code, HttpErrorStatus>> = {
  [Code.InvalidArgument]: 400,
  [Code.OutOfRange]: 400,
  // Only the ErrorInfo reason API_SUBSCRIPTION_ENDED makes it a 402.
  [Code.FailedPrecondition]: 400,
  [Code.Unauthenticated]: 401,
  [Code.PermissionDenied]: 403,
  [Code.NotFound]: 404,
  [Code.AlreadyExists]: 409,
  [Code.Aborted]: 409,
  // The one resource we exhaust is the request size limit; 429 would invite SDK retries.
  [Code.ResourceExhausted]: 413,
  [Code.Canceled]: 499,
  [Code.Unimplemented]: 501,
  // SPEC §4: everything unexpected, an outage or a missed deadline included, is a plain 500.
  [Code.Unknown]: 500,
  [Code.Internal]: 500,
  [Code.DataLoss]: 500,
  [Code.Unavailable]: 500,
  [Code.DeadlineExceeded]: 500,
};

/**
 * A 401's challenge (and a Bearer 403's `insufficient_scope`), SPEC §5.1:
 * ConnectError metadata, so a response header (Connect, legacy) or
 * header/trailer (gRPC, gRPC-Web) on every protocol.
 */
export const CHALLENGE_HEADER = "www-authenticate";

/** The WWW-Authenticate an error carries, for the legacy answer. */
export function challengeOf(error: ConnectError): string | undefined {
  return error.metadata.get(CHALLENGE_HEADER) ?? undefined;
}

export function domainToConnectError(error: DomainError): ConnectError {
  const row = ERROR_TABLE[error.kind];
  const info = create(ErrorInfoSchema, {
    reason: row.reason,
    domain: ERROR_DOMAIN,
    metadata: { errorCode: error.errorCode },
  });
  return new ConnectError(
    error.message,
    row.code,
    error.challenge ? { [CHALLENGE_HEADER]: error.challenge } : undefined,
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
  const row = info && Object.values(ERROR_TABLE).find((r) => r.reason === info.reason);
  const status = row?.httpStatus ?? STATUS_BY_CODE[error.code];
  return legacyError(
    status,
    status >= 500 ? INTERNAL_MESSAGE : error.rawMessage,
    status >= 500 ? undefined : info?.metadata.errorCode,
  );
}

export function legacyError(
  status: HttpErrorStatus,
  message: string,
  errorCode?: string,
): LegacyError {
  return { status, message, errorCode: errorCode ?? HTTP_ERRORS[status].errorCode };
}
