/**
 * Bearer token verification with jose (docs/api.md §5.1): signature against the
 * issuer's keys, the algorithm allow-list, `iss`, `aud`, `exp`/`nbf` with the
 * skew, at the app's clock. The claim rules (user, client, scope) are the
 * domain's (src/domain/bearer.ts).
 */
import { decodeProtectedHeader, errors, jwtVerify } from "jose";
import {
  type BearerClaimRules,
  type BearerFailure,
  BearerRefused,
  callerFromClaims,
  checkLifetime,
  parseBearer,
  refused,
} from "../domain/bearer";
import { DomainError, ErrorKind } from "../domain/errors";
import type { Caller } from "../domain/model";
import type { Clock } from "../domain/ports";
import type { Logger } from "../log";
import type { BearerConfig } from "./bearer-config";
import { fileKeySource, JwksUnavailable, type KeySource, remoteKeySource } from "./jwks";

export interface BearerSettings extends BearerClaimRules {
  readonly issuer: string;
  readonly audience: string;
  readonly algorithms: readonly string[];
  readonly clockSkewS: number;
  /** The longest lifetime accepted, `exp` − `iat` (BEARER_MAX_LIFETIME_S). */
  readonly maxLifetimeS: number;
}

export interface BearerAuthenticator {
  /** Verifies `Bearer <token>`; throws a DomainError (401 with its challenge, or unavailable). */
  authenticate(header: string, now: Clock, requestId: string | undefined): Promise<Caller>;
}

/** Short, for the log: a kid or iss is the issuer's text, never the token's bytes. */
const shown = (value: unknown) => (typeof value === "string" ? value.slice(0, 128) : undefined);

export function createBearerAuthenticator(
  settings: BearerSettings,
  keys: KeySource,
  log: Logger,
): BearerAuthenticator {
  return {
    async authenticate(header, now, requestId) {
      let kid: string | undefined;
      try {
        const token = parseBearer(header);
        try {
          kid = shown(decodeProtectedHeader(token).kid);
        } catch {
          throw refused("token_syntax", "the access token is not a signed JWT");
        }
        let payload: Record<string, unknown>;
        const at = now();
        try {
          ({ payload } = await jwtVerify(token, keys, {
            issuer: settings.issuer,
            audience: settings.audience,
            algorithms: [...settings.algorithms],
            clockTolerance: settings.clockSkewS,
            currentDate: at,
            requiredClaims: ["exp"],
          }));
        } catch (error) {
          if (error instanceof JwksUnavailable) throw error;
          const [failure, message] = classify(error);
          throw refused(failure, message);
        }
        checkLifetime(
          payload,
          Math.floor(at.getTime() / 1000),
          settings.clockSkewS,
          settings.maxLifetimeS,
        );
        const caller = callerFromClaims(payload, settings);
        log.info("bearer: token accepted", {
          requestId,
          kid,
          iss: shown(payload.iss),
          userId: caller.userId,
          ...(caller.missingScope ? { category: "insufficient_scope" } : {}),
        });
        return caller;
      } catch (error) {
        if (error instanceof BearerRefused) {
          log.info("bearer: token refused", { requestId, category: error.failure, kid });
          throw error.error;
        }
        if (error instanceof JwksUnavailable) {
          throw new DomainError(
            ErrorKind.Unavailable,
            "Http.InternalServerError",
            "the token issuer's keys are unavailable",
          );
        }
        throw error;
      }
    },
  };
}

function classify(error: unknown): [BearerFailure, string] {
  if (error instanceof errors.JWTExpired) return ["expired", "the access token has expired"];
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === "exp" && error.reason === "missing") {
      return ["no_expiry", "the access token has no expiry"];
    }
    switch (error.claim) {
      case "iss":
        return ["issuer", "the access token's issuer is not accepted"];
      case "aud":
        return ["audience", "the access token is not meant for this service"];
      case "nbf":
        return ["not_yet_valid", "the access token is not valid yet"];
      default:
        return ["claims", "the access token's claims are invalid"];
    }
  }
  if (error instanceof errors.JOSEAlgNotAllowed || error instanceof errors.JOSENotSupported) {
    return ["algorithm", "the access token's algorithm is not accepted"];
  }
  if (
    error instanceof errors.JWKSNoMatchingKey ||
    error instanceof errors.JWKSMultipleMatchingKeys
  ) {
    return ["unknown_kid", "the access token's key is not known"];
  }
  if (error instanceof errors.JWTInvalid || error instanceof errors.JWSInvalid) {
    return ["token_syntax", "the access token is not a valid signed JWT"];
  }
  return ["signature", "the access token's signature is invalid"];
}

/** The authenticator of a checked configuration (config.ts). */
export function bearerFromConfig(
  config: BearerConfig,
  log: Logger,
  cacheClock?: () => number,
): BearerAuthenticator {
  const keys = config.jwks
    ? fileKeySource(config.jwks)
    : remoteKeySource({
        url: config.jwksUrl ?? "",
        cooldownMs: config.jwksCooldownMs,
        log,
        clock: cacheClock,
      });
  return createBearerAuthenticator(config, keys, log);
}
