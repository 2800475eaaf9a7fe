/**
 * The pipeline every call goes through, on every protocol and on the legacy
 * paths alike: error mapping → deps → deadline → authentication → required fields.
 */
import { Code, ConnectError, type Interceptor, type UnaryRequest } from "@connectrpc/connect";
import { callContextOf } from "../call/messages";
import type { Deps } from "../deps";
import { authenticate, serviceAuthSpellings } from "../domain/auth";
import { bearerChallenge, isBearer } from "../domain/bearer";
import { DomainError, ErrorKind, invalidArgument, unauthenticated } from "../domain/errors";
import { describeError, type Logger } from "../log";
import { domainToConnectError, INTERNAL_MESSAGE } from "../wire/errors";
import { authorizationLinesKey, callerKey, depsKey, requestIdKey } from "./context";
import { findMissingRequiredField } from "./required-fields";

/** Maps domain errors through the error table; hides everything unexpected, logging its cause. */
export function createErrorInterceptor(deps: Deps): Interceptor {
  return (next) => async (req) => {
    try {
      return await next(req);
    } catch (error) {
      throw toConnectError(deps, error, req.method.name, req.contextValues.get(requestIdKey));
    }
  };
}

function toConnectError(
  deps: Deps,
  error: unknown,
  rpc: string,
  requestId: string | undefined,
): ConnectError {
  if (error instanceof DomainError) {
    if (error.kind === ErrorKind.Unavailable && error.cause !== undefined) {
      deps.log.error("database unavailable", { requestId, rpc, ...describeError(error.cause) });
    }
    return domainToConnectError(error);
  }
  if (
    error instanceof ConnectError &&
    error.code !== Code.Internal &&
    error.code !== Code.Unknown
  ) {
    return error;
  }
  deps.log.error("unexpected error", { requestId, rpc, ...describeError(error) });
  return new ConnectError(INTERNAL_MESSAGE, Code.Internal, undefined, undefined, error);
}

/** Hands the dependencies to the handlers. */
export function createDepsInterceptor(deps: Deps): Interceptor {
  return (next) => (req) => {
    req.contextValues.set(depsKey, deps);
    return next(req);
  };
}

/**
 * Every unary call ends by its deadline: `defaultMs`, or sooner when the
 * client sent one (its context aborts the call then) or went away. The
 * answer is not held back by work still waiting on the database; that work
 * ends by the driver's own timeout. A call of ours races on its context's one
 * timer (`race`); a request of another handler (connect-es's own, in tests)
 * on a timer and a listener of its signal.
 */
export function createDeadlineInterceptor(defaultMs: number, log: Logger): Interceptor {
  const late = (req: UnaryRequest) => {
    // Our own deadline, not the client's: the service was too slow, a server fault.
    log.error("call exceeded its deadline", {
      requestId: req.contextValues.get(requestIdKey),
      rpc: req.method.name,
      deadlineMs: defaultMs,
    });
    return new ConnectError("the call did not finish within its deadline", Code.DeadlineExceeded);
  };
  const aborted = (reason: unknown) => ConnectError.from(reason, Code.Canceled);
  return (next) => (req) => {
    if (req.stream) return next(req);
    const context = callContextOf(req);
    if (context) {
      return context.race(
        () => next(req),
        defaultMs,
        () => late(req),
        aborted,
      );
    }
    const { signal } = req;
    return new Promise((resolve, reject) => {
      const finish = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
      };
      const onAbort = () => {
        finish();
        reject(aborted(signal.reason));
      };
      const timer = setTimeout(() => {
        finish();
        reject(late(req));
      }, defaultMs);
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort);
      next(req).then(
        (res) => {
          finish();
          resolve(res);
        },
        (error: unknown) => {
          finish();
          reject(error);
        },
      );
    });
  };
}

/**
 * ServiceAuth (in its own spelling or an alias's) or a Bearer token on every
 * call but the public services (docs/api.md §5, §5.1): one scheme per request,
 * a failed Bearer token never falls back.
 */
export function createAuthInterceptor(
  deps: Deps,
  publicServices: ReadonlySet<string>,
): Interceptor {
  const spellings = serviceAuthSpellings(deps.serviceAuthAliases, deps.bearer !== undefined);
  return (next) => async (req) => {
    if (!publicServices.has(req.service.typeName)) {
      // The front read the Authorization lines already; in memory (no front) the headers tell.
      const lines = req.contextValues.get(authorizationLinesKey);
      const header = lines ? (lines.first ?? null) : req.header.get("authorization");
      if (lines !== undefined && lines.count > 1) {
        throw unauthenticated(
          "send exactly one Authorization header",
          lines.anyBearer ? bearerChallenge("invalid_request") : spellings.challenge,
        );
      }
      if (header === null || header.trim() === "") {
        throw unauthenticated("the Authorization header is missing", spellings.anyChallenge);
      }
      const caller =
        deps.bearer && isBearer(header)
          ? await deps.bearer.authenticate(header, deps.now, req.contextValues.get(requestIdKey))
          : await authenticate(header, deps.credentials, deps.now, spellings);
      req.contextValues.set(callerKey, caller);
    }
    // Awaited: an async function that returns a promise resolves through two more jobs.
    return await next(req);
  };
}

/** Rejects a request that lacks a proto2 required field (400), after authentication. */
export const requiredFieldsInterceptor: Interceptor = (next) => (req) => {
  if (!req.stream) {
    const missing = findMissingRequiredField(req.method.input, req.message);
    if (missing) {
      throw invalidArgument(`${missing} is required`);
    }
  }
  return next(req);
};
