/**
 * The pipeline every call goes through, on every protocol and on the legacy
 * paths alike: error mapping → app → authentication → required fields.
 */
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import type { App } from "../app";
import { authenticate } from "../domain/auth";
import { DomainError, invalidArgument } from "../domain/errors";
import { describeError } from "../log";
import { isDatabaseUnavailable } from "../storage/database";
import { appKey, callerKey } from "./context";
import { domainToConnectError, INTERNAL_MESSAGE } from "./error-table";
import { findMissingRequiredField } from "./required-fields";

/** Services callable without credentials. */
const PUBLIC_SERVICES: ReadonlySet<string> = new Set(["grpc.health.v1.Health"]);

/** Maps domain errors through the error table; hides everything unexpected. */
export function createErrorInterceptor(app: App): Interceptor {
  return (next) => async (req) => {
    try {
      return await next(req);
    } catch (error) {
      throw toConnectError(app, error, req.method.name);
    }
  };
}

export function toConnectError(app: App, error: unknown, rpc: string): ConnectError {
  if (error instanceof DomainError) {
    return domainToConnectError(error);
  }
  if (
    error instanceof ConnectError &&
    error.code !== Code.Internal &&
    error.code !== Code.Unknown
  ) {
    return error;
  }
  if (isDatabaseUnavailable(error)) {
    app.log.error("database unavailable", { rpc, ...describeError(error) });
    return new ConnectError("the database is unavailable", Code.Unavailable);
  }
  app.log.error("unexpected error", { rpc, ...describeError(error) });
  return new ConnectError(INTERNAL_MESSAGE, Code.Internal);
}

/** Hands the app to the handlers. */
export function createAppInterceptor(app: App): Interceptor {
  return (next) => (req) => {
    req.contextValues.set(appKey, app);
    return next(req);
  };
}

/** ServiceAuth on every call but the public services (SPEC §5). */
export function createAuthInterceptor(app: App): Interceptor {
  return (next) => async (req) => {
    if (!PUBLIC_SERVICES.has(req.service.typeName)) {
      const caller = await authenticate(req.header.get("authorization"), app.credentials, app.now);
      req.contextValues.set(callerKey, caller);
    }
    return next(req);
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
