/**
 * Checks of request values shared by the operations.
 *
 * The identifier rule (boxId, userId, messageId, documentId, counteragentGroupId,
 * afterIndexKey), one rule on every protocol and the one the OpenAPI document
 * publishes as `pattern` + `maxLength`:
 * - 1 to 256 characters (Unicode code points, as JSON Schema's maxLength counts);
 * - no control character: C0 (U+0000–U+001F), DEL (U+007F) and C1 (U+0080–U+009F);
 * - not blank: at least one character that is not white space (white space as
 *   JavaScript's `String.prototype.trim` and ECMAScript `\s` define it, listed
 *   explicitly so that regex engines whose `\s` differs agree).
 * An optional identifier may also be absent or empty (empty means absent).
 */
import { invalidArgument } from "./errors";

export const ID_MAX_LENGTH = 256;

/** Control characters: C0, DEL and C1 (a regular-expression character range). */
export const CONTROLS = "\\u0000-\\u001F\\u007F-\\u009F";
/** White space that `trim()` removes, beyond the controls (Zs, U+2028/9, U+FEFF). */
export const SPACES =
  "\\u0020\\u00A0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000\\uFEFF";

/**
 * An identifier as an ECMA-262 regular expression (also valid, with the same
 * meaning, in Python's `re` and PCRE): no control character anywhere and at
 * least one character that is neither a control nor white space. Published in
 * the OpenAPI document; the service itself checks with `isIdentifier`, a scan
 * (this expression backtracks on long values: docs/security.md).
 */
export const ID_PATTERN = `^[^${CONTROLS}]*[^${CONTROLS}${SPACES}][^${CONTROLS}]*$`;

/** True when `value` is an identifier by the rule above: one pass over its code points. */
export function isIdentifier(value: string): boolean {
  let length = 0;
  let blank = true;
  for (const char of value) {
    if (++length > ID_MAX_LENGTH) return false;
    const c = char.codePointAt(0) as number;
    if (c <= 0x1f || (c >= 0x7f && c <= 0x9f)) return false;
    if (blank && !isWhiteSpace(c)) blank = false;
  }
  return !blank;
}

/** ECMAScript white space and line terminators (what `\s` and `trim()` take), as a code point. */
export function isWhiteSpace(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  return (
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/** A required identifier: present, not blank, at most 256 characters, no control characters. */
export function requireId(name: string, value: string | undefined): string {
  if (value === undefined || value.trim() === "") {
    throw invalidArgument(`${name} is required`);
  }
  return checkId(name, value);
}

/** An optional identifier: absent or empty means "not given"; anything else must be an identifier. */
export function optionalId(name: string, value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : checkId(name, value);
}

function checkId(name: string, value: string): string {
  if (!isIdentifier(value)) {
    throw invalidArgument(`${name} is not a valid identifier`);
  }
  return value;
}
