/**
 * Reading environment variables the one way every setting is read: a value
 * is trimmed and empty means unset; a bad one is reported with the value
 * itself, shown so that it cannot leak a secret or flood the log.
 */

export type Env = Readonly<Record<string, string | undefined>>;

/** How long a shown value may be before it is cut (with "…"). */
const SHOWN_LENGTH = 80;

/**
 * A value as a problem quotes it: in double quotes, at most 80 characters,
 * with the password of a URL replaced by "***" (MONGODB_URI, the JWKS and
 * OTLP URLs may carry one).
 */
export function shown(raw: string): string {
  const hidden = raw.replace(/(\/\/[^/@\s:]*:)[^/@\s]*@/g, "$1***@");
  const cut = hidden.length > SHOWN_LENGTH ? `${hidden.slice(0, SHOWN_LENGTH)}…` : hidden;
  return JSON.stringify(cut);
}

/** A URL without the slashes that end it: a scan, not /\/+$/ (which backtracks; docs/security.md). */
export function withoutTrailingSlashes(url: string): string {
  let end = url.length;
  while (end > 0 && url.charCodeAt(end - 1) === 0x2f /* / */) end--;
  return url.slice(0, end);
}

export interface EnvReader {
  /** The trimmed value, or undefined when unset or blank. */
  value(name: string): string | undefined;
  /** A whole number from min to max, or `fallback` when unset; anything else is a problem. */
  integer(name: string, fallback: number, min: number, max: number): number;
}

export function envReader(env: Env, problems: string[]): EnvReader {
  const value = (name: string) => {
    const v = env[name];
    return v === undefined || v.trim() === "" ? undefined : v.trim();
  };
  const integer = (name: string, fallback: number, min: number, max: number) => {
    const raw = value(name);
    if (raw === undefined) return fallback;
    const n = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      problems.push(`${name} must be an integer from ${min} to ${max} (got ${shown(raw)})`);
      return fallback;
    }
    return n;
  };
  return { value, integer };
}
