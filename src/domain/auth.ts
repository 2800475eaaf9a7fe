/**
 * ServiceAuth authentication (docs/api.md §5): the one place that reads the
 * Authorization header and turns it into a caller.
 */
import { createHash } from "node:crypto";
import { SERVICE_AUTH_CHALLENGE } from "./bearer";
import { unauthenticated } from "./errors";
import type { Caller } from "./model";
import type { Clock, CredentialStore } from "./ports";

export interface ServiceAuthCredentials {
  readonly apiKey: string;
  readonly token: string;
}

/** Keys and tokens are stored only as hashes; this is the one hash function. */
export function hashSecret(secret: string): string {
  return createHash("sha256").update(secret).digest("hex"); // a string is hashed as UTF-8
}

// Stryker disable next-line Regex: PARAM skips leading spaces itself, so \s and \s+ read the same
const SCHEME = /^\s*serviceauth\s+/i;
// name = value | name = "quoted value", then a comma (spaces optional) or the end.
const PARAM = /\s*([A-Za-z_]+)\s*=\s*(?:"([^"]*)"|([^,]*?))\s*(?:,|$)/y;

/** Parses `ServiceAuth svcauth_api_client_id=<key>, svcauth_token=<token>`. */
export function parseServiceAuth(header: string | null | undefined): ServiceAuthCredentials {
  if (header === null || header === undefined || header.trim() === "") {
    throw unauthenticated("the Authorization header is missing", SERVICE_AUTH_CHALLENGE);
  }
  const scheme = SCHEME.exec(header);
  if (!scheme) {
    throw unauthenticated(
      "the Authorization header must use the ServiceAuth scheme",
      SERVICE_AUTH_CHALLENGE,
    );
  }
  const params = new Map<string, string>();
  const rest = header.slice(scheme[0].length);
  PARAM.lastIndex = 0;
  while (PARAM.lastIndex < rest.length) {
    const match = PARAM.exec(rest);
    // A match always moves on: a name has at least one character.
    if (!match) {
      throw unauthenticated("the Authorization header is malformed", SERVICE_AUTH_CHALLENGE);
    }
    const name = (match[1] as string).toLowerCase();
    if (params.has(name)) {
      throw unauthenticated(`the Authorization header repeats ${name}`, SERVICE_AUTH_CHALLENGE);
    }
    // One of the two value groups always takes part in a match.
    params.set(name, (match[2] ?? match[3]) as string);
  }
  const apiKey = params.get("svcauth_api_client_id");
  const token = params.get("svcauth_token");
  if (!apiKey || !token) {
    throw unauthenticated(
      "the Authorization header needs svcauth_api_client_id and svcauth_token",
      SERVICE_AUTH_CHALLENGE,
    );
  }
  return { apiKey, token };
}

/** Checks the API key and the token; the caller is the token's user. */
export async function authenticate(
  header: string | null | undefined,
  credentials: CredentialStore,
  now: Clock,
): Promise<Caller> {
  const { apiKey, token } = parseServiceAuth(header);
  const [client, accessToken] = await Promise.all([
    credentials.findApiClient(hashSecret(apiKey)),
    credentials.findToken(hashSecret(token)),
  ]);
  if (!client?.enabled) {
    throw unauthenticated("the API client is unknown or disabled", SERVICE_AUTH_CHALLENGE);
  }
  if (!accessToken || accessToken.expiresAt.getTime() <= now().getTime()) {
    throw unauthenticated("the token is unknown or expired", SERVICE_AUTH_CHALLENGE);
  }
  return { userId: accessToken.userId, client: client.name };
}
