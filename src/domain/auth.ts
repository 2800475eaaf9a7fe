/**
 * ServiceAuth authentication (docs/api.md §5): the one place that reads the
 * Authorization header and turns it into a caller, in ServiceAuth's own
 * spelling or an SDK's (SERVICE_AUTH_ALIASES).
 */
import { createHash } from "node:crypto";
import { noCredentialsChallenge, serviceAuthChallenge } from "./bearer";
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

/**
 * Another spelling of the ServiceAuth header, as an existing SDK sends it
 * (SERVICE_AUTH_ALIASES): `DiadocAuth ddauth_api_client_id=<key>,ddauth_token=<token>`
 * is scheme `DiadocAuth`, prefix `ddauth`.
 */
export interface ServiceAuthAlias {
  readonly scheme: string;
  /** The parameters are `<prefix>_api_client_id` and `<prefix>_token`. */
  readonly prefix: string;
}

/** One spelling: its scheme as configured, and the names of its two parameters. */
interface Spelling {
  readonly scheme: string;
  readonly prefix: string;
  readonly apiKey: string;
  readonly token: string;
}

/**
 * The spellings of the header the service reads, and the words of its 401s;
 * made once from the configuration (`serviceAuthSpellings`).
 */
export interface ServiceAuthSpellings {
  /** By lower-case scheme. */
  readonly bySchemes: ReadonlyMap<string, Spelling>;
  /** The lower-case parameter names of every spelling, each with its spelling's lower-case prefix. */
  readonly parameters: ReadonlyMap<string, string>;
  /** The challenge of a refused header, in any spelling: ServiceAuth and every alias. */
  readonly challenge: string;
  /** The challenge of a header with no credentials, or in a scheme the service does not take: every scheme. */
  readonly anyChallenge: string;
  /** The refusal of a scheme the service does not take, naming those it does. */
  readonly wrongScheme: string;
}

const spelling = (scheme: string, prefix: string): Spelling => ({
  scheme,
  prefix: prefix.toLowerCase(),
  apiKey: `${prefix}_api_client_id`,
  token: `${prefix}_token`,
});

/**
 * ServiceAuth's own spelling and the aliases (config.ts has checked them:
 * schemes are HTTP tokens, none twice, neither ServiceAuth nor Bearer;
 * prefixes are letters). `bearerOn`: Bearer is named among the schemes taken.
 */
export function serviceAuthSpellings(
  aliases: readonly ServiceAuthAlias[] = [],
  bearerOn = false,
): ServiceAuthSpellings {
  const all = [
    spelling("ServiceAuth", "svcauth"),
    ...aliases.map((a) => spelling(a.scheme, a.prefix)),
  ];
  const bySchemes = new Map<string, Spelling>();
  for (const s of all) {
    const key = s.scheme.toLowerCase();
    // config.ts refuses these; a spelling must never hide ServiceAuth's own, or Bearer.
    if (bySchemes.has(key) || key === "bearer") throw new Error(`${s.scheme} cannot be an alias`);
    bySchemes.set(key, s);
  }
  const schemes = aliases.map((a) => a.scheme);
  const others = schemes.length > 0 ? ` (or ${schemes.join(" or ")})` : "";
  return {
    bySchemes,
    parameters: new Map(
      all.flatMap((s) => [
        [s.apiKey.toLowerCase(), s.prefix],
        [s.token.toLowerCase(), s.prefix],
      ]),
    ),
    challenge: serviceAuthChallenge(schemes),
    anyChallenge: noCredentialsChallenge(bearerOn, schemes),
    wrongScheme: `the Authorization header must use the ServiceAuth${others} scheme${bearerOn ? " or Bearer" : ""}`,
  };
}

/** ServiceAuth alone: no alias, Bearer off. */
export const SERVICE_AUTH_ONLY = serviceAuthSpellings();

// A scheme is an HTTP token (RFC 9110 §11.1), then white space.
// Stryker disable next-line Regex: PARAM skips leading spaces itself, so \s and \s+ read the same
const SCHEME = /^\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s+/;
// name = value | name = "quoted value", then a comma (spaces optional) or the end.
const PARAM = /\s*([A-Za-z_]+)\s*=\s*(?:"([^"]*)"|([^,]*?))\s*(?:,|$)/y;

/**
 * Parses `ServiceAuth svcauth_api_client_id=<key>, svcauth_token=<token>`, or
 * the same in the spelling of an alias: `DiadocAuth ddauth_api_client_id=<key>,ddauth_token=<token>`.
 */
export function parseServiceAuth(
  header: string | null | undefined,
  spellings: ServiceAuthSpellings = SERVICE_AUTH_ONLY,
): ServiceAuthCredentials {
  if (header === null || header === undefined || header.trim() === "") {
    throw unauthenticated("the Authorization header is missing", spellings.anyChallenge);
  }
  const scheme = SCHEME.exec(header);
  const spelled = scheme ? spellings.bySchemes.get((scheme[1] as string).toLowerCase()) : undefined;
  if (!scheme || !spelled) {
    throw unauthenticated(spellings.wrongScheme, spellings.anyChallenge);
  }
  const params = new Map<string, string>();
  const rest = header.slice(scheme[0].length);
  PARAM.lastIndex = 0;
  while (PARAM.lastIndex < rest.length) {
    const match = PARAM.exec(rest);
    // A match always moves on: a name has at least one character.
    if (!match) {
      throw unauthenticated("the Authorization header is malformed", spellings.challenge);
    }
    const name = (match[1] as string).toLowerCase();
    if (params.has(name)) {
      throw unauthenticated(`the Authorization header repeats ${name}`, spellings.challenge);
    }
    // A parameter of another spelling is not an unknown one: half of each is no header at all.
    const owner = spellings.parameters.get(name);
    if (owner !== undefined && owner !== spelled.prefix) {
      throw unauthenticated(
        `the Authorization header mixes spellings: ${name} with the ${spelled.scheme} scheme`,
        spellings.challenge,
      );
    }
    // One of the two value groups always takes part in a match.
    params.set(name, (match[2] ?? match[3]) as string);
  }
  const apiKey = params.get(`${spelled.prefix}_api_client_id`);
  const token = params.get(`${spelled.prefix}_token`);
  if (!apiKey || !token) {
    throw unauthenticated(
      `the Authorization header needs ${spelled.apiKey} and ${spelled.token}`,
      spellings.challenge,
    );
  }
  return { apiKey, token };
}

/** Checks the API key and the token; the caller is the token's user. */
export async function authenticate(
  header: string | null | undefined,
  credentials: CredentialStore,
  now: Clock,
  spellings: ServiceAuthSpellings = SERVICE_AUTH_ONLY,
): Promise<Caller> {
  const { apiKey, token } = parseServiceAuth(header, spellings);
  const [client, accessToken] = await Promise.all([
    credentials.findApiClient(hashSecret(apiKey)),
    credentials.findToken(hashSecret(token)),
  ]);
  if (!client?.enabled) {
    throw unauthenticated("the API client is unknown or disabled", spellings.challenge);
  }
  if (!accessToken || accessToken.expiresAt.getTime() <= now().getTime()) {
    throw unauthenticated("the token is unknown or expired", spellings.challenge);
  }
  return { userId: accessToken.userId, client: client.name };
}
