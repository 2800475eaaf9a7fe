/**
 * Path templates of `google.api.http` (google/api/http.proto, "Path template
 * syntax"):
 *
 *     Template  = "/" Segments [ Verb ] ;
 *     Segments  = Segment { "/" Segment } ;
 *     Segment   = "*" | "**" | LITERAL | Variable ;
 *     Variable  = "{" FieldPath [ "=" Segments ] "}" ;
 *     FieldPath = IDENT { "." IDENT } ;
 *     Verb      = ":" LITERAL ;
 *
 * `**` matches zero or more segments; only literals may follow it (the spec
 * wants it last; grpc-httpjson-transcoding, Envoy's transcoder, also takes
 * a literal suffix such as `/{name=**}/versions`). A variable holds no other
 * variable; `{var}` is `{var=*}`; `/` alone has no segment. A template that
 * breaks a rule is refused with the reason, never read some other way.
 */

/** One segment of a template: a literal, `*` (one segment) or `**` (the rest). */
export type Segment =
  | { readonly kind: "literal"; readonly text: string }
  | { readonly kind: "*" }
  | { readonly kind: "**" };

/** A variable: the request field it sets and the segments it takes. */
export interface PathVariable {
  /** The field path, e.g. `["book", "name"]` for `{book.name=…}`. */
  readonly fieldPath: readonly string[];
  /** Index of its first segment. */
  readonly start: number;
  /** Index after its last template segment (a `**` before it takes as many request segments as it needs). */
  readonly end: number;
  /** More than one segment, or `**`: reserved characters such as `%2F` stay encoded. */
  readonly multiSegment: boolean;
}

export interface PathTemplate {
  /** The template as written. */
  readonly source: string;
  readonly segments: readonly Segment[];
  /** The custom verb after `:`, or undefined. */
  readonly verb: string | undefined;
  readonly variables: readonly PathVariable[];
}

export class TemplateError extends Error {
  override readonly name = "TemplateError";
}

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** What a literal may hold: a path segment's characters, without the template's own. */
const LITERAL = /^[^/{}=*:?#\s]+$/;

/** Parses a template, or throws a TemplateError saying what is wrong. */
export function parseTemplate(source: string): PathTemplate {
  const fail = (why: string): never => {
    throw new TemplateError(`path template "${source}": ${why}`);
  };
  if (!source.startsWith("/")) fail('it must start with "/"');
  if (source === "/") return { source, segments: [], verb: undefined, variables: [] };
  let pos = 1;
  const segments: Segment[] = [];
  const variables: PathVariable[] = [];
  const at = (text: string) => source.startsWith(text, pos);

  /** Reads Segments up to "}" (inside a variable), ":" (the verb) or the end. */
  const readSegments = (inVariable: boolean): void => {
    for (;;) {
      if (at("{")) {
        if (inVariable) fail("a variable cannot hold another variable");
        readVariable();
      } else if (at("**")) {
        segments.push({ kind: "**" });
        pos += 2;
      } else if (at("*")) {
        segments.push({ kind: "*" });
        pos += 1;
      } else {
        const end = nextStop(source, pos);
        const text = source.slice(pos, end);
        if (text === "") fail(`an empty segment at ${pos}`);
        if (!LITERAL.test(text)) fail(`"${text}" is not a literal segment`);
        segments.push({ kind: "literal", text });
        pos = end;
      }
      if (!at("/")) return;
      pos += 1;
    }
  };

  const readVariable = (): void => {
    pos += 1; // "{"
    const close = source.indexOf("}", pos);
    // Stryker disable next-line EqualityOperator: "}" is never at index 0 (the template starts with "/")
    if (close < 0) fail('a variable has no closing "}"');
    const eq = source.indexOf("=", pos);
    // Stryker disable next-line EqualityOperator: "=" is never at index 0
    const nameEnd = eq >= 0 && eq < close ? eq : close;
    const fieldPath = source.slice(pos, nameEnd).split(".");
    for (const ident of fieldPath) {
      if (!IDENT.test(ident)) fail(`"${source.slice(pos, nameEnd)}" is not a field path`);
    }
    if (variables.some((v) => v.fieldPath.join(".") === fieldPath.join("."))) {
      fail(`the variable ${fieldPath.join(".")} is given twice`);
    }
    const start = segments.length;
    pos = nameEnd;
    if (at("=")) {
      pos += 1;
      readSegments(true);
    } else {
      segments.push({ kind: "*" });
    }
    if (!at("}")) fail(`unexpected "${source[pos]}" in the variable ${fieldPath.join(".")}`);
    pos += 1;
    const end = segments.length;
    // A variable has a segment at least: `{x}` is `{x=*}`, and an empty `=` fails above.
    const multiSegment = end - start > 1 || (segments[start] as Segment).kind === "**";
    variables.push({ fieldPath, start, end, multiSegment });
  };

  readSegments(false);
  let verb: string | undefined;
  if (at(":")) {
    verb = source.slice(pos + 1);
    if (!LITERAL.test(verb)) fail(`"${verb}" is not a verb`);
    pos = source.length;
  }
  if (pos !== source.length) fail(`unexpected "${source[pos]}" at ${pos}`);
  const wild = segments.findIndex((s) => s.kind === "**");
  if (wild >= 0 && segments.slice(wild + 1).some((s) => s.kind !== "literal")) {
    fail('only literal segments may follow "**"');
  }
  return { source, segments, verb, variables };
}

/** The end of a literal: the next "/", "}", ":" or the end of the text. */
function nextStop(source: string, from: number): number {
  // Stryker disable next-line EqualityOperator: one step past the end finds no stop either
  for (let i = from; i < source.length; i++) {
    const c = source[i];
    if (c === "/" || c === "}" || c === ":") return i;
  }
  return source.length;
}
