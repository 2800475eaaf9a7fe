/**
 * Bearer tokens (docs/api.md §5.1): the rules that need no key and no library: which
 * scheme a header uses, the shape of a Bearer header and of a compact JWS, the
 * challenges (WWW-Authenticate), and how verified claims become our caller.
 * Signature, `iss`, `aud`, `exp`/`nbf` and the algorithm are checked by the
 * verifier (src/auth/bearer-verifier.ts, jose) before `callerFromClaims`.
 */
import { DomainError, ErrorKind } from "./errors";
import type { Caller } from "./model";
import { isIdentifier } from "./validate";

export const REALM = "docflow-api";
/** A token longer than this is refused before any key lookup. */
export const MAX_TOKEN_BYTES = 8 * 1024;
/** What a Bearer header may hold beside its token: the scheme and blanks around. */
const MAX_BEARER_FRAME = 256;

/** What the claim rules need from the configuration. */
export interface BearerClaimRules {
  /** The claim whose value is our user id (`sub` by default). */
  readonly userClaim: string;
  readonly requiredScope?: string;
  /** Checked against `client_id` or `azp`; undefined: any client. */
  readonly allowedClientIds?: readonly string[];
}

/** Why a token was refused; logged (never the token). */
export type BearerFailure =
  | "malformed_header"
  | "token_syntax"
  | "token_too_large"
  | "signature"
  | "algorithm"
  | "unknown_kid"
  | "issuer"
  | "audience"
  | "expired"
  | "no_expiry"
  | "issued_in_future"
  | "lifetime_too_long"
  | "not_yet_valid"
  | "claims"
  | "user_claim"
  | "client_not_allowed";

const BEARER = /^\s*bearer(?:\s|$)/i;
const SERVICE_AUTH = /^\s*serviceauth(?:\s|$)/i;
/** `Bearer` SP token68 (RFC 6750 §2.1), nothing before or after. */
const BEARER_HEADER = /^\s*bearer +([A-Za-z0-9\-._~+/]+=*)\s*$/i;
/** A compact JWS: three base64url segments, a non-empty signature. */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

export function isBearer(header: string): boolean {
  return BEARER.test(header);
}

export function isServiceAuth(header: string): boolean {
  return SERVICE_AUTH.test(header);
}

export function bearerChallenge(error?: "invalid_token" | "invalid_request"): string {
  return error ? `Bearer realm="${REALM}", error="${error}"` : `Bearer realm="${REALM}"`;
}

/** A challenge that names a scheme and our realm, nothing else. */
const realmChallenge = (scheme: string) => `${scheme} realm="${REALM}"`;

export const SERVICE_AUTH_CHALLENGE = realmChallenge("ServiceAuth");

/**
 * The challenge of a refused ServiceAuth header, whichever of its spellings
 * it used: ServiceAuth, then the scheme of each alias (SERVICE_AUTH_ALIASES).
 */
export function serviceAuthChallenge(aliasSchemes: readonly string[] = []): string {
  return [SERVICE_AUTH_CHALLENGE, ...aliasSchemes.map(realmChallenge)].join(", ");
}

/** The challenge of a 401 with no credentials at all: every scheme the service takes. */
export function noCredentialsChallenge(
  bearerOn: boolean,
  aliasSchemes: readonly string[] = [],
): string {
  const serviceAuth = serviceAuthChallenge(aliasSchemes);
  return bearerOn ? `${serviceAuth}, ${bearerChallenge()}` : serviceAuth;
}

/** A 401 carrying its challenge. The message is safe to show: it never includes token text. */
export function bearerUnauthenticated(
  message: string,
  error: "invalid_token" | "invalid_request",
): DomainError {
  return new DomainError(ErrorKind.Unauthenticated, "Http.Unauthorized", message, {
    challenge: bearerChallenge(error),
  });
}

/** 403 for a token without the required scope, raised at the box-403 step. */
export function insufficientScope(scope: string): DomainError {
  return new DomainError(
    ErrorKind.PermissionDenied,
    "Http.Forbidden",
    "the access token lacks the required scope",
    { challenge: `Bearer realm="${REALM}", error="insufficient_scope", scope="${scope}"` },
  );
}

/** A token failure: the category for the log, and the 401 for the caller. */
export class BearerRefused extends Error {
  override readonly name = "BearerRefused";
  constructor(
    readonly failure: BearerFailure,
    readonly error: DomainError,
  ) {
    super(error.message);
  }
}

function refuse(failure: BearerFailure, message: string): BearerRefused {
  return new BearerRefused(
    failure,
    bearerUnauthenticated(
      message,
      failure === "malformed_header" ? "invalid_request" : "invalid_token",
    ),
  );
}

/**
 * The token of a Bearer header, checked for size and syntax only: a token
 * that fails here never reaches a key lookup.
 */
export function parseBearer(header: string): string {
  // A header that cannot hold a token within the limit is refused unread.
  if (header.length > MAX_TOKEN_BYTES + MAX_BEARER_FRAME) {
    throw refuse("token_too_large", "the access token is too large");
  }
  const match = BEARER_HEADER.exec(header);
  if (!match?.[1]) {
    throw refuse("malformed_header", "the Authorization header is not `Bearer <token>`");
  }
  const token = match[1];
  if (Buffer.byteLength(token) > MAX_TOKEN_BYTES) {
    throw refuse("token_too_large", "the access token is too large");
  }
  if (!COMPACT_JWS.test(token)) {
    throw refuse("token_syntax", "the access token is not a signed JWT");
  }
  return token;
}

export function refused(failure: BearerFailure, message: string): BearerRefused {
  return refuse(failure, message);
}

/** `scope` (space-separated, RFC 8693) or `scp` (a list, or space-separated) holds `scope`. */
function hasScope(claims: Readonly<Record<string, unknown>>, scope: string): boolean {
  const { scope: spaced, scp } = claims;
  // Stryker disable next-line ArrayDeclaration: a word invented for a claim that is not a string matters only if it is the required scope itself
  const words = (value: unknown): unknown[] => (typeof value === "string" ? value.split(" ") : []);
  return words(spaced).includes(scope) || (Array.isArray(scp) ? scp : words(scp)).includes(scope);
}

/**
 * The token's lifetime (docs/api.md §5.1), after the signature and `exp` are
 * checked: an `exp` is required (a token without one would never expire);
 * an `iat` later than now beyond the skew is refused; and a token may live
 * at most `maxLifetimeS` from its `iat` (from now when it has none), so that
 * a token minted for the year 2200 is no key for life.
 */
export function checkLifetime(
  claims: Readonly<Record<string, unknown>>,
  nowS: number,
  skewS: number,
  maxLifetimeS: number,
): void {
  const { exp, iat } = claims;
  if (typeof exp !== "number") throw refuse("no_expiry", "the access token has no expiry");
  if (typeof iat === "number" && iat > nowS + skewS) {
    throw refuse("issued_in_future", "the access token was issued in the future");
  }
  const from = typeof iat === "number" ? iat : nowS;
  if (exp - from > maxLifetimeS + skewS) {
    throw refuse("lifetime_too_long", "the access token lives longer than this service accepts");
  }
}

/** Verified claims → our caller: the user claim, the client, the scope. */
export function callerFromClaims(
  claims: Readonly<Record<string, unknown>>,
  rules: BearerClaimRules,
): Caller {
  const user = claims[rules.userClaim];
  // An identifier as every other one: not blank, at most 256 code points, no control character.
  if (typeof user !== "string" || !isIdentifier(user)) {
    throw refuse("user_claim", "the access token does not name a user");
  }
  const client = typeof claims.client_id === "string" ? claims.client_id : claims.azp;
  if (rules.allowedClientIds && !rules.allowedClientIds.some((id) => id === client)) {
    throw refuse("client_not_allowed", "the access token's client is not allowed");
  }
  const caller = { userId: user, client: typeof client === "string" ? client : "bearer" };
  const required = rules.requiredScope;
  if (required === undefined || hasScope(claims, required)) return caller;
  return { ...caller, missingScope: required };
}
