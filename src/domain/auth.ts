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
import { isWhiteSpace } from "./validate";

/** The longest ServiceAuth header read (an API key and a token, with room to spare). */
export const MAX_SERVICE_AUTH_LENGTH = 8 * 1024;

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

/**
 * Parses `ServiceAuth svcauth_api_client_id=<key>, svcauth_token=<token>`, or
 * the same in the spelling of an alias: `DiadocAuth ddauth_api_client_id=<key>,ddauth_token=<token>`.
 *
 * The grammar: white space, a scheme (an HTTP token, RFC 9110 §11.1), white
 * space; then parameters `name = value` or `name = "quoted value"`, each
 * ended by a comma (spaces optional) or the end. An unquoted value runs to
 * the next comma, its trailing white space removed. It runs before any
 * credential is checked, so it is a plain scan, linear in the header's
 * length whatever the header holds (docs/security.md): no regular expression.
 */
export function parseServiceAuth(
  header: string | null | undefined,
  spellings: ServiceAuthSpellings = SERVICE_AUTH_ONLY,
): ServiceAuthCredentials {
  if (header === null || header === undefined || header.trim() === "") {
    throw unauthenticated("the Authorization header is missing", spellings.anyChallenge);
  }
  // An API key and a token are short: a longer header is refused unread (docs/security.md).
  if (header.length > MAX_SERVICE_AUTH_LENGTH) {
    throw unauthenticated("the Authorization header is too large", spellings.challenge);
  }
  let pos = skipSpaces(header, 0);
  const schemeStart = pos;
  // charCodeAt past the end is NaN, which no class takes: the scans need no bound.
  while (isTokenChar(header.charCodeAt(pos))) pos++;
  const afterScheme = skipSpaces(header, pos);
  // No scheme at all reads as "", which no spelling has.
  const spelled =
    afterScheme > pos
      ? spellings.bySchemes.get(header.slice(schemeStart, pos).toLowerCase())
      : undefined;
  if (!spelled) {
    throw unauthenticated(spellings.wrongScheme, spellings.anyChallenge);
  }
  const params = new Map<string, string>();
  pos = afterScheme;
  while (pos < header.length) {
    const param = nextParam(header, pos);
    if (!param) {
      throw unauthenticated("the Authorization header is malformed", spellings.challenge);
    }
    const name = param.name.toLowerCase();
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
    params.set(name, param.value);
    pos = param.end;
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

/**
 * One parameter from `from`: white space, a name (letters and `_`), `=` with
 * white space around it, a value; then a comma (the parameter ends after it)
 * or the end. undefined: no parameter there.
 */
function nextParam(
  text: string,
  from: number,
): { name: string; value: string; end: number } | undefined {
  let pos = skipSpaces(text, from);
  const nameStart = pos;
  while (isNameChar(text.charCodeAt(pos))) pos++;
  if (pos === nameStart) return undefined;
  const name = text.slice(nameStart, pos);
  pos = skipSpaces(text, pos);
  if (text.charCodeAt(pos) !== EQUALS) return undefined;
  const valueStart = skipSpaces(text, pos + 1);
  // "quoted" (commas allowed inside): up to the next quote, then white space, then a comma or the end.
  if (text.charCodeAt(valueStart) === QUOTE) {
    const close = text.indexOf('"', valueStart + 1);
    // No closing quote (-1): the scan from 0 stops at the scheme, which is neither a comma nor the end.
    const after = skipSpaces(text, close + 1);
    const next = text.charCodeAt(after);
    if (close !== -1 && (next === COMMA || Number.isNaN(next))) {
      return { name, value: text.slice(valueStart + 1, close), end: after + 1 };
    }
  }
  // Unquoted (or a quote not closed where it should be): up to the next comma, trailing space removed.
  const comma = text.indexOf(",", valueStart);
  const stop = comma === -1 ? text.length : comma;
  return { name, value: withoutTrailingSpaces(text.slice(valueStart, stop)), end: stop + 1 };
}

function withoutTrailingSpaces(value: string): string {
  let end = value.length;
  while (isWhiteSpace(value.charCodeAt(end - 1))) end--;
  return value.slice(0, end);
}

const EQUALS = 0x3d;
const QUOTE = 0x22;
const COMMA = 0x2c;

function skipSpaces(text: string, from: number): number {
  let pos = from;
  while (isWhiteSpace(text.charCodeAt(pos))) pos++;
  return pos;
}

const isLetter = (c: number) => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
const isNameChar = (c: number) => isLetter(c) || c === 0x5f; /* _ */
/** RFC 9110 tchar: ALPHA, DIGIT and !#$%&'*+-.^_`|~ */
const isTokenChar = (c: number) =>
  isLetter(c) || (c >= 0x30 && c <= 0x39) || TOKEN_SYMBOLS.includes(String.fromCharCode(c));
const TOKEN_SYMBOLS = "!#$%&'*+-.^_`|~";

/**
 * The one wording of a refused key or token: whether the API key exists, is
 * disabled, or the token is unknown or expired, the caller is told the same
 * (docs/security.md, "What a 401 tells").
 */
export const CREDENTIALS_REFUSED = "the API key or the token is unknown, disabled or expired";

/** Checks the API key and the token; the caller is the token's user. */
export async function authenticate(
  header: string | null | undefined,
  credentials: CredentialStore,
  now: Clock,
  spellings: ServiceAuthSpellings = SERVICE_AUTH_ONLY,
): Promise<Caller> {
  return await checkCredentials(parseServiceAuth(header, spellings), credentials, now, spellings);
}

/** Checks parsed credentials against the store (both looked up at once: no timing tells which failed). */
export async function checkCredentials(
  { apiKey, token }: ServiceAuthCredentials,
  credentials: CredentialStore,
  now: Clock,
  spellings: ServiceAuthSpellings = SERVICE_AUTH_ONLY,
): Promise<Caller> {
  const [client, accessToken] = await Promise.all([
    credentials.findApiClient(hashSecret(apiKey)),
    credentials.findToken(hashSecret(token)),
  ]);
  if (!client?.enabled || !accessToken || accessToken.expiresAt.getTime() <= now().getTime()) {
    throw unauthenticated(CREDENTIALS_REFUSED, spellings.challenge);
  }
  return { userId: accessToken.userId, client: client.name };
}
