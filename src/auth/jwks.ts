/**
 * The issuer's keys (docs/api.md §5.1): a JWKS from a file (read and checked at
 * start-up) or fetched from a URL. jose's own createRemoteJWKSet is not used:
 * it keeps nothing usable when a refresh fails past its cache age and it has
 * no back-off after a failed fetch. Here:
 * - one fetch at a time (concurrent callers share it), through the one
 *   outbound client (src/outbound.ts: node:http, not fetch, whose undici
 *   can crash the process on a peer that closes an unread body), 3 s for the
 *   whole fetch, at most 64 KiB and 100 keys, no redirect;
 * - the keys are used for 10 minutes, then refetched; if that refetch fails
 *   the keys already held are kept (a rotation still needs the issuer);
 * - an unknown `kid` (or a failed fetch) allows the next fetch only after the
 *   cooldown, so random kids cannot hammer the issuer;
 * - no keys at all and the issuer unreachable: `JwksUnavailable` (→ 500 /
 *   unavailable, never a 401), logged once per failed fetch, so at most once
 *   per cooldown.
 */
import {
  createLocalJWKSet,
  errors,
  type FlattenedJWSInput,
  type JSONWebKeySet,
  type JWSHeaderParameters,
} from "jose";
import type { Logger } from "../log";
import { fetchLimited } from "../outbound";

export const JWKS_TIMEOUT_MS = 3_000;
export const JWKS_MAX_BYTES = 64 * 1024;
export const JWKS_MAX_KEYS = 100;
export const JWKS_MAX_AGE_MS = 10 * 60_000;

type KeyFunction = ReturnType<typeof createLocalJWKSet>;

/** The issuer's keys cannot be had: the call is an outage, not the caller's fault. */
export class JwksUnavailable extends Error {
  override readonly name = "JwksUnavailable";
}

/** Parses and checks a JWKS document (both sources); throws a message naming the problem. */
export function parseJwks(text: string): JSONWebKeySet {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new Error("is not JSON");
  }
  const keys = (doc as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys)) throw new Error('has no "keys" array');
  if (keys.length > JWKS_MAX_KEYS) throw new Error(`has more than ${JWKS_MAX_KEYS} keys`);
  for (const key of keys) {
    if (
      typeof key !== "object" ||
      key === null ||
      typeof (key as { kty?: unknown }).kty !== "string"
    ) {
      throw new Error('has a key without "kty"');
    }
    if ((key as { kty: string }).kty === "oct") throw new Error("has a symmetric (oct) key");
  }
  createLocalJWKSet(doc as JSONWebKeySet);
  return doc as JSONWebKeySet;
}

export type KeySource = (
  header: JWSHeaderParameters,
  token: FlattenedJWSInput,
) => ReturnType<KeyFunction>;

export function fileKeySource(jwks: JSONWebKeySet): KeySource {
  return createLocalJWKSet(jwks);
}

export interface RemoteKeySourceOptions {
  readonly url: string;
  readonly cooldownMs: number;
  readonly log: Logger;
  /** Monotonic milliseconds; the cache's clock, not the token's. */
  readonly clock?: () => number;
}

export function remoteKeySource(options: RemoteKeySourceOptions): KeySource {
  const clock = options.clock ?? (() => performance.now());
  let keys: KeyFunction | undefined;
  let fetchedAt = Number.NEGATIVE_INFINITY;
  let lastAttemptAt = Number.NEGATIVE_INFINITY;
  let inflight: Promise<void> | undefined;

  const fetchOnce = async (): Promise<void> => {
    lastAttemptAt = clock();
    try {
      const res = await fetchLimited(options.url, {
        timeoutMs: JWKS_TIMEOUT_MS,
        maxBytes: JWKS_MAX_BYTES,
        headers: { accept: "application/json" },
      });
      if (res.status !== 200) throw new Error(`answered HTTP ${res.status}`);
      keys = createLocalJWKSet(parseJwks(res.body.toString("utf8")));
      fetchedAt = clock();
    } catch (error) {
      options.log.error("bearer: JWKS fetch failed", {
        category: "jwks_unavailable",
        jwksUrl: options.url,
        errorMessage: error instanceof Error ? error.message : String(error),
        cooldownMs: options.cooldownMs,
      });
    }
  };
  const refresh = (): Promise<void> => {
    inflight ??= fetchOnce().finally(() => {
      inflight = undefined;
    });
    return inflight;
  };
  const mayFetch = () => clock() - lastAttemptAt >= options.cooldownMs;

  return async (header, token) => {
    if (inflight) await inflight;
    if ((keys === undefined || clock() - fetchedAt >= JWKS_MAX_AGE_MS) && mayFetch()) {
      await refresh();
    }
    if (keys === undefined) throw new JwksUnavailable("the issuer's keys cannot be fetched");
    try {
      return await keys(header, token);
    } catch (error) {
      if (!(error instanceof errors.JWKSNoMatchingKey) || !mayFetch()) throw error;
    }
    // An unknown kid: perhaps a rotation; one refetch per cooldown.
    await refresh();
    return keys(header, token);
  };
}
