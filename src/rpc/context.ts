/** Typed context keys through which the front and the interceptors hand values to handlers. */
import {
  type ContextKey,
  type ContextValues,
  createContextKey,
  type HandlerContext,
} from "@connectrpc/connect";
import type { Deps } from "../deps";
import type { Caller } from "../domain/model";

export const depsKey = createContextKey<Deps | undefined>(undefined, { description: "deps" });
export const callerKey = createContextKey<Caller | undefined>(undefined, {
  description: "caller",
});

/**
 * The client's address (src/http/client-address.ts: the peer, or what a
 * trusted proxy says), for the failure budget of authentication;
 * undefined: no front (in memory).
 */
export const clientAddressKey = createContextKey<string | undefined>(undefined, {
  description: "client address",
});

/** The request id of the front's access log line, for error log lines. */
export const requestIdKey = createContextKey<string | undefined>(undefined, {
  description: "request id",
});

/**
 * The raw `Authorization` field lines of the request, counted by the front
 * (Node's merged `req.headers` keeps only the first): docs/api.md §5.1, one scheme
 * per request. undefined: no front (in memory), the header is taken as one line.
 */
export interface AuthorizationLines {
  readonly count: number;
  /** One of them uses the Bearer scheme. */
  readonly anyBearer: boolean;
  /** The first line's value, as `Headers.get` would give it (surrounding blanks removed). */
  readonly first: string | undefined;
}
export const authorizationLinesKey = createContextKey<AuthorizationLines | undefined>(undefined, {
  description: "authorization lines",
});

export function depsOf(ctx: HandlerContext): Deps {
  const deps = ctx.values.get(depsKey);
  if (!deps) {
    throw new Error("the deps interceptor did not run");
  }
  return deps;
}

export function callerOf(ctx: HandlerContext): Caller {
  const caller = ctx.values.get(callerKey);
  if (!caller) {
    throw new Error("the auth interceptor did not run");
  }
  return caller;
}

/**
 * A call's context values: connect-es's `ContextValues`, kept in a Map.
 * connect-es's own (`createContextValues`) is an object with its three
 * methods made anew and its keys, symbols, added as properties: every call's
 * object takes shapes of its own, so every get, set and `in` on it is a
 * megamorphic lookup.
 */
export class CallValues implements ContextValues {
  private readonly values = new Map<symbol, unknown>();

  get<T>(key: ContextKey<T>): T {
    const value = this.values.get(key.id);
    return value !== undefined || this.values.has(key.id) ? (value as T) : key.defaultValue;
  }

  set<T>(key: ContextKey<T>, value: T): this {
    this.values.set(key.id, value);
    return this;
  }

  delete(key: ContextKey<unknown>): this {
    this.values.delete(key.id);
    return this;
  }
}
