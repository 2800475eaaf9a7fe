/**
 * Query parameters by google/api/http.proto: every request field the path
 * and the body leave free may come from the query, by its field path
 * (`sub.subfield=foo`, JSON or proto names), a repeated field from repeated
 * keys, an enum by name or number, a well-known type in its JSON form. A
 * field bound by the path or the body is never set from the query, and a
 * parameter that names no field is refused with its name.
 */
import {
  type DescField,
  type DescMessage,
  fromJson,
  type JsonValue,
  type Message,
  ScalarType,
} from "@bufbuild/protobuf";
import { type ReflectMessage, reflect } from "@bufbuild/protobuf/reflect";
import { base64Decode } from "@bufbuild/protobuf/wire";
import { decodeAll } from "./route-table";

/** One `name=value` of a query string, its value decoded. */
export interface QueryParam {
  readonly name: string;
  readonly value: string;
}

export interface SplitOptions {
  /** `+` means a space (HTML forms; Go's url.Values and most clients encode a space so). */
  readonly plusIsSpace: boolean;
  /** Names dropped before anything reads them (system parameters such as `$alt`). */
  readonly ignore?: ReadonlySet<string>;
}

/**
 * Splits a raw query string: on `&`, then at the first `=`; a part without
 * `=` or with an empty name is skipped; names stay as written, values are
 * percent-decoded once (as grpc-httpjson-transcoding does).
 */
export function splitQuery(query: string, options: SplitOptions): QueryParam[] {
  const params: QueryParam[] = [];
  if (query === "") return params;
  for (const part of query.split("&")) {
    const eq = part.indexOf("=");
    if (eq <= 0) continue;
    const name = part.slice(0, eq);
    if (options.ignore?.has(name)) continue;
    const raw = part.slice(eq + 1);
    params.push({ name, value: decodeAll(options.plusIsSpace ? raw.replaceAll("+", " ") : raw) });
  }
  return params;
}

export class QueryError extends Error {
  override readonly name = "QueryError";
}

/** What may be set from the query of one binding. */
export interface QueryTarget {
  readonly schema: DescMessage;
  /** Field paths (proto names, dotted) the path or the body sets: never from the query. */
  readonly bound: ReadonlySet<string>;
  /** Every field is in the body (`body: "*"`): no parameter names a field. */
  readonly allInBody: boolean;
}

/**
 * Sets the query's parameters on `message`. Throws a QueryError naming the
 * parameter: one that names no field, a field bound elsewhere, a value that
 * does not parse, a second value for a field that is not repeated.
 */
export function applyQuery(
  message: Message,
  target: QueryTarget,
  params: readonly QueryParam[],
): void {
  const seen = new Set<string>();
  const root = reflect(target.schema, message);
  for (const { name, value } of params) {
    const path = resolvePath(target.schema, name);
    if (!path) throw new QueryError(`unknown query parameter "${name}"`);
    const key = path.map((f) => f.name).join(".");
    if (target.allInBody || isBound(target.bound, key)) {
      throw new QueryError(
        `query parameter "${name}" sets a field the ${target.allInBody ? "body" : "path or the body"} sets`,
      );
    }
    const leaf = path.at(-1) as DescField;
    if (leaf.fieldKind !== "list" && seen.has(key)) {
      throw new QueryError(`query parameter "${name}" is given more than once`);
    }
    seen.add(key);
    setText(root, path, `query parameter "${name}"`, value);
  }
}

/**
 * Sets the field at the end of `path` (each field before it a singular
 * message, made present on the way) from its text form: a scalar, an enum
 * by name or number, a well-known type in its JSON form; a list gets one
 * more element. Throws a QueryError that starts with `label`.
 */
export function setText(
  root: ReflectMessage,
  path: readonly DescField[],
  label: string,
  text: string,
): void {
  let at: ReflectMessage = root;
  for (const field of path.slice(0, -1)) {
    if (field.fieldKind !== "message") throw new QueryError(`${label} is not a field path`);
    if (!at.isSet(field)) at.set(field, reflect(field.message));
    at = at.get(field) as ReflectMessage;
  }
  setLeaf(at, path.at(-1) as DescField, label, text);
}

/** A field bound by the path or body, or one inside such a field. */
function isBound(bound: ReadonlySet<string>, key: string): boolean {
  if (bound.has(key)) return true;
  for (let i = key.indexOf("."); i >= 0; i = key.indexOf(".", i + 1)) {
    if (bound.has(key.slice(0, i))) return true;
  }
  return false;
}

/** The fields a dotted name walks through, by proto or JSON name; undefined when it names none. */
export function resolvePath(schema: DescMessage, name: string): DescField[] | undefined {
  const fields: DescField[] = [];
  let at: DescMessage | undefined = schema;
  for (const part of name.split(".")) {
    if (!at) return undefined;
    const field: DescField | undefined = at.fields.find(
      (f) => f.name === part || f.jsonName === part,
    );
    if (!field) return undefined;
    fields.push(field);
    at =
      field.fieldKind === "message" && !isWellKnownScalar(field.message)
        ? field.message
        : undefined;
  }
  return fields;
}

/** Well-known types written as one JSON value (a string, number or bool): they take one parameter. */
const SCALAR_WKT = new Set([
  "google.protobuf.Timestamp",
  "google.protobuf.Duration",
  "google.protobuf.FieldMask",
  "google.protobuf.DoubleValue",
  "google.protobuf.FloatValue",
  "google.protobuf.Int64Value",
  "google.protobuf.UInt64Value",
  "google.protobuf.Int32Value",
  "google.protobuf.UInt32Value",
  "google.protobuf.BoolValue",
  "google.protobuf.StringValue",
  "google.protobuf.BytesValue",
  "google.protobuf.Value",
]);

const isWellKnownScalar = (message: DescMessage) => SCALAR_WKT.has(message.typeName);

function setLeaf(at: ReflectMessage, field: DescField, label: string, raw: string): void {
  const bad = (why: string): never => {
    throw new QueryError(`${label} ${why}`);
  };
  switch (field.fieldKind) {
    case "scalar":
      at.set(field, scalarOf(field.scalar, raw, bad) as never);
      return;
    case "enum":
      at.set(field, enumOf(field.enum, raw, bad) as never);
      return;
    case "message":
      if (!isWellKnownScalar(field.message)) bad("names a message: give its fields");
      at.set(field, reflect(field.message, wellKnownOf(field.message, raw, bad)));
      return;
    case "list": {
      const list = at.get(field);
      if (field.listKind === "scalar") list.add(scalarOf(field.scalar, raw, bad) as never);
      else if (field.listKind === "enum") list.add(enumOf(field.enum, raw, bad) as never);
      else if (isWellKnownScalar(field.message))
        list.add(wellKnownOf(field.message, raw, bad) as never);
      else bad("names a list of messages, which the query cannot carry");
      return;
    }
    case "map":
      bad("names a map, which the query cannot carry");
  }
}

/** A well-known type from its JSON form, the parameter taken as a JSON string (or number, bool). */
function wellKnownOf(message: DescMessage, raw: string, bad: (why: string) => never): Message {
  const json: JsonValue = jsonValueFor(message.typeName, raw);
  try {
    return fromJson(message, json);
  } catch {
    return bad(`is not a valid ${message.name}`);
  }
}

/** The JSON value a well-known type's text stands for: numbers and bools for their wrappers. */
function jsonValueFor(typeName: string, raw: string): JsonValue {
  switch (typeName) {
    case "google.protobuf.BoolValue":
      return raw === "true" ? true : raw === "false" ? false : raw;
    case "google.protobuf.Value":
      // A Value from the query is a string, as grpc-gateway and Envoy read it.
      return raw;
    default:
      return raw;
  }
}

function enumOf(
  desc: { values: readonly { name: string; number: number }[]; name: string },
  raw: string,
  bad: (why: string) => never,
): number {
  const byName = desc.values.find((v) => v.name === raw);
  if (byName) return byName.number;
  if (/^-?\d+$/.test(raw)) {
    const n = Number(raw);
    if (Number.isSafeInteger(n) && n >= -2147483648 && n <= 2147483647) return n;
  }
  return bad(`is not a value of ${desc.name}`);
}

const INT = /^-?\d+$/;
const UINT = /^\d+$/;

function scalarOf(type: ScalarType, raw: string, bad: (why: string) => never): unknown {
  switch (type) {
    case ScalarType.STRING:
      return raw;
    case ScalarType.BOOL:
      if (raw === "true") return true;
      if (raw === "false") return false;
      return bad("must be true or false");
    case ScalarType.BYTES:
      return bytesOf(raw, bad);
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
      return integer(raw, -2147483648, 2147483647, bad);
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return integer(raw, 0, 4294967295, bad);
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64: {
      if (!INT.test(raw)) return bad("must be an integer");
      const n = BigInt(raw);
      if (n < -(2n ** 63n) || n >= 2n ** 63n) return bad("is out of range");
      return n;
    }
    case ScalarType.UINT64:
    case ScalarType.FIXED64: {
      if (!UINT.test(raw)) return bad("must be a non-negative integer");
      const n = BigInt(raw);
      if (n >= 2n ** 64n) return bad("is out of range");
      return n;
    }
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return floating(raw, bad);
  }
}

function integer(raw: string, min: number, max: number, bad: (why: string) => never): number {
  const n = INT.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(n)) return bad("must be an integer");
  if (n < min || n > max) return bad("is out of range");
  return n;
}

const INFINITIES: Record<string, number> = {
  Infinity: Number.POSITIVE_INFINITY,
  "+Infinity": Number.POSITIVE_INFINITY,
  "-Infinity": Number.NEGATIVE_INFINITY,
  // Go's spelling (strconv, fmt), which Google's Go REST clients send.
  Inf: Number.POSITIVE_INFINITY,
  "+Inf": Number.POSITIVE_INFINITY,
  "-Inf": Number.NEGATIVE_INFINITY,
};

/** A number in decimal or exponent form, or NaN and the infinities (JSON's and Go's spellings). */
function floating(raw: string, bad: (why: string) => never): number {
  if (raw === "NaN") return Number.NaN;
  const infinity = INFINITIES[raw];
  if (infinity !== undefined) return infinity;
  // Digits, then optionally "." and digits; or "." and digits (no two digit runs that can trade characters).
  if (!/^[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$/.test(raw)) return bad("must be a number");
  return Number(raw);
}

/** Base64, standard or URL-safe, padded or not (proto JSON accepts both). */
function bytesOf(raw: string, bad: (why: string) => never): Uint8Array {
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(raw)) return bad("must be base64");
  return base64Decode(raw);
}
