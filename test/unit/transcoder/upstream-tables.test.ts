/**
 * The path-template and path-matcher tables of grpc-ecosystem/grpc-httpjson-
 * transcoding (the C++ library behind Envoy's and ESPv2's transcoders), run
 * against src/transcoder: test/http_template_test.cc and
 * test/path_matcher_test.cc at commit a6e226f9a2e656a973df3ad48f0ee5efacce1a28,
 * Copyright 2016 Google Inc., Apache License 2.0, translated from C++ into the
 * two JSON files beside this one (each case names its line there).
 *
 * Where we differ on purpose (docs/transcoding.md, "Differences"):
 * - A second binding with the same route is refused when it is added (the
 *   C++ matcher accepts it and then answers neither: "poisoned"). The tables'
 *   duplicate cases check that the add throws and the first binding stays.
 * - The query string is read by the transcoder, not by the matcher: the
 *   tables' query cases run through its query splitter.
 */
import { describe, expect, it } from "vitest";
import { splitQuery } from "../../../src/transcoder/query";
import {
  ConflictError,
  createRouteTable,
  type MultiSegmentDecoding,
  type RouteTable,
} from "../../../src/transcoder/route-table";
import { parseTemplate } from "../../../src/transcoder/template";
import templateTable from "./http-template.table.json";
import matcherTable from "./path-matcher.table.json";

interface Variable {
  fieldPath: string[];
  startSegment: number;
  endSegment: number;
  hasDoubleWildcard: boolean;
}
interface TemplateCase {
  test: string;
  line: number;
  template: string;
  ok: boolean;
  segments?: string[];
  verb?: string | null;
  variables?: Variable[] | null;
}

describe("http_template_test.cc", () => {
  for (const c of templateTable.cases as TemplateCase[]) {
    it(`${c.test} (line ${c.line}): ${JSON.stringify(c.template)}`, () => {
      if (!c.ok) {
        expect(() => parseTemplate(c.template)).toThrow();
        return;
      }
      const t = parseTemplate(c.template);
      expect(t.segments.map((s) => (s.kind === "literal" ? s.text : s.kind))).toEqual(c.segments);
      if (c.verb !== null && c.verb !== undefined) expect(t.verb ?? "").toBe(c.verb);
      if (c.variables) {
        const total = t.segments.length;
        expect(
          t.variables.map((v) => {
            const wild = t.segments.slice(v.start, v.end).some((s) => s.kind === "**");
            return {
              fieldPath: v.fieldPath,
              startSegment: v.start,
              // The C++ counts a `**` variable's end from the end of the path.
              endSegment: wild ? v.end - total - 1 : v.end,
              hasDoubleWildcard: wild,
            };
          }),
        ).toEqual(c.variables);
      }
    });
  }
});

interface Registration {
  id: string;
  line: number;
  httpMethod: string;
  template: string;
  expectRegistered: boolean | null;
  registers: boolean;
  systemQueryParams?: string[];
}
interface Binding {
  fieldPath: string[];
  value: string;
}
interface Lookup {
  line: number;
  httpMethod: string;
  path: string | null;
  pathParts?: { prefix: string; repeat: string; times: number; suffix: string };
  queryParams?: string;
  expectedMethod: string | null;
  methodAssertion?: "ne";
  expectedBindings?: Binding[] | null;
  bindingsAssertion?: "eq" | "values";
}
interface MatcherTest {
  test: string;
  line: number;
  builderOptions?: {
    urlUnescapeSpec: string;
    queryParamUnescapePlus: boolean;
    matchUnregisteredCustomVerb: boolean;
    failRegistrationOnDuplicate: boolean;
  };
  registrations: Registration[];
  build?: boolean;
  generatedLookup?: { httpMethod: string; expectedMethod: string; fieldPath: string[] };
  lookups: Lookup[];
}

const DECODING: Record<string, MultiSegmentDecoding> = {
  kAllCharactersExceptReserved: "keep-reserved",
  kAllCharactersExceptSlash: "keep-slash",
  kAllCharacters: "all",
};

/** The C++ fixture: a table built from the test's registrations; ids by binding. */
function build(t: MatcherTest): { table: RouteTable<string>; duplicates: Registration[] } {
  const options = t.builderOptions ?? matcherTable.defaultBuilderOptions;
  const table = createRouteTable<string>({
    multiSegmentDecoding: DECODING[options.urlUnescapeSpec],
    matchUnregisteredCustomVerb: options.matchUnregisteredCustomVerb,
  });
  const duplicates: Registration[] = [];
  for (const r of t.registrations) {
    const add = () =>
      table.add({
        httpMethod: r.httpMethod,
        template: r.template,
        caseInsensitive: false,
        name: r.id,
        value: r.id,
      });
    const first = table.bindings.find(
      (b) => b.httpMethod === r.httpMethod && sameRoute(b.template.source, r.template),
    );
    if (first) {
      // The C++ accepts it (or refuses it when asked to) and then answers neither of
      // the two: refused here, and the first stays.
      expect(add, `line ${r.line}`).toThrow(ConflictError);
      duplicates.push({ ...r, id: first.value });
      continue;
    }
    if (!r.registers) {
      // The C++ refuses it too: a template that does not parse.
      expect(add, `line ${r.line}`).toThrow();
      continue;
    }
    add();
  }
  return { table, duplicates };
}

/** The template of the duplicated route the lookup's path is on, if any ("" when none). */
function matchedTemplate(t: MatcherTest, l: Lookup): string {
  const path = pathOf(l);
  for (const r of t.registrations) {
    const single = createRouteTable<string>();
    try {
      single.add({
        httpMethod: r.httpMethod,
        template: r.template,
        caseInsensitive: false,
        name: r.id,
        value: r.id,
      });
    } catch {
      continue;
    }
    if (single.match(l.httpMethod, path).kind === "found") return r.template;
  }
  return "/__none__";
}

/** Same segments and verb, variable names aside (what the C++ calls the same route). */
function sameRoute(a: string, b: string): boolean {
  const shape = (s: string) => {
    const t = parseTemplate(s);
    return JSON.stringify([t.segments, t.verb]);
  };
  return shape(a) === shape(b);
}

function pathOf(l: Lookup): string {
  if (l.pathParts) {
    const p = l.pathParts;
    return p.prefix + p.repeat.repeat(p.times) + p.suffix;
  }
  const path = l.path ?? "";
  // The C++ matcher drops a query left in the path (and binds nothing of it).
  const q = path.indexOf("?");
  return q < 0 ? path : path.slice(0, q);
}

describe("path_matcher_test.cc", () => {
  for (const t of matcherTable.tests as MatcherTest[]) {
    it(`${t.test} (line ${t.line})`, () => {
      const { table, duplicates } = build(t);
      const options = t.builderOptions ?? matcherTable.defaultBuilderOptions;
      const lookups = t.generatedLookup ? asciiLookups(t.generatedLookup) : t.lookups;
      for (const l of lookups) {
        const where = `line ${l.line}: ${l.httpMethod} ${(l.path ?? "").slice(0, 80)}`;
        const found = table.match(l.httpMethod, pathOf(l));
        const id = found.kind === "found" ? found.binding.value : null;
        // A route registered twice: the C++ answers nothing (or neither of the two),
        // here the first binding answers.
        const first = duplicates.find((d) => sameRoute(d.template, matchedTemplate(t, l)))?.id;
        if (first !== undefined && (l.expectedMethod === null || l.methodAssertion === "ne")) {
          expect(id, where).toBe(first);
          continue;
        }
        if (l.methodAssertion === "ne") {
          expect(id, where).not.toBe(l.expectedMethod);
          continue;
        }
        expect(id, where).toBe(l.expectedMethod);
        if (found.kind !== "found" || !l.expectedBindings || !l.bindingsAssertion) continue;
        const query = l.queryParams
          ? splitQuery(l.queryParams, {
              plusIsSpace: options.queryParamUnescapePlus,
              ignore: new Set(t.registrations.find((r) => r.id === id)?.systemQueryParams ?? []),
            })
          : [];
        const bindings = [
          ...found.variables.map((v) => ({ fieldPath: [...v.fieldPath], value: v.value })),
          ...query.map((q) => ({ fieldPath: q.name.split("."), value: q.value })),
        ];
        if (l.bindingsAssertion === "values") {
          expect(
            bindings.map((b) => b.value),
            where,
          ).toEqual(l.expectedBindings.map((b) => b.value));
        } else {
          expect(bindings, where).toEqual(l.expectedBindings);
        }
      }
    });
  }
});

/** PercentEscapesUnescapedForSingleSegmentAllAsciiChars, lines 352-364: `/%XX` for every ASCII c. */
function asciiLookups(g: NonNullable<MatcherTest["generatedLookup"]>): Lookup[] {
  const out: Lookup[] = [];
  for (const upper of [false, true]) {
    for (let c = 0; c < 0x7f; c++) {
      const hex = c.toString(16).padStart(2, "0");
      out.push({
        line: 360,
        httpMethod: g.httpMethod,
        path: `/%${upper ? hex.toUpperCase() : hex}`,
        expectedMethod: g.expectedMethod,
        expectedBindings: [{ fieldPath: g.fieldPath, value: String.fromCharCode(c) }],
        bindingsAssertion: "eq",
      });
    }
  }
  return out;
}
