/** Typed context keys through which the front and the interceptors hand values to handlers. */
import { createContextKey, type HandlerContext } from "@connectrpc/connect";
import type { App } from "../app";
import type { Caller } from "../domain/model";

export const appKey = createContextKey<App | undefined>(undefined, { description: "app" });
export const callerKey = createContextKey<Caller | undefined>(undefined, {
  description: "caller",
});

/** The request id of the front's access log line, for error log lines. */
export const requestIdKey = createContextKey<string | undefined>(undefined, {
  description: "request id",
});

/** Aborted when the server begins to shut down: long-lived streams end on it. */
export const shutdownKey = createContextKey<AbortSignal>(new AbortController().signal, {
  description: "shutdown",
});

export function appOf(ctx: HandlerContext): App {
  const app = ctx.values.get(appKey);
  if (!app) {
    throw new Error("the app interceptor did not run");
  }
  return app;
}

export function callerOf(ctx: HandlerContext): Caller {
  const caller = ctx.values.get(callerKey);
  if (!caller) {
    throw new Error("the auth interceptor did not run");
  }
  return caller;
}
