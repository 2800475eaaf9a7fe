/**
 * The one table from domain errors to Connect codes and legacy HTTP statuses
 * (SPEC §4), and the way back from a Connect error to a legacy status.
 */
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb";
import { type DomainError, ErrorKind } from "../domain/errors";

/** google.rpc.ErrorInfo.domain of the errors this service raises. */
export const ERROR_DOMAIN = "docflow-api";

interface ErrorRow {
  readonly code: Code;
  readonly httpStatus: number;
  /** google.rpc.ErrorInfo.reason on gRPC/Connect. */
  readonly reason: string;
}

export const ERROR_TABLE: Readonly<Record<ErrorKind, ErrorRow>> = {
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
  // 402 has no code of its own: failed_precondition + ErrorInfo reason, turned into 402 by the bridge.
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
};

/** Legacy status of errors that carry no ErrorInfo of ours (raised by the framework). */
const STATUS_BY_CODE: Partial<Record<Code, number>> = {
  [Code.InvalidArgument]: 400,
  [Code.OutOfRange]: 400,
  [Code.FailedPrecondition]: 400,
  [Code.Unauthenticated]: 401,
  [Code.PermissionDenied]: 403,
  [Code.NotFound]: 404,
  [Code.AlreadyExists]: 409,
  [Code.Aborted]: 409,
  [Code.ResourceExhausted]: 429,
  [Code.Unimplemented]: 501,
  // Everything else, a database outage (unavailable) included, is a 500.
};

const ERROR_CODE_BY_STATUS: Readonly<Record<number, string>> = {
  400: "Http.BadRequest",
  401: "Http.Unauthorized",
  402: "Http.PaymentRequired",
  403: "Http.Forbidden",
  404: "Http.NotFound",
  405: "Http.MethodNotAllowed",
  409: "Http.Conflict",
  413: "Http.PayloadTooLarge",
  429: "Http.TooManyRequests",
  501: "Http.NotImplemented",
};

/** Short message shown for every 5xx: details go to the log only. */
export const INTERNAL_MESSAGE = "unexpected processing error";

export function domainToConnectError(error: DomainError): ConnectError {
  const row = ERROR_TABLE[error.kind];
  const info = create(ErrorInfoSchema, {
    reason: row.reason,
    domain: ERROR_DOMAIN,
    metadata: { errorCode: error.errorCode },
  });
  return new ConnectError(error.message, row.code, undefined, [
    { desc: ErrorInfoSchema, value: info },
  ]);
}

export interface LegacyError {
  readonly status: number;
  /** Sent as X-Service-ErrorCode. */
  readonly errorCode: string;
  /** Short, human-readable, safe to show. */
  readonly message: string;
}

export function connectToLegacyError(error: ConnectError): LegacyError {
  const info = error.findDetails(ErrorInfoSchema).find((detail) => detail.domain === ERROR_DOMAIN);
  const row = info && Object.values(ERROR_TABLE).find((r) => r.reason === info.reason);
  const status = row?.httpStatus ?? STATUS_BY_CODE[error.code] ?? 500;
  return legacyError(
    status,
    status === 500 ? INTERNAL_MESSAGE : error.rawMessage,
    info?.metadata.errorCode,
  );
}

export function legacyError(status: number, message: string, errorCode?: string): LegacyError {
  return {
    status,
    message,
    errorCode: errorCode ?? ERROR_CODE_BY_STATUS[status] ?? "Http.InternalServerError",
  };
}
