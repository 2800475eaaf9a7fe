/**
 * Legacy JSON: the proto field names (PascalCase for the legacy messages),
 * and bool fields marked `(docflow.legacy.json_string)` written as "true" /
 * "false" and read as either a string or a JSON boolean. Unknown fields are
 * ignored.
 */

import type { DescField } from "@bufbuild/protobuf";
import {
  type DescMessage,
  fromJson,
  getOption,
  hasOption,
  type JsonObject,
  type JsonValue,
  type MessageShape,
  toJson,
} from "@bufbuild/protobuf";
import { json_string } from "../../gen/docflow/legacy/options_pb";
import { fieldPlans } from "../rpc/field-plan";

export class LegacyJsonError extends Error {
  override readonly name = "LegacyJsonError";
}

export function legacyJsonToMessage<Desc extends DescMessage>(
  schema: Desc,
  text: string,
): MessageShape<Desc> {
  let value: JsonValue;
  try {
    value = JSON.parse(text) as JsonValue;
  } catch {
    throw new LegacyJsonError("the request body is not valid JSON");
  }
  try {
    return fromJson(schema, rewrite(schema, value, readBool), { ignoreUnknownFields: true });
  } catch (error) {
    throw new LegacyJsonError(
      // Stryker disable next-line StringLiteral: fromJson throws only Error objects; the fallback cannot be reached
      `the request body is not a valid ${schema.name}: ${error instanceof Error ? error.message : "bad value"}`,
    );
  }
}

/** The proto field names, every field written (the legacy SDKs expect them all). */
const WRITE_OPTIONS = { alwaysEmitImplicit: true, useProtoFieldName: true } as const;

export function messageToLegacyJson<Desc extends DescMessage>(
  schema: Desc,
  message: MessageShape<Desc>,
): string {
  const value = toJson(schema, message, WRITE_OPTIONS);
  return JSON.stringify(rewrite(schema, value, writeBool));
}

const readBool = (value: JsonValue): JsonValue =>
  value === "true" ? true : value === "false" ? false : value;
const writeBool = (value: JsonValue): JsonValue =>
  // Stryker disable next-line ConditionalExpression: toJson writes a bool field only as a JSON boolean; the check is a guard
  typeof value === "boolean" ? String(value) : value;

const isObject = (value: JsonValue | undefined): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The fields of a message that hold string-bools, directly or deeper; worked out once per schema. */
const planOf = fieldPlans(isStringBool);

/**
 * Applies `convert` to every string-bool field, walking nested messages by the
 * schema, in place: `value` is always a fresh tree of our own (what
 * `JSON.parse` or `toJson` just built), so nothing is copied.
 */
function rewrite(
  schema: DescMessage,
  value: JsonValue,
  convert: (v: JsonValue) => JsonValue,
): JsonValue {
  const plan = planOf(schema);
  // Stryker disable next-line ConditionalExpression: with an empty plan the walk below changes nothing
  if (plan.length === 0 || !isObject(value)) {
    return value;
  }
  for (const field of plan) {
    if (field.name in value) {
      value[field.name] = rewriteField(field, value[field.name] as JsonValue, convert);
    }
    // Stryker disable next-line ConditionalExpression: converting a value twice gives what converting it once does
    if (field.jsonName !== field.name && field.jsonName in value) {
      value[field.jsonName] = rewriteField(field, value[field.jsonName] as JsonValue, convert);
    }
  }
  return value;
}

function rewriteField(
  field: DescField,
  value: JsonValue,
  convert: (v: JsonValue) => JsonValue,
): JsonValue {
  switch (field.fieldKind) {
    case "scalar":
      return convert(value);
    case "message":
      return rewrite(field.message, value, convert);
    case "list":
      if (!Array.isArray(value)) return value;
      for (let i = 0; i < value.length; i++) {
        value[i] =
          field.listKind === "message"
            ? rewrite(field.message, value[i] as JsonValue, convert)
            : convert(value[i] as JsonValue);
      }
      return value;
    case "map":
      // Stryker disable next-line ConditionalExpression,LogicalOperator: only maps to messages are planned (a string-bool is never a map)
      if (!isObject(value) || field.mapKind !== "message") return value;
      // An own "__proto__" key (JSON.parse makes one) is an own data property: assigning it sets it.
      for (const key of Object.keys(value)) {
        value[key] = rewrite(field.message, value[key] as JsonValue, convert);
      }
      return value;
    // Stryker disable next-line ConditionalExpression: enums are never planned; the case is for the type checker
    default:
      return value;
  }
}

/**
 * The option is declared on bool fields (scalar or repeated). On any other
 * field it would change nothing: `rewriteField` converts scalars and lists
 * only, and walks messages as it would anyway.
 */
function isStringBool(field: DescField): boolean {
  return hasOption(field, json_string) && getOption(field, json_string);
}
