/**
 * What Bearer tokens are configured with (docs/api.md §5.1), as src/config.ts reads
 * it from the environment: the verifier's settings, and the limits config
 * checks them against.
 */
import type { JSONWebKeySet } from "jose";

export interface BearerConfig {
  readonly issuer: string;
  readonly audience: string;
  /** Exactly one of jwksUrl and jwks (the parsed BEARER_JWKS_FILE). */
  readonly jwksUrl: string | undefined;
  readonly jwks: JSONWebKeySet | undefined;
  readonly userClaim: string;
  readonly algorithms: readonly string[];
  readonly clockSkewS: number;
  readonly requiredScope: string | undefined;
  readonly allowedClientIds: readonly string[] | undefined;
  readonly jwksCooldownMs: number;
  /** The longest token lifetime accepted, `exp` − `iat`, in seconds. */
  readonly maxLifetimeS: number;
}

/** Asymmetric JWS algorithms; anything else (HS*, none) is refused at start-up. */
export const BEARER_ASYMMETRIC_ALGORITHMS = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
  "Ed25519",
] as const;
export const BEARER_MAX_SKEW_S = 120;
/** BEARER_MAX_LIFETIME_S: its default (a day, the ServiceAuth token's) and its bounds (a minute, a week). */
export const BEARER_LIFETIME_S = { default: 86_400, min: 60, max: 604_800 } as const;
