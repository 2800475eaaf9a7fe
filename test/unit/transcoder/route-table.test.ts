/**
 * The route table and the template parser beyond the upstream tables
 * (docs/transcoding.md): what each refusal says, conflicts (case folded for
 * a case-insensitive binding), the legacy profile's rules (any case, no
 * trailing slash), the 405's methods, a custom method of any name, the
 * lenient match of a raw "/" in a one-segment variable, and the decoding of
 * values (UTF-8, bad escapes, reserved characters).
 */
import { describe, expect, it } from "vitest";
import {
  ANY_METHOD,
  ConflictError,
  createRouteTable,
  decodeAll,
  decodeKeepingReserved,
  type RouteTableOptions,
} from "../../../src/transcoder/route-table";
import { parseTemplate, TemplateError } from "../../../src/transcoder/template";

describe("a template that breaks a rule is refused with the reason", () => {
  it.each([
    ["v1/a", 'path template "v1/a": it must start with "/"'],
    ["/a//b", "an empty segment at 3"],
    ["/a b", '"a b" is not a literal segment'],
    ["/a?b", '"a?b" is not a literal segment'],
    ["/{x=a/{y}}", "a variable cannot hold another variable"],
    ["/{x", 'a variable has no closing "}"'],
    ["/{x.1y}", '"x.1y" is not a field path'],
    ["/{x}/{x}", "the variable x is given twice"],
    ["/{x.y=a:b}", 'unexpected ":" in the variable x.y'],
    ["/{a.b}/{a.b}", "the variable a.b is given twice"],
    ["/{a-b}", '"a-b" is not a field path'],
    ["/a:b c", '"b c" is not a verb'],
    ["/a}b", 'unexpected "}" at 2'],
    ["/**/*", 'only literal segments may follow "**"'],
    ["/{x=**}/{y}", 'only literal segments may follow "**"'],
  ])("%s", (template, why) => {
    expect(() => parseTemplate(template)).toThrow(TemplateError);
    expect(() => parseTemplate(template)).toThrow(why);
  });

  it("is a TemplateError", () => {
    expect(() => parseTemplate("x")).toThrow(expect.objectContaining({ name: "TemplateError" }));
  });

  it("a variable's name ends at its own }", () => {
    expect(parseTemplate("/{a}/{b=c/*}").variables).toEqual([
      { fieldPath: ["a"], start: 0, end: 1, multiSegment: false },
      { fieldPath: ["b"], start: 1, end: 3, multiSegment: true },
    ]);
  });

  it("a literal suffix after ** is a template; a variable of one * is single-segment", () => {
    const t = parseTemplate("/{name=**}/versions:list");
    expect(t.segments.map((s) => s.kind)).toEqual(["**", "literal"]);
    expect(t.verb).toBe("list");
    expect(t.variables).toEqual([{ fieldPath: ["name"], start: 0, end: 1, multiSegment: true }]);
    expect(parseTemplate("/{a.b}").variables[0]?.multiSegment).toBe(false);
    expect(parseTemplate("/{a=*}").variables[0]?.multiSegment).toBe(false);
    expect(parseTemplate("/{a=b/*}").variables[0]?.multiSegment).toBe(true);
    expect(parseTemplate("/{a=**}").variables[0]?.multiSegment).toBe(true);
  });
});

const table = (options: RouteTableOptions = {}) => createRouteTable<string>(options);
const add = (
  t: ReturnType<typeof table>,
  httpMethod: string,
  template: string,
  name: string,
  more: { caseInsensitive?: boolean; exactTrailingSlash?: boolean } = {},
) =>
  t.add({
    httpMethod,
    template,
    caseInsensitive: more.caseInsensitive ?? false,
    exactTrailingSlash: more.exactTrailingSlash,
    name,
    value: name,
  });
const found = (t: ReturnType<typeof table>, method: string, path: string) => {
  const m = t.match(method, path);
  return m.kind === "found" ? { name: m.binding.value, variables: m.variables } : m.kind;
};

describe("conflicts", () => {
  it("the same method and shape, whatever the variables are called: both named", () => {
    const t = table();
    add(t, "GET", "/v1/{a}/x", "A");
    expect(() => add(t, "GET", "/v1/{b}/x", "B")).toThrow(ConflictError);
    expect(() => add(t, "GET", "/v1/{b}/x", "B")).toThrow(
      expect.objectContaining({ name: "ConflictError" }),
    );
    expect(() => add(t, "GET", "/v1/{b}/x", "B")).toThrow(
      "B (GET /v1/{b}/x) and A (GET /v1/{a}/x) match the same requests",
    );
  });

  it("case-insensitive bindings with wildcards in the same places but other literals: no conflict", () => {
    const t = table();
    add(t, "GET", "/{x}/a", "A", { caseInsensitive: true });
    add(t, "GET", "/{y}/b", "B", { caseInsensitive: true });
    expect(t.bindings.map((b) => b.name)).toEqual(["A", "B"]);
  });

  it("another method, another verb, another literal: no conflict", () => {
    const t = table();
    add(t, "GET", "/v1/{a}", "A");
    add(t, "POST", "/v1/{a}", "B");
    add(t, "GET", "/v1/{a}:undo", "C");
    add(t, "GET", "/v1/x/{a}", "D");
    add(t, "GET", "/v1/y/{a}", "E");
    expect(t.bindings.map((b) => b.name)).toEqual(["A", "B", "C", "D", "E"]);
  });

  it("paths that differ only in case conflict when either binding ignores case", () => {
    const t = table();
    add(t, "GET", "/Restore", "A", { caseInsensitive: true });
    expect(() => add(t, "GET", "/restore", "B")).toThrow(ConflictError);
    const cs = table();
    add(cs, "GET", "/Restore", "A");
    add(cs, "GET", "/restore", "B");
    expect(found(cs, "GET", "/restore")).toMatchObject({ name: "B" });
    expect(found(cs, "GET", "/Restore")).toMatchObject({ name: "A" });
  });
});

describe("matching", () => {
  it("a case-insensitive binding matches any case; a case-sensitive one only its own", () => {
    const t = table();
    add(t, "GET", "/Get/{id}", "A", { caseInsensitive: true });
    add(t, "GET", "/Other/{id}", "B");
    expect(found(t, "GET", "/gEt/X")).toEqual({
      name: "A",
      variables: [{ fieldPath: ["id"], value: "X" }],
    });
    expect(found(t, "GET", "/other/x")).toBe("not-found");
    expect(found(t, "GET", "/Other/x")).toMatchObject({ name: "B" });
  });

  it("all-literal paths: the same answers when every binding has one case rule", () => {
    const ci = table();
    add(ci, "GET", "/GetSubscriptions", "A", { caseInsensitive: true, exactTrailingSlash: true });
    add(ci, "POST", "/GetSubscriptions", "P", { caseInsensitive: true, exactTrailingSlash: true });
    expect(found(ci, "GET", "/GETSUBSCRIPTIONS")).toEqual({ name: "A", variables: [] });
    expect(found(ci, "POST", "/getsubscriptions")).toMatchObject({ name: "P" });
    expect(found(ci, "GET", "/GetSubscriptions/")).toBe("not-found");
    const cs = table();
    add(cs, "GET", "/a/b", "A");
    add(cs, "GET", "/", "R");
    expect(found(cs, "GET", "/a/b")).toEqual({ name: "A", variables: [] });
    expect(found(cs, "GET", "/A/b")).toBe("not-found");
    expect(found(cs, "GET", "/")).toMatchObject({ name: "R" });
    // A trailing "/" is ignored unless the binding says otherwise.
    expect(found(cs, "GET", "/a/b/")).toMatchObject({ name: "A" });
  });

  it("another method on a bound path: its methods, and a binding to answer with", () => {
    const t = table();
    add(t, "GET", "/v1/{a}", "A");
    add(t, "PATCH", "/v1/{b}", "B");
    add(t, "DELETE", "/v1/x", "C");
    const m = t.match("PUT", "/v1/x");
    expect(m.kind).toBe("method-not-allowed");
    if (m.kind !== "method-not-allowed") return;
    expect([...m.allowed].sort()).toEqual(["DELETE", "GET", "PATCH"]);
    expect(m.first.value).toBe("C");
    expect(t.match("PUT", "/v2/x").kind).toBe("not-found");
  });

  it("a binding with the exact trailing-slash rule: a trailing / is neither a match nor a 405", () => {
    const t = table();
    add(t, "GET", "/v1/{a}", "A", { exactTrailingSlash: true });
    expect(found(t, "GET", "/v1/x")).toMatchObject({ name: "A" });
    expect(t.match("GET", "/v1/x/").kind).toBe("not-found");
    expect(t.match("POST", "/v1/x/").kind).toBe("not-found");
  });

  it("the root template, with the exact trailing-slash rule, matches /", () => {
    const t = table();
    add(t, "GET", "/", "R", { exactTrailingSlash: true });
    expect(found(t, "GET", "/")).toMatchObject({ name: "R" });
    const mixed = table();
    add(mixed, "GET", "/", "R", { exactTrailingSlash: true });
    add(mixed, "GET", "/A", "A", { caseInsensitive: true });
    expect(found(mixed, "GET", "/")).toMatchObject({ name: "R" });
  });

  it("a custom method of any name; * matches every method, but not with a verb", () => {
    const t = table();
    add(t, "PURGE", "/cache/{key}", "P");
    add(t, "*", "/any/{x}", "ANY");
    add(t, "*", "/any/{x}:go", "ANYVERB");
    expect(found(t, "PURGE", "/cache/k")).toMatchObject({ name: "P" });
    expect(found(t, "GET", "/cache/k")).toBe("method-not-allowed");
    expect(found(t, "DELETE", "/any/1")).toMatchObject({ name: "ANY" });
    expect(found(t, "DELETE", "/any/1:go")).toBe("method-not-allowed");
  });

  it("not a path: not found", () => {
    const t = table();
    add(t, "GET", "/{x=**}", "A");
    expect(t.match("GET", "x").kind).toBe("not-found");
    expect(t.match("GET", "*").kind).toBe("not-found");
  });

  it("a colon is a verb only when some binding has that verb, or when any verb is taken", () => {
    const strict = table();
    add(strict, "GET", "/v1/{id}", "A");
    expect(found(strict, "GET", "/v1/a:b")).toMatchObject({
      variables: [{ fieldPath: ["id"], value: "a:b" }],
    });
    const loose = table({ matchUnregisteredCustomVerb: true });
    add(loose, "GET", "/v1/{id}", "A");
    expect(found(loose, "GET", "/v1/a:b")).toBe("not-found");
  });

  it("multi-segment decoding: reserved kept (default), only / kept, or everything", () => {
    const value = (options: RouteTableOptions) => {
      const t = table(options);
      add(t, "GET", "/v1/{name=**}", "A");
      const m = t.match("GET", "/v1/a%2Fb%3Ac%20d/e");
      return m.kind === "found" ? m.variables[0]?.value : undefined;
    };
    expect(value({})).toBe("a%2Fb%3Ac d/e");
    expect(value({ multiSegmentDecoding: "keep-slash" })).toBe("a%2Fb:c d/e");
    expect(value({ multiSegmentDecoding: "all" })).toBe("a/b:c d/e");
  });
});

describe("a raw / in a one-segment variable (slashInSingleSegmentVariables)", () => {
  const t = table({ slashInSingleSegmentVariables: true });
  add(t, "GET", "/v1/{s}/{n}/x:path", "A");
  add(t, "GET", "/v1/{a=first/*}/{b}:res", "R");
  add(t, "GET", "/v1/{s}", "S", { caseInsensitive: true });

  it("the leftmost variable takes the extra segments; the others one each", () => {
    expect(found(t, "GET", "/v1/a%22/b/7/x:path")).toEqual({
      name: "A",
      variables: [
        { fieldPath: ["s"], value: 'a"/b' },
        { fieldPath: ["n"], value: "7" },
      ],
    });
  });

  it("a multi-segment variable keeps its own pattern and decoding", () => {
    expect(found(t, "GET", "/v1/first/a%2F/b/c:res")).toEqual({
      name: "R",
      variables: [
        { fieldPath: ["a"], value: "first/a%2F" },
        { fieldPath: ["b"], value: "b/c" },
      ],
    });
  });

  it("a plain * takes one segment; a literal's regex characters are literal; * as the method", () => {
    const u = table({ slashInSingleSegmentVariables: true });
    add(u, "GET", "/w/*/{s}", "W");
    add(u, "GET", "/v1.x/{s}", "D");
    add(u, "*", "/any/{s}", "ANY");
    expect(ANY_METHOD).toBe("*");
    expect(found(u, "GET", "/w/a/b/c")).toMatchObject({
      name: "W",
      variables: [{ fieldPath: ["s"], value: "b/c" }],
    });
    expect(found(u, "GET", "/v1Ax/a/b")).toBe("not-found");
    expect(found(u, "GET", "/v1.x/a/b")).toMatchObject({ name: "D" });
    expect(found(u, "PUT", "/any/a/b")).toMatchObject({
      name: "ANY",
      variables: [{ fieldPath: ["s"], value: "a/b" }],
    });
  });

  it("a strict match wins; the method and the case rule still hold", () => {
    expect(found(t, "GET", "/v1/one")).toMatchObject({ name: "S" });
    expect(found(t, "GET", "/V1/one/two")).toMatchObject({ name: "S" });
    expect(found(t, "POST", "/v1/a/b/7/x:path")).toBe("not-found");
    expect(found(table(), "GET", "/v1/a/b/7/x:path")).toBe("not-found");
  });

  it("a path served strictly with other methods is a 405, not a loose match of another template", () => {
    const u = table({ slashInSingleSegmentVariables: true });
    add(u, "PATCH", "/v1/groups/{g}", "UPDATE");
    add(u, "GET", "/v1/groups/{g}/members", "MEMBERS");
    expect(u.match("PATCH", "/v1/groups/g1/members")).toMatchObject({
      kind: "method-not-allowed",
      allowed: ["GET"],
    });
    // No strict path at all: the loose match still serves it.
    expect(found(u, "PATCH", "/v1/groups/g1/other")).toMatchObject({
      name: "UPDATE",
      variables: [{ fieldPath: ["g"], value: "g1/other" }],
    });
  });
});

describe("percent-decoding of values", () => {
  it("UTF-8 sequences become their characters; raw characters stay as they are", () => {
    expect(decodeAll("%E2%98%BA%20caf%C3%A9")).toBe("☺ café");
    expect(decodeAll("é☺")).toBe("é☺");
    expect(decodeAll("no-escapes")).toBe("no-escapes");
  });

  it("an escape that is not %XX stays as written; one pass only", () => {
    expect(decodeAll("%zz%2%")).toBe("%zz%2%");
    expect(decodeAll("100%25")).toBe("100%");
    expect(decodeAll("%2525")).toBe("%25");
    expect(decodeAll("%2f%2F")).toBe("//");
  });

  it("reserved characters stay encoded, exactly as received, in a multi-segment value", () => {
    expect(decodeKeepingReserved("%2f%2F%3a%40%21%2B%7E%41")).toBe("%2f%2F%3a%40%21%2B~A");
  });
});
