/**
 * docs/security.md, "Nothing before authentication grows faster than its
 * input": the ServiceAuth header is read by a plain scan (src/domain/auth.ts),
 * not by the regular expressions it replaced, one of which backtracked
 * quadratically on a run of blanks. The scan must read every header exactly
 * as they did: this file keeps the old expressions as the oracle (on short
 * headers only, where their cost does not matter) and compares the two on
 * many generated headers, and the Authorization trim of the front
 * (src/http/front.ts) against `Headers`' own.
 */
import { describe, expect, it } from "vitest";
import {
  parseServiceAuth,
  type ServiceAuthAlias,
  serviceAuthSpellings,
} from "../../src/domain/auth";
import { DomainError } from "../../src/domain/errors";
import { trimHttpBlanks } from "../../src/http/front";

const spellings = serviceAuthSpellings([
  { scheme: "DiadocAuth", prefix: "ddauth" } as ServiceAuthAlias,
]);

/** What the header parser read before (fff96f0): the oracle, for short inputs. */
function oracle(header: string): { apiKey: string; token: string } | string {
  if (header.trim() === "") return "missing";
  const scheme = /^\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s+/.exec(header);
  const spelled = scheme ? spellings.bySchemes.get((scheme[1] as string).toLowerCase()) : undefined;
  if (!scheme || !spelled) return "scheme";
  const param = /\s*([A-Za-z_]+)\s*=\s*(?:"([^"]*)"|([^,]*?))\s*(?:,|$)/y;
  const params = new Map<string, string>();
  const rest = header.slice(scheme[0].length);
  while (param.lastIndex < rest.length) {
    const match = param.exec(rest);
    if (!match) return "malformed";
    const name = (match[1] as string).toLowerCase();
    if (params.has(name)) return "repeats";
    const owner = spellings.parameters.get(name);
    if (owner !== undefined && owner !== spelled.prefix) return "mixes";
    params.set(name, (match[2] ?? match[3]) as string);
  }
  const apiKey = params.get(`${spelled.prefix}_api_client_id`);
  const token = params.get(`${spelled.prefix}_token`);
  if (!apiKey || !token) return "needs";
  return { apiKey, token };
}

/** What the scan reads, in the oracle's words. */
function scanned(header: string): { apiKey: string; token: string } | string {
  try {
    return parseServiceAuth(header, spellings);
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    const words: [string, string][] = [
      ["is missing", "missing"],
      ["too large", "too-large"],
      ["must use", "scheme"],
      ["malformed", "malformed"],
      ["repeats", "repeats"],
      ["mixes", "mixes"],
      ["needs", "needs"],
    ];
    return words.find(([text]) => error.message.includes(text))?.[1] ?? error.message;
  }
}

/** A small deterministic generator (mulberry32), so a failure names its seed. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Pieces a header is made of: the right words and every character the grammar treats apart. */
const SCHEMES = [
  "ServiceAuth ",
  "serviceauth\t",
  "DiadocAuth ",
  "Zz09-Auth.v! ",
  "zz09-auth.V!\u3000",
];
const NAMES = [
  "svcauth_api_client_id",
  "svcauth_token",
  "ddauth_api_client_id",
  "ddauth_token",
  "zz_api_client_id",
  "zz_token",
  "svcauth_tokenZ",
  "Zz_token",
  "zz_tokenz",
  "x",
  "_",
];
/** Every white space of ECMAScript, and the characters just outside the ranges. */
const BLANKS = [
  " ",
  "\t",
  "\n",
  "\u000b",
  "\u000c",
  "\r",
  "\u00a0",
  "\u1680",
  "\u2000",
  "\u200a",
  "\u2028",
  "\u2029",
  "\u202f",
  "\u205f",
  "\u3000",
  "\ufeff",
];
const NOT_BLANKS = ["\u0008", "\u000e", "\u001f", "\u1fff", "\u200b", "\u2027", "\u202a", "\u205e"];
const VALUE_PIECES = [
  "k",
  "t",
  "a=b",
  '"',
  ",",
  "9",
  "0",
  "Z",
  "z",
  "@",
  "[",
  "`",
  "{",
  "/",
  ":",
  ...BLANKS,
  ...NOT_BLANKS,
];
const PIECES = [
  "ServiceAuth",
  "serviceauth",
  "DiadocAuth",
  "Bearer",
  "svcauth_api_client_id",
  "svcauth_token",
  "ddauth_api_client_id",
  "ddauth_token",
  "x",
  "k",
  "=",
  "==",
  ",",
  '"',
  " ",
  "  ",
  "\t",
  "\u00a0",
  "\u3000",
  "\n",
  "a+b/c",
  "é",
  "!",
  ";",
];

describe("the scan reads every header as the regular expressions did", () => {
  it("the same credentials or the same refusal on 20,000 generated headers", () => {
    const next = random(40);
    const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)] as T;
    const differences: string[] = [];
    for (let i = 0; i < 20_000; i++) {
      let header = "";
      if (i % 2 === 0) {
        // Any characters at all.
        const length = 1 + Math.floor(next() * 14);
        for (let j = 0; j < length; j++) header += pick(PIECES);
      } else {
        // A known scheme, then parameters: a name, blanks, "=", a value of pieces, a comma.
        header = pick(SCHEMES);
        const params = 1 + Math.floor(next() * 3);
        for (let p = 0; p < params; p++) {
          header += `${next() < 0.3 ? pick(BLANKS) : ""}${pick(NAMES)}${next() < 0.3 ? pick(BLANKS) : ""}=`;
          const length = Math.floor(next() * 6);
          for (let j = 0; j < length; j++) header += pick(VALUE_PIECES);
          if (p < params - 1 || next() < 0.2) header += next() < 0.5 ? "," : ", ";
        }
      }
      const expected = oracle(header);
      const actual = scanned(header);
      if (JSON.stringify(actual) !== JSON.stringify(expected)) {
        differences.push(
          `${JSON.stringify(header)}: ${JSON.stringify(actual)} ≠ ${JSON.stringify(expected)}`,
        );
      }
    }
    expect(differences.slice(0, 10)).toEqual([]);
  });

  it.each([
    ["the canonical header", "ServiceAuth svcauth_api_client_id=k, svcauth_token=t"],
    ["a quoted value holding a comma", 'ServiceAuth svcauth_api_client_id="k,1", svcauth_token=t'],
    [
      "a quote not closed where it should be",
      'ServiceAuth svcauth_api_client_id="k"x, svcauth_token=t',
    ],
    ["a quote never closed", 'ServiceAuth svcauth_api_client_id="k, svcauth_token=t'],
    [
      "blanks around every part",
      "  ServiceAuth \t svcauth_api_client_id = k ,\tsvcauth_token =  t  ",
    ],
    ["a trailing comma", "ServiceAuth svcauth_api_client_id=k, svcauth_token=t,"],
    ["a comma then only blanks", "ServiceAuth svcauth_api_client_id=k, svcauth_token=t,   "],
    ["an empty value", "ServiceAuth svcauth_api_client_id=, svcauth_token=t"],
    ["no blank after the scheme", "ServiceAuth,svcauth_api_client_id=k"],
    ["the scheme alone", "ServiceAuth"],
  ])("%s", (_name, header) => {
    expect(scanned(header)).toEqual(oracle(header));
  });
});

describe("the audit's headers: 60,000 blanks that do not end a value", () => {
  // Their cost is held by the regular-expression check of npm run lint (docs/security.md);
  // a header over 8 KiB is refused unread, and one under it is read right.
  it.each([
    [
      "inside a value",
      (b: string) => `ServiceAuth svcauth_api_client_id=a${b}x, svcauth_token=t`,
      (b: string) => ({ apiKey: `a${b}x`, token: "t" }),
    ],
    ["before a name", (b: string) => `ServiceAuth ${b}x`, () => "malformed"],
    ["after the scheme, before nothing", (b: string) => `ServiceAuth${b}`, () => "needs"],
    [
      "in a quoted value never closed",
      (b: string) => `ServiceAuth svcauth_api_client_id="${b}`,
      () => "needs",
    ],
  ])("%s: refused unread at 60,000; read right at 8,000", (_name, make, expected) => {
    expect(scanned(make(" ".repeat(60_000)))).toBe("too-large");
    const blanks = " ".repeat(8_000);
    expect(scanned(make(blanks))).toEqual(expected(blanks));
  });

  it("8 KiB is read; one character more is too large", () => {
    const header = (n: number) =>
      `ServiceAuth svcauth_api_client_id=k, svcauth_token=${"t".repeat(n)}`;
    const fits = header(8 * 1024 - header(0).length);
    expect(fits.length).toBe(8 * 1024);
    expect(scanned(fits)).toMatchObject({ apiKey: "k" });
    expect(scanned(`${fits}t`)).toBe("too-large");
  });
});

describe("the front trims an Authorization value as Headers does", () => {
  it.each([
    "ServiceAuth a=b",
    "  ServiceAuth a=b  ",
    "\t\r\n ServiceAuth a=b \r\n\t",
    "   ",
    "",
    "x",
    "\u00a0ServiceAuth a=b\u00a0",
    `a=${" ".repeat(1000)}x`,
  ])("%j", (value) => {
    expect(trimHttpBlanks(value)).toBe(new Headers({ a: value }).get("a"));
  });
});
