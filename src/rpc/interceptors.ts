/**
 * The pipeline every call goes through, on every protocol and on the legacy
 * paths alike: error mapping → deps → deadline → authentication → required fields.
 */
import {
  Code,
  ConnectError,
  type Interceptor,
  type StreamRequest,
  type UnaryRequest,
} from "@connectrpc/connect";
import { callContextOf } from "../call/messages";
import { isInputError } from "../call/unary";
import type { Deps } from "../deps";
import {
  checkCredentials,
  hashSecret,
  parseServiceAuth,
  type ServiceAuthSpellings,
  serviceAuthSpellings,
} from "../domain/auth";
import { bearerChallenge, isBearer } from "../domain/bearer";
import { DomainError, ErrorKind, invalidArgument, unauthenticated } from "../domain/errors";
import type { FailureBudget } from "../domain/failure-budget";
import { describeError, type Logger } from "../log";
import { domainToConnectError, INTERNAL_MESSAGE } from "../wire/errors";
import {
  authorizationLinesKey,
  callerKey,
  clientAddressKey,
  depsKey,
  requestIdKey,
} from "./context";
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
    ((error.code !== Code.Internal && error.code !== Code.Unknown) || isInputError(error))
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
 * a failed Bearer token never falls back. Wrong credentials spend the failure
 * budget of the client's address and of the API key they name; a full budget
 * refuses the call (429) before any key is looked up (docs/security.md).
 */
export function createAuthInterceptor(
  deps: Deps,
  publicServices: ReadonlySet<string>,
): Interceptor {
  const spellings = serviceAuthSpellings(deps.serviceAuthAliases, deps.bearer !== undefined);
  const budget = deps.authFailures;
  const bursts = budget ? watchBursts(budget, deps.log) : undefined;
  return (next) => async (req) => {
    if (!publicServices.has(req.service.typeName)) {
      const address = req.contextValues.get(clientAddressKey);
      let apiKey: string | undefined;
      try {
        budget?.check(address);
        req.contextValues.set(
          callerKey,
          await authenticateCall(req, deps, spellings, (key) => {
            apiKey = fingerprint(key);
            budget?.check(address, apiKey);
          }),
        );
      } catch (error) {
        if (error instanceof DomainError && error.kind === ErrorKind.Unauthenticated && budget) {
          budget.fail(address, apiKey);
          bursts?.();
        }
        throw error;
      }
    }
    // Awaited: an async function that returns a promise resolves through two more jobs.
    return await next(req);
  };
}

/** The caller the request's Authorization header proves; `named` hears the API key before it is looked up. */
async function authenticateCall(
  req: UnaryRequest | StreamRequest,
  deps: Deps,
  spellings: ServiceAuthSpellings,
  named: (apiKey: string) => void,
) {
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
  if (deps.bearer && isBearer(header)) {
    return await deps.bearer.authenticate(header, deps.now, req.contextValues.get(requestIdKey));
  }
  const credentials = parseServiceAuth(header, spellings);
  named(credentials.apiKey);
  return await checkCredentials(credentials, deps.credentials, deps.now, spellings);
}

/** An API key as the budget and its log lines name it: the start of its hash, never the key. */
const fingerprint = (apiKey: string) => hashSecret(apiKey).slice(0, 12);

/** A burst is over once its bucket takes calls again and no call was refused for this long. */
const BURST_QUIET_MS = 5_000;

/**
 * Logs each burst of the budget once, when it ends, with its counts: a timer
 * runs only while a burst is open. Returns what to call after a failure.
 */
function watchBursts(budget: FailureBudget, log: Logger): () => void {
  let scheduled = false;
  const sweep = () => {
    scheduled = false;
    for (const burst of budget.sweep(BURST_QUIET_MS)) {
      log.warn("authentication failures over budget", {
        [burst.kind === "address" ? "client" : "apiKeyFingerprint"]: burst.who,
        failures: burst.failures,
        refused: burst.refused,
        durationMs: burst.durationMs,
      });
    }
    if (budget.bursting) schedule();
  };
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    setTimeout(sweep, BURST_QUIET_MS).unref();
  };
  return () => {
    if (budget.bursting) schedule();
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
