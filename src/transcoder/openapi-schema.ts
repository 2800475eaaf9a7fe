/**
 * The one mapping from protobuf types to JSON Schema (OpenAPI 3.1), for
 * every profile's bindings in the document (openapi.ts): what
 * @bufbuild/protobuf's `toJson` writes, which is proto3 JSON. A profile whose
 * JSON differs (the legacy one: proto names, string booleans, fields always
 * written) refines the derived schemas through its style's hooks; it never
 * maps a type of its own.
 */
import { type DescEnum, type DescField, type DescMessage, ScalarType } from "@bufbuild/protobuf";

export type Json = Record<string, unknown>;

/**
 * Requests and answers, described apart when a profile reads more than it
 * writes (a string boolean that may come as a JSON boolean too).
 */
export type Direction = "input" | "output";

/** How a profile's JSON shapes a message, where it differs from proto3 JSON. */
export interface SchemaStyle {
  /**
   * A request's message that is also in an answer has a component of its own
   * (`<full name>.Input`); without it, one component serves both.
   */
  readonly directional?: boolean;
  /** A field's name in the profile's JSON (default: its JSON name). */
  propertyName?(field: DescField): string;
  /** A field the profile never reads nor writes: not in its schemas (default: none). */
  omits?(field: DescField): boolean;
  /**
   * A field's schema in the profile's JSON, refined from `derived` (this
   * mapping's), and whether every message of the direction has it
   * (default: as derived, and not required).
   */
  property?(
    field: DescField,
    derived: Json,
    direction: Direction,
  ): { readonly schema: Json; readonly required: boolean };
  /** A message's schema, refined (a rule across its fields, in words). */
  message?(message: DescMessage, schema: Json, direction: Direction): Json;
}

/** A style as one document uses it. */
export interface StyleUse {
  /** The profile's name: tells two styles' components of one message apart. */
  readonly name: string;
  readonly style: SchemaStyle;
  /** Messages that appear in the style's answers (nested ones included). */
  readonly outputs: ReadonlySet<string>;
}

/** Both 64-bit kinds: proto3 JSON writes them as decimal strings (a JSON number would lose digits). */
const SIGNED_64 = new Set([ScalarType.INT64, ScalarType.SINT64, ScalarType.SFIXED64]);
const UNSIGNED_64 = new Set([ScalarType.UINT64, ScalarType.FIXED64]);

/**
 * A scalar as `toJson` writes it. Where the two builders this replaced
 * disagreed, the wire decides (docs/transcoding.md, "The OpenAPI document"):
 * - uint32 and fixed32 are JSON numbers up to 4294967295: `format: uint32`
 *   (the OpenAPI format registry's), with the range spelt out for tools that
 *   do not know that format; `int32` would say 2147483647 at most.
 * - float and double are JSON numbers, but NaN and ±Infinity, which JSON has
 *   no number for, are written as the strings "NaN", "Infinity", "-Infinity"
 *   (by the legacy JSON too, which is `toJson` with other names).
 * - 64-bit integers are decimal strings: `int64`, or `uint64` for the
 *   unsigned ones, with the digits' pattern.
 */
export function scalarSchema(type: ScalarType): Json {
  switch (type) {
    case ScalarType.STRING:
      return { type: "string" };
    case ScalarType.BOOL:
      return { type: "boolean" };
    case ScalarType.BYTES:
      return { type: "string", contentEncoding: "base64" };
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return {
        oneOf: [{ type: "number" }, { type: "string", enum: ["NaN", "Infinity", "-Infinity"] }],
      };
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return { type: "integer", format: "uint32", minimum: 0, maximum: 4294967295 };
    default:
      if (SIGNED_64.has(type)) return { type: "string", format: "int64", pattern: "^-?[0-9]+$" };
      if (UNSIGNED_64.has(type)) return { type: "string", format: "uint64", pattern: "^[0-9]+$" };
      return { type: "integer", format: "int32" };
  }
}

/** Enum values by name, as proto3 JSON writes them. */
export function enumSchema(desc: DescEnum): Json {
  return { type: "string", enum: desc.values.map((v) => v.name) };
}

/** A singular scalar or enum field's value (anything else: a string). */
export function valueSchema(field: DescField): Json {
  if (field.fieldKind === "enum") return enumSchema(field.enum);
  if (field.fieldKind === "scalar") return scalarSchema(field.scalar);
  return { type: "string" };
}

function itemSchema(field: DescField & { fieldKind: "list" }): Json {
  if (field.listKind === "enum") return enumSchema(field.enum);
  if (field.listKind === "scalar") return scalarSchema(field.scalar);
  return {};
}

/** Well-known types written as one JSON value: the wrappers as the scalar they wrap. */
export const WELL_KNOWN: Readonly<Record<string, Json>> = {
  "google.protobuf.Timestamp": { type: "string", format: "date-time" },
  "google.protobuf.Duration": { type: "string", pattern: "^-?[0-9]+(\\.[0-9]{1,9})?s$" },
  "google.protobuf.FieldMask": { type: "string", description: "Field paths, comma-separated." },
  "google.protobuf.BoolValue": scalarSchema(ScalarType.BOOL),
  "google.protobuf.StringValue": scalarSchema(ScalarType.STRING),
  "google.protobuf.BytesValue": scalarSchema(ScalarType.BYTES),
  "google.protobuf.Int32Value": scalarSchema(ScalarType.INT32),
  "google.protobuf.UInt32Value": scalarSchema(ScalarType.UINT32),
  "google.protobuf.Int64Value": scalarSchema(ScalarType.INT64),
  "google.protobuf.UInt64Value": scalarSchema(ScalarType.UINT64),
  "google.protobuf.DoubleValue": scalarSchema(ScalarType.DOUBLE),
  "google.protobuf.FloatValue": scalarSchema(ScalarType.FLOAT),
  "google.protobuf.Value": {},
};

const MESSAGE_WKT: Readonly<Record<string, Json>> = {
  "google.protobuf.Struct": { type: "object", additionalProperties: {} },
  "google.protobuf.ListValue": { type: "array", items: {} },
  "google.protobuf.Empty": { type: "object" },
  "google.protobuf.Any": {
    type: "object",
    properties: { "@type": { type: "string" } },
    required: ["@type"],
    additionalProperties: {},
  },
};

type Ref = (message: DescMessage) => Json;

/** A field's schema; `ref` names a message's component. */
export function fieldSchema(field: DescField, ref: Ref): Json {
  switch (field.fieldKind) {
    case "scalar":
    case "enum":
      return valueSchema(field);
    case "message":
      return messageSchema(field.message, ref);
    case "list":
      return {
        type: "array",
        items: field.listKind === "message" ? messageSchema(field.message, ref) : itemSchema(field),
      };
    case "map":
      return {
        type: "object",
        additionalProperties:
          field.mapKind === "message"
            ? messageSchema(field.message, ref)
            : field.mapKind === "enum"
              ? enumSchema(field.enum)
              : scalarSchema(field.scalar),
      };
  }
}

/** A well-known type's JSON, or a reference to the message's component. */
export function messageSchema(message: DescMessage, ref: Ref): Json {
  return WELL_KNOWN[message.typeName] ?? MESSAGE_WKT[message.typeName] ?? ref(message);
}

/** `message` and every message it holds, by full name. */
export function collectMessages(message: DescMessage, into: Set<string>): void {
  if (into.has(message.typeName)) return;
  into.add(message.typeName);
  for (const field of message.fields) {
    if (
      field.fieldKind === "message" ||
      (field.fieldKind === "list" && field.listKind === "message") ||
      (field.fieldKind === "map" && field.mapKind === "message")
    ) {
      collectMessages(field.message, into);
    }
  }
}

/** `components.schemas`, filled as messages are referred to. */
export interface Components {
  readonly schemas: Record<string, Json>;
  /** A reference to `message` as `use` describes it in `direction`, its component added (with those it holds). */
  ref(message: DescMessage, use: StyleUse, direction: Direction): Json;
}

export function createComponents(describe: (name: string) => string | undefined): Components {
  const schemas: Record<string, Json> = {};
  const owners = new Map<string, SchemaStyle>();
  const nameOf = (message: DescMessage, use: StyleUse, direction: Direction): string => {
    const { typeName } = message;
    const name =
      use.style.directional && direction === "input" && use.outputs.has(typeName)
        ? `${typeName}.Input`
        : typeName;
    const owner = owners.get(name);
    // Two profiles' JSON of one message are two schemas.
    return owner === undefined || owner === use.style ? name : `${name}.${use.name}`;
  };
  const add = (message: DescMessage, use: StyleUse, direction: Direction): string => {
    const name = nameOf(message, use, direction);
    if (name in schemas) return name;
    owners.set(name, use.style);
    schemas[name] = { type: "object" }; // a placeholder against recursion
    const ref: Ref = (m) => ({ $ref: `#/components/schemas/${add(m, use, direction)}` });
    const { style } = use;
    const properties: Json = {};
    const required: string[] = [];
    for (const field of message.fields) {
      if (style.omits?.(field)) continue;
      const derived = fieldSchema(field, ref);
      const { schema, required: always } = style.property?.(field, derived, direction) ?? {
        schema: derived,
        required: false,
      };
      const key = style.propertyName?.(field) ?? field.jsonName;
      if (always) required.push(key);
      // The comment, then what the schema says of itself (a FieldMask's form, a string boolean's).
      const description = [describe(`${message.typeName}.${field.name}`), schema.description]
        .filter(Boolean)
        .join(" ");
      properties[key] = description ? { ...schema, description } : schema;
    }
    const comment = describe(message.typeName);
    const schema: Json = {
      type: "object",
      ...(comment ? { description: comment } : {}),
      properties,
      ...(required.length > 0 ? { required } : {}),
    };
    schemas[name] = style.message?.(message, schema, direction) ?? schema;
    return name;
  };
  return {
    schemas,
    ref: (message, use, direction) => ({
      $ref: `#/components/schemas/${add(message, use, direction)}`,
    }),
  };
}
