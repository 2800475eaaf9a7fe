/**
 * Typed domain errors. Domain code throws these; `wire/errors.ts` is the
 * one place that maps each kind to a Connect code and a legacy HTTP status.
 */
export const ErrorKind = {
  InvalidArgument: "InvalidArgument",
  Unauthenticated: "Unauthenticated",
  SubscriptionEnded: "SubscriptionEnded",
  PermissionDenied: "PermissionDenied",
  NotFound: "NotFound",
  Conflict: "Conflict",
  /** The request comes in a form (an encoding) the service does not take. */
  UnsupportedMediaType: "UnsupportedMediaType",
  /** The database did not answer (outage, stall, failover): nothing is known to have changed. */
  Unavailable: "Unavailable",
  /** The instance is over its capacity: the call was refused before any work (docs/api.md §4.1). */
  Overloaded: "Overloaded",
  /** The client holds more than its share of an instance others wait for (docs/api.md §4.1). */
  ClientOverShare: "ClientOverShare",
  /** Too many failed authentications from this address or with this API key (docs/api.md §5). */
  TooManyFailures: "TooManyFailures",
  /** The caller's precondition (If-Match) does not hold: the resource changed since it was read. */
  PreconditionFailed: "PreconditionFailed",
} as const;
export type ErrorKind = (typeof ErrorKind)[keyof typeof ErrorKind];

/** A rule of the service refused the call. The message is safe to show to the caller. */
export class DomainError extends Error {
  override readonly name = "DomainError";
  constructor(
    readonly kind: ErrorKind,
    /** Machine-readable code, sent as X-Service-ErrorCode (e.g. `Restore.AlreadyRestored`). */
    readonly errorCode: string,
    message: string,
    options?: {
      readonly cause?: unknown;
      /** WWW-Authenticate of a 401 (or a Bearer 403): a response header on every protocol. */
      readonly challenge?: string;
      /** A refusal that did nothing: the client may come back after this many seconds (Retry-After). */
      readonly retryAfterS?: number;
    },
  ) {
    super(message, options);
    this.challenge = options?.challenge;
    this.retryAfterS = options?.retryAfterS;
  }
  readonly challenge: string | undefined;
  readonly retryAfterS: number | undefined;
}

export const invalidArgument = (message: string, errorCode = "Http.BadRequest") =>
  new DomainError(ErrorKind.InvalidArgument, errorCode, message);
export const unauthenticated = (message: string, challenge?: string) =>
  new DomainError(ErrorKind.Unauthenticated, "Http.Unauthorized", message, { challenge });
export const subscriptionEnded = () =>
  new DomainError(
    ErrorKind.SubscriptionEnded,
    "Http.PaymentRequired",
    "the organization has no remaining API subscription",
  );
export const permissionDenied = (message: string, errorCode = "Http.Forbidden") =>
  new DomainError(ErrorKind.PermissionDenied, errorCode, message);
export const notFound = (message: string, errorCode: string) =>
  new DomainError(ErrorKind.NotFound, errorCode, message);
export const conflict = (message: string, errorCode: string) =>
  new DomainError(ErrorKind.Conflict, errorCode, message);
/** Raised by the group store when the box already has a group whose name compares equal. */
export const duplicateGroupName = (name: string) =>
  conflict(
    `the box already has a counteragent group named "${name}"`,
    "CounteragentGroup.DuplicateName",
  );
/** The resource is not as the caller's If-Match requires (docs/api.md §3.1): nothing changed. */
export const preconditionFailed = (message: string, errorCode: string) =>
  new DomainError(ErrorKind.PreconditionFailed, errorCode, message);
export const unsupportedMediaType = (message: string) =>
  new DomainError(ErrorKind.UnsupportedMediaType, "Http.UnsupportedMediaType", message);
/** Raised by the storage boundary; `cause` keeps the driver error for the log only. */
export const storageUnavailable = (cause: unknown) =>
  new DomainError(
    ErrorKind.Unavailable,
    "Http.InternalServerError",
    "the database is unavailable",
    {
      cause,
    },
  );
/** Admission's refusals (docs/api.md §4.1): nothing was done, the client may come back after `retryAfterS`. */
export const overloaded = (retryAfterS: number) =>
  new DomainError(
    ErrorKind.Overloaded,
    "Service.Overloaded",
    `the service is over its capacity; retry after ${retryAfterS} s`,
    { retryAfterS },
  );
export const clientOverShare = (retryAfterS: number) =>
  new DomainError(
    ErrorKind.ClientOverShare,
    "Service.ClientOverShare",
    `this client is over its share of the service; retry after ${retryAfterS} s`,
    { retryAfterS },
  );
