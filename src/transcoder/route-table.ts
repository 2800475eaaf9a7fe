/**
 * One route table for every binding: a tree of path segments, matched on the
 * raw request path (never a decoded one, so `%2F` inside a variable is not a
 * separator) with a fixed precedence at every segment: a literal before `*`
 * before `**`. Two bindings that could match the same request (the same HTTP
 * method, the same segments and verb whatever their variables are called)
 * are refused when the second is added, with both names in the message.
 *
 * A custom verb (`:verb`) is split off the last segment only when some
 * binding has that verb, so a colon inside a variable's value stays a colon.
 */
import { type PathTemplate, parseTemplate, type Segment } from "./template";

/** A binding as the table holds it. */
export interface TableBinding<T> {
  /** The HTTP method (`GET`, … or a `custom` kind), as written. */
  readonly httpMethod: string;
  readonly template: PathTemplate;
  /** Literal segments match whatever their case (a legacy profile's choice). */
  readonly caseInsensitive: boolean;
  /** A request path with a trailing "/" does not match it (by default one is ignored). */
  readonly exactTrailingSlash?: boolean;
  /** Who the binding is, for conflict messages (e.g. `pkg.Service.Method`). */
  readonly name: string;
  readonly value: T;
}

/** A variable's field path and its value, decoded by the spec's rules. */
export interface BoundVariable {
  readonly fieldPath: readonly string[];
  readonly value: string;
}

export type Match<T> =
  | {
      readonly kind: "found";
      readonly binding: TableBinding<T>;
      readonly variables: BoundVariable[];
    }
  /** The path is served, not with this method: the methods it is served with, and the first binding found. */
  | {
      readonly kind: "method-not-allowed";
      readonly allowed: readonly string[];
      readonly first: TableBinding<T>;
    }
  | { readonly kind: "not-found" };

export class ConflictError extends Error {
  override readonly name = "ConflictError";
}

interface Node<T> {
  readonly literals: Map<string, Node<T>>;
  /** Literals of case-insensitive bindings, by their lower-case text. */
  readonly foldedLiterals: Map<string, Node<T>>;
  star: Node<T> | undefined;
  /** After a `**`: only literal children (a suffix) follow. */
  doubleStar: Node<T> | undefined;
  /** Templates that end here, by verb ("" for none) then HTTP method. */
  readonly ends: Map<string, Map<string, TableBinding<T>>>;
}

const newNode = <T>(): Node<T> => ({
  literals: new Map(),
  foldedLiterals: new Map(),
  star: undefined,
  doubleStar: undefined,
  ends: new Map(),
});

/** How a multi-segment variable's value is decoded (a single-segment one is always decoded whole). */
export type MultiSegmentDecoding = "keep-reserved" | "keep-slash" | "all";

export interface RouteTableOptions {
  /** Default "keep-reserved", as google/api/http.proto says. */
  readonly multiSegmentDecoding?: MultiSegmentDecoding;
  /** Split any `:suffix` off the last segment as a verb, not only the verbs of the bindings. */
  readonly matchUnregisteredCustomVerb?: boolean;
  /**
   * When nothing matches: let a single-segment variable take a raw "/" (a
   * client that did not encode one, as Google's Go REST client does not), the
   * leftmost variable taking what it must, as Google's reference server does.
   * Off by default (grpc-httpjson-transcoding answers nothing).
   */
  readonly slashInSingleSegmentVariables?: boolean;
}

/** An HTTP method that matches every method (a `custom` rule of kind "*"), when the path has no verb. */
export const ANY_METHOD = "*";

export interface RouteTable<T> {
  /** Adds a binding; throws ConflictError when another could match the same requests. */
  add(
    binding: Omit<TableBinding<T>, "template"> & { readonly template: PathTemplate | string },
  ): TableBinding<T>;
  /** The binding for a method and a raw path (no query), with its variables. */
  match(httpMethod: string, rawPath: string): Match<T>;
  readonly bindings: readonly TableBinding<T>[];
}

type Pick<T> = (byMethod: Map<string, TableBinding<T>> | undefined) => TableBinding<T> | undefined;

export function createRouteTable<T>(options: RouteTableOptions = {}): RouteTable<T> {
  const root = newNode<T>();
  const bindings: TableBinding<T>[] = [];
  const verbs = new Set<string>();
  // Templates of literal segments only and no verb, by their path (lower case when
  // case-insensitive): one map lookup answers most requests without the walk. Used
  // only while every binding has the same case rule, where it finds what the walk would.
  const literalPaths = new Map<string, Map<string, TableBinding<T>>>();
  const caseRules = new Set<boolean>();
  const decodeMulti = MULTI_SEGMENT_DECODERS[options.multiSegmentDecoding ?? "keep-reserved"];

  const childFor = (node: Node<T>, segment: Segment, folded: boolean): Node<T> => {
    if (segment.kind === "*") {
      node.star ??= newNode();
      return node.star;
    }
    if (segment.kind === "**") {
      node.doubleStar ??= newNode();
      return node.doubleStar;
    }
    const map = folded ? node.foldedLiterals : node.literals;
    const key = folded ? segment.text.toLowerCase() : segment.text;
    let child = map.get(key);
    if (!child) {
      child = newNode();
      map.set(key, child);
    }
    return child;
  };

  const conflictWith = (binding: TableBinding<T>): TableBinding<T> | undefined =>
    bindings.find(
      (other) =>
        other.httpMethod === binding.httpMethod &&
        sameShape(
          other.template,
          binding.template,
          other.caseInsensitive || binding.caseInsensitive,
        ),
    );

  // Depth-first, literal before `*` before `**`, the first full match wins. The
  // recursion is as deep as the templates are long, never as the request path: a
  // `**` tries its (literal) suffix at each position in a loop, shortest run first.
  const walk = (
    node: Node<T>,
    segments: readonly string[],
    index: number,
    verb: string,
    pick: Pick<T>,
  ): TableBinding<T> | undefined => {
    if (index === segments.length) {
      const here = pick(node.ends.get(verb));
      if (here) return here;
    } else {
      const segment = segments[index] as string;
      const exact = node.literals.get(segment);
      const viaExact = exact && walk(exact, segments, index + 1, verb, pick);
      if (viaExact) return viaExact;
      const folded =
        // Stryker disable next-line ConditionalExpression,EqualityOperator: only saves a toLowerCase when no binding ignores case
        node.foldedLiterals.size > 0 ? node.foldedLiterals.get(segment.toLowerCase()) : undefined;
      const viaFolded = folded && walk(folded, segments, index + 1, verb, pick);
      if (viaFolded) return viaFolded;
      const viaStar = node.star && walk(node.star, segments, index + 1, verb, pick);
      if (viaStar) return viaStar;
    }
    if (!node.doubleStar) return undefined;
    for (let k = index; k <= segments.length; k++) {
      const viaRest = walk(node.doubleStar, segments, k, verb, pick);
      if (viaRest) return viaRest;
    }
    return undefined;
  };

  return {
    bindings,
    add(given) {
      const template =
        // Stryker disable next-line ConditionalExpression: parsing a template's source again gives the same template
        typeof given.template === "string" ? parseTemplate(given.template) : given.template;
      const binding: TableBinding<T> = { ...given, template };
      const other = conflictWith(binding);
      if (other) {
        throw new ConflictError(
          `${binding.name} (${binding.httpMethod} ${template.source}) and ${other.name} (${other.httpMethod} ${other.template.source}) match the same requests`,
        );
      }
      let node = root;
      for (const segment of template.segments)
        node = childFor(node, segment, binding.caseInsensitive);
      const verb = template.verb ?? "";
      // Stryker disable next-line ConditionalExpression: an undefined verb in the set never equals a request's verb text
      if (template.verb !== undefined) verbs.add(template.verb);
      let byMethod = node.ends.get(verb);
      if (!byMethod) {
        byMethod = new Map();
        node.ends.set(verb, byMethod);
      }
      byMethod.set(binding.httpMethod, binding);
      bindings.push(binding);
      // Stryker disable all: the all-literal index is a shortcut; without it the walk finds the same binding
      caseRules.add(binding.caseInsensitive);
      if (template.verb === undefined && template.segments.every((x) => x.kind === "literal")) {
        const key = `/${template.segments.map((x) => (x.kind === "literal" ? x.text : "")).join("/")}`;
        literalPaths.set(binding.caseInsensitive ? key.toLowerCase() : key, byMethod);
      }
      // Stryker restore all
      return binding;
    },
    match(httpMethod, rawPath) {
      // Stryker disable all: the all-literal index is a shortcut; without it the walk finds the same binding
      if (caseRules.size === 1) {
        const key = caseRules.has(true) ? rawPath.toLowerCase() : rawPath;
        const hit = literalPaths.get(key)?.get(httpMethod);
        if (hit) return { kind: "found", binding: hit, variables: [] };
      }
      // Stryker restore all
      const parts = splitPath(rawPath, verbs, options.matchUnregisteredCustomVerb === true);
      if (!parts) return { kind: "not-found" };
      const { segments, verb, trailingSlash } = parts;
      const fits = (b: TableBinding<T> | undefined) =>
        b !== undefined && !(trailingSlash && b.exactTrailingSlash) ? b : undefined;
      const found = walk(root, segments, 0, verb, (byMethod) =>
        fits(byMethod?.get(httpMethod) ?? (verb === "" ? byMethod?.get(ANY_METHOD) : undefined)),
      );
      if (found) {
        return {
          kind: "found",
          binding: found,
          variables: variablesOf(found.template, segments, decodeMulti),
        };
      }
      const allowed = new Set<string>();
      let first: TableBinding<T> | undefined;
      walk(root, segments, 0, verb, (byMethod) => {
        for (const b of byMethod?.values() ?? []) {
          if (!fits(b)) continue;
          first ??= b;
          allowed.add(b.httpMethod);
        }
        return undefined;
      });
      // A path served strictly, with other methods, is that path: a 405, never a loose
      // match of another template (`PATCH …/groups/g/members` is not a group "g/members").
      if (first) return { kind: "method-not-allowed", allowed: [...allowed], first };
      if (options.slashInSingleSegmentVariables) {
        const loose = matchLoosely(bindings, httpMethod, rawPath);
        if (loose) return loose;
      }
      return { kind: "not-found" };
    },
  };
}

/**
 * The first binding (in the order added) whose template matches with each
 * single-segment variable free to span segments; undefined when none does.
 */
function matchLoosely<T>(
  bindings: readonly TableBinding<T>[],
  httpMethod: string,
  rawPath: string,
): Match<T> | undefined {
  for (const binding of bindings) {
    if (binding.httpMethod !== httpMethod && binding.httpMethod !== ANY_METHOD) continue;
    const { template } = binding;
    // Stryker disable next-line ConditionalExpression: a template without a one-segment variable matches loosely as it does strictly
    if (!template.variables.some((v) => !v.multiSegment)) continue;
    const pattern = loosePattern(template, binding.caseInsensitive);
    const m = pattern.exec(rawPath);
    if (!m) continue;
    return {
      kind: "found",
      binding,
      variables: template.variables.map((v, i) => ({
        fieldPath: v.fieldPath,
        value: v.multiSegment
          ? decodeKeepingReserved(m[i + 1] as string)
          : decodeAll(m[i + 1] as string),
      })),
    };
  }
  return undefined;
}

const loosePatterns = new WeakMap<PathTemplate, RegExp>();

function loosePattern(template: PathTemplate, caseInsensitive: boolean): RegExp {
  const known = loosePatterns.get(template);
  // Stryker disable next-line ConditionalExpression: a cache; the pattern built again is the same
  if (known) return known;
  const quote = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  const piece = (s: Segment) =>
    // Stryker disable next-line ConditionalExpression,StringLiteral: a path a template with ** matches loosely, it matches strictly
    s.kind === "literal" ? quote(s.text) : s.kind === "*" ? "[^/]*" : ".*";
  const parts: string[] = [];
  let at = 0;
  for (const v of template.variables) {
    parts.push(...template.segments.slice(at, v.start).map(piece));
    const inner = template.segments.slice(v.start, v.end).map(piece).join("/");
    parts.push(v.multiSegment ? `(${inner})` : "(.+)");
    at = v.end;
  }
  parts.push(...template.segments.slice(at).map(piece));
  const verb = template.verb === undefined ? "" : `:${quote(template.verb)}`;
  const pattern = new RegExp(`^/${parts.join("/")}${verb}/*$`, caseInsensitive ? "i" : "");
  // Stryker disable next-line CallExpression: a cache; the pattern built again is the same
  loosePatterns.set(template, pattern);
  return pattern;
}

/** Two templates match the same paths when their segments and verbs are the same. */
function sameShape(a: PathTemplate, b: PathTemplate, foldCase: boolean): boolean {
  if (a.verb !== b.verb || a.segments.length !== b.segments.length) return false;
  return a.segments.every((s, i) => {
    const t = b.segments[i] as Segment;
    if (s.kind !== t.kind) return false;
    if (s.kind !== "literal") return true;
    const text = (t as Segment & { kind: "literal" }).text;
    return foldCase ? s.text.toLowerCase() === text.toLowerCase() : s.text === text;
  });
}

/**
 * The raw path's segments and its verb: the verb is split off the last
 * segment only when a binding has it (or any verb is taken); a trailing "/"
 * is dropped, an empty segment inside the path is kept. Undefined: not a path.
 */
function splitPath(
  rawPath: string,
  verbs: ReadonlySet<string>,
  anyVerb: boolean,
): { segments: string[]; verb: string; trailingSlash: boolean } | undefined {
  if (!rawPath.startsWith("/")) return undefined;
  let path = rawPath;
  let verb = "";
  const colon = path.lastIndexOf(":");
  // Stryker disable next-line EqualityOperator: a ":" and a "/" are never at the same index
  if (colon > path.lastIndexOf("/") && (anyVerb || verbs.has(path.slice(colon + 1)))) {
    verb = path.slice(colon + 1);
    path = path.slice(0, colon);
  }
  const segments = path.slice(1).split("/");
  const trailingSlash = path.length > 1 && path.endsWith("/");
  while (segments.at(-1) === "") segments.pop();
  return { segments, verb, trailingSlash };
}

function variablesOf(
  template: PathTemplate,
  segments: readonly string[],
  decodeMulti: (raw: string) => string,
): BoundVariable[] {
  const wild = template.segments.findIndex((s) => s.kind === "**");
  // After a `**` the template's segments count from the end of the request's.
  // Stryker disable next-line ConditionalExpression: without a **, the request has as many segments as the template
  const shift = wild < 0 ? 0 : segments.length - template.segments.length;
  const at = (i: number) => (i > wild ? i + shift : i);
  return template.variables.map((v) => {
    const raw = segments.slice(at(v.start), at(v.end)).join("/");
    return { fieldPath: v.fieldPath, value: v.multiSegment ? decodeMulti(raw) : decodeAll(raw) };
  });
}

/** RFC 3986 reserved characters: a multi-segment variable keeps them percent-encoded. */
const RESERVED = new Set("!#$&'()*+,/:;=?@[]");

/** Decodes every `%XX`; an invalid escape stays as written. */
export function decodeAll(raw: string): string {
  return decodePercent(raw, () => true);
}

/** Decodes every `%XX` except those of reserved characters (`%2F` stays `%2F`). */
export function decodeKeepingReserved(raw: string): string {
  return decodePercent(raw, (byte) => !RESERVED.has(String.fromCharCode(byte)));
}

const SLASH = 0x2f;

const MULTI_SEGMENT_DECODERS: Record<MultiSegmentDecoding, (raw: string) => string> = {
  "keep-reserved": decodeKeepingReserved,
  "keep-slash": (raw) => decodePercent(raw, (byte) => byte !== SLASH),
  all: decodeAll,
};

// Stryker disable next-line Regex: it tests two characters at most; the anchors only say so
const HEX = /^[0-9A-Fa-f]{2}$/;

function decodePercent(raw: string, decodes: (byte: number) => boolean): string {
  // Stryker disable next-line all: a shortcut; without it the loop gives the same string
  if (!raw.includes("%")) return raw;
  const bytes: number[] = [];
  const encoder = new TextEncoder();
  for (let i = 0; i < raw.length; ) {
    const hex = raw.slice(i + 1, i + 3);
    if (raw[i] === "%" && HEX.test(hex)) {
      const byte = Number.parseInt(hex, 16);
      if (decodes(byte)) {
        bytes.push(byte);
        i += 3;
        continue;
      }
    }
    const char = String.fromCodePoint(raw.codePointAt(i) as number);
    bytes.push(...encoder.encode(char));
    i += char.length;
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}
