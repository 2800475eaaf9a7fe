/**
 * The storage boundary: driver errors that mean "the database did not
 * answer" become the domain's `storageUnavailable`, so nothing above
 * `storage/` needs to know the driver's error classes.
 */
import {
  MongoClientClosedError,
  MongoNetworkError,
  MongoNotConnectedError,
  MongoOperationTimeoutError,
  MongoServerClosedError,
  MongoServerError,
  MongoServerSelectionError,
  MongoTopologyClosedError,
} from "mongodb";
import { storageUnavailable } from "../domain/errors";

/**
 * Server error codes of a failover, a shutdown or an interrupted operation:
 * the server was there but could not serve (MongoDB's error_codes.yml).
 */
const UNAVAILABLE_SERVER_CODES: ReadonlySet<number> = new Set([
  6, // HostUnreachable
  7, // HostNotFound
  50, // MaxTimeMSExpired
  89, // NetworkTimeout
  91, // ShutdownInProgress
  189, // PrimarySteppedDown
  262, // ExceededTimeLimit
  9001, // SocketException
  10107, // NotWritablePrimary
  11600, // InterruptedAtShutdown
  11602, // InterruptedDueToReplStateChange
  13435, // NotPrimaryNoSecondaryOk
  13436, // NotPrimaryOrSecondary
]);

/** Plain socket errors that can escape the driver when a connection is reset. */
const SOCKET_ERROR_CODES: ReadonlySet<string> = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
]);

/** Driver errors known by name only (not exported): pool checkout timed out, pool cleared or closed. */
const UNAVAILABLE_NAMES: ReadonlySet<string> = new Set([
  "MongoWaitQueueTimeoutError",
  "MongoPoolClearedError",
  "MongoPoolClosedError",
]);

/** True for errors that mean the database cannot be reached or cannot serve right now. */
function isUnavailable(error: unknown): boolean {
  if (
    error instanceof MongoNetworkError ||
    error instanceof MongoServerSelectionError ||
    error instanceof MongoNotConnectedError ||
    error instanceof MongoTopologyClosedError ||
    error instanceof MongoClientClosedError ||
    error instanceof MongoServerClosedError ||
    error instanceof MongoOperationTimeoutError
  ) {
    return true;
  }
  if (error instanceof Error && UNAVAILABLE_NAMES.has(error.name)) {
    return true;
  }
  if (error instanceof MongoServerError) {
    return typeof error.code === "number" && UNAVAILABLE_SERVER_CODES.has(error.code);
  }
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && SOCKET_ERROR_CODES.has(code);
}

/**
 * The same store, with every method's outage errors turned into
 * `storageUnavailable`; `before` runs before each method starts (and may
 * throw: then nothing is sent); `answered` after each method that succeeded
 * (the database answered: readiness needs no ping then).
 */
export function guardStore<T extends object>(
  store: T,
  { before, answered }: { before?: () => void; answered?: () => void } = {},
): T {
  const guarded: Record<string, unknown> = {};
  for (const [name, member] of Object.entries(store)) {
    guarded[name] =
      typeof member === "function"
        ? async (...args: unknown[]) => {
            before?.();
            try {
              const result = await (member as (...a: unknown[]) => Promise<unknown>).apply(
                store,
                args,
              );
              answered?.();
              return result;
            } catch (error) {
              throw isUnavailable(error) ? storageUnavailable(error) : error;
            }
          }
        : member;
  }
  return guarded as T;
}
