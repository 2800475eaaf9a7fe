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
    const differences: string[] = [];
    for (let i = 0; i < 20_000; i++) {
      const length = 1 + Math.floor(next() * 14);
      let header = "";
      for (let j = 0; j < length; j++) header += PIECES[Math.floor(next() * PIECES.length)];
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
  // here, that the scan reads them right.
  const blanks = " ".repeat(60_000);
  it.each([
    [
      "inside a value",
      `ServiceAuth svcauth_api_client_id=a${blanks}x, svcauth_token=t`,
      { apiKey: `a${blanks}x`, token: "t" },
    ],
    ["before a name", `ServiceAuth ${blanks}x`, "malformed"],
    ["after the scheme, before nothing", `ServiceAuth${blanks}`, "needs"],
    ["in a quoted value never closed", `ServiceAuth svcauth_api_client_id="${blanks}`, "needs"],
  ])("%s", (_name, header, expected) => {
    expect(scanned(header)).toEqual(expected);
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
