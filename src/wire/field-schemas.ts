/**
 * The API's fields as JSON Schema, exactly as the server checks them: what a
 * proto type says too little about (identifiers, group names, subscription
 * Ids, page keys and tokens, request ids, update masks, ranges). Both
 * profiles' parts of `/openapi.json` use them: the legacy paths
 * (src/legacy/openapi.ts) and the resource API (src/http/openapi.ts), so a
 * field is described one way wherever it travels, and the fuzz run
 * (test/fuzz) judges the server by it.
 */
import {
  type DescField,
  type DescMessage,
  getOption,
  hasOption,
  isFieldSet,
  ScalarType,
} from "@bufbuild/protobuf";
import { FeatureSet_FieldPresence } from "@bufbuild/protobuf/wkt";
import { IntegerRangeSchema, integer_range } from "../../gen/docflow/legacy/options_pb";
import { FieldBehavior, field_behavior } from "../../gen/google/api/field_behavior_pb";
import { GROUP_NAME_PATTERN, MAX_GROUP_NAME_LENGTH } from "../domain/counteragent-groups";
import { MAX_INDEX_KEY_LENGTH } from "../domain/index-key";
import { DEFAULT_GROUP_ID } from "../domain/model";
import { SUBSCRIPTION_CATALOG } from "../domain/subscriptions";
import { ID_MAX_LENGTH, ID_PATTERN } from "../domain/validate";

/** A JSON Schema (or any JSON object of the document). */
export type Json = Record<string, unknown>;

/**
 * An identifier (boxId, userId, messageId, …), as `src/domain/validate.ts`
 * checks it on every protocol: 1–256 characters (code points), not blank, no
 * control character (C0, DEL, C1). Every string query parameter is one.
 */
export const IDENTIFIER: Json = {
  type: "string",
  minLength: 1,
  maxLength: ID_MAX_LENGTH,
  pattern: ID_PATTERN,
  description:
    "An identifier: 1 to 256 characters, not only white space, no control character (U+0000–U+001F, U+007F–U+009F).",
};

/** A counteragent group's Name, as `src/domain/counteragent-groups.ts` checks it. */
const GROUP_NAME: Json = {
  type: "string",
  pattern: GROUP_NAME_PATTERN,
  description: `1 to ${MAX_GROUP_NAME_LENGTH} characters after trimming white space at both ends, no control character (U+0000–U+001F, U+007F–U+009F); unique within the box, compared case-insensitively.`,
};

/**
 * Fields the proto type says too little about, by full name: each one's schema
 * (the one derived from its type, passed in) refined to what the server
 * accepts, exactly.
 */
const FIELD_SCHEMAS: Readonly<Record<string, (derived: Json) => Json>> = {
  // src/domain/subscriptions.ts: any other Id is a 400 (Subscriptions.UnknownId).
  "docflow.legacy.Subscription.Id": () => ({ type: "string", enum: [...SUBSCRIPTION_CATALOG] }),
  // An Id listed twice is a 400 (Subscriptions.DuplicateId): each Id at most once.
  "docflow.legacy.SubscriptionsToUpdate.Subscriptions": (derived) => ({
    ...derived,
    maxItems: SUBSCRIPTION_CATALOG.length,
    allOf: SUBSCRIPTION_CATALOG.map((id) => ({
      contains: { type: "object", properties: { Id: { const: id } }, required: ["Id"] },
      minContains: 0,
      maxContains: 1,
    })),
  }),
  // src/domain/counteragent-groups.ts: 1–100 characters after trimming, no control character.
  "docflow.legacy.CounteragentGroupToCreate.Name": () => GROUP_NAME,
  "docflow.legacy.CounteragentGroupToUpdate.Name": () => GROUP_NAME,
  // Each one an identifier (whether the box has the department is for the server to say).
  "docflow.legacy.DepartmentsInGroup.DepartmentIds": (derived) => ({
    ...derived,
    items: IDENTIFIER,
  }),
  // Update and Delete of the default group are a 400 (CounteragentGroup.DefaultGroup).
  "docflow.api.v1.UpdateCounteragentGroupRequest.counteragent_group_id": notTheDefaultGroup,
  "docflow.api.v1.DeleteCounteragentGroupRequest.counteragent_group_id": notTheDefaultGroup,
  // src/domain/index-key.ts: base64url of at least 16 bytes, at most
  // MAX_INDEX_KEY_LENGTH; a key the server did not issue for this box and group is still a 400.
  // AIP-158 (docs/api.md §3.1): the same kind of key, "" for the first page; a size of
  // 0 is the default and one over the most is the most (coerced, never refused).
  "docflow.api.v1.GetCounteragentsFromGroupRequest.page_token": () => PAGE_TOKEN,
  "docflow.api.v1.GetCounteragentGroupsRequest.page_token": () => PAGE_TOKEN,
  "docflow.api.v1.GetCounteragentsFromGroupRequest.page_size": () => PAGE_SIZE,
  "docflow.api.v1.GetCounteragentGroupsRequest.page_size": () => PAGE_SIZE,
  // AIP-155: a UUID, or "" for none.
  "docflow.api.v1.CreateCounteragentGroupRequest.request_id": () => ({
    type: "string",
    pattern: `^(${UUID})?$`,
    description: "A UUID you choose for this create (AIP-155); empty: none.",
  }),
  // AIP-134: paths named without case (FieldMask's JSON form is lowerCamelCase, comma-separated).
  "docflow.api.v1.UpdateCounteragentGroupRequest.update_mask": () => ({
    type: "string",
    pattern: `^(${MASK_PATH}(,${MASK_PATH})*)?$`,
    description:
      "The fields of the body to write: name, groupDepartments or * (any case), comma-separated; empty: the body's fields. A named field the body leaves out is cleared (a Name cannot be: 400).",
  }),
  "docflow.api.v1.GetCounteragentsFromGroupRequest.after_index_key": () => ({
    type: "string",
    minLength: 22,
    maxLength: MAX_INDEX_KEY_LENGTH,
    pattern: "^[A-Za-z0-9_-]+$",
    description:
      "AfterIndexKey exactly as a page of the same box and group returned it; any other value, even of this shape, is a 400.",
  }),
};

const PAGE_TOKEN: Json = {
  type: "string",
  maxLength: MAX_INDEX_KEY_LENGTH,
  pattern: "^([A-Za-z0-9_-]{22,})?$",
  description:
    "nextPageToken exactly as the previous page of the same list (box, group) returned it; empty: the first page. Any other value, even of this shape, is a 400.",
};

const PAGE_SIZE: Json = {
  type: "integer",
  format: "int32",
  minimum: 0,
  maximum: 2_147_483_647,
  description: "The most items on the page: 0 is 100, more than 100 is 100.",
};

const UUID = "[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}";

/** Each letter of `word` in either case: JSON Schema patterns have no flags. */
const anyCase = (word: string) =>
  [...word].map((c) => `[${c.toUpperCase()}${c.toLowerCase()}]`).join("");
const MASK_PATH = `(\\*|${anyCase("name")}|${anyCase("groupdepartments")})`;

/**
 * Messages whose fields constrain one another, by full name: the rule, in
 * prose, added to the request form's description. (A `oneOf` over the
 * properties says it exactly, but generators cannot express it: Python gets a
 * wrapper no value satisfies, TypeScript code that does not compile.)
 */
const INPUT_MESSAGE_RULES: Readonly<Record<string, string>> = {
  // src/domain/counteragent-groups.ts: a 400 CounteragentGroup.InvalidDepartments otherwise.
  "docflow.legacy.CounteragentGroupDepartmentPatch":
    'AnyDepartment "true": Departments absent or with no DepartmentIds; AnyDepartment "false": Departments.DepartmentIds lists at least one department. Anything else is a 400 (X-Service-ErrorCode CounteragentGroup.InvalidDepartments).',
};

function notTheDefaultGroup(derived: Json): Json {
  return {
    ...derived,
    not: { const: DEFAULT_GROUP_ID },
    description:
      `${String(derived.description ?? "")} Not the default group ${DEFAULT_GROUP_ID}.`.trim(),
  };
}

/** `schema` (the one derived from the field's type) refined to what the server takes, or as it is. */
export function exactFieldSchema(field: DescField, schema: Json): Json {
  const refine = FIELD_SCHEMAS[`${field.parent.typeName}.${field.name}`];
  return refine ? refine(schema) : schema;
}

/** `schema` that also admits `null`. */
export function nullable(schema: Json): Json {
  if (schema.type === undefined) return { anyOf: [schema, { type: "null" }] };
  return {
    ...schema,
    type: [...[schema.type].flat(), "null"],
    ...(Array.isArray(schema.enum) ? { enum: [...schema.enum, null] } : {}),
  };
}

/** A request's form of `message`, its rule across fields (INPUT_MESSAGE_RULES) added to its description. */
export function withInputRule(message: DescMessage, schema: Json): Json {
  const rule = INPUT_MESSAGE_RULES[message.typeName];
  if (!rule) return schema;
  return { ...schema, description: [schema.description, rule].filter(Boolean).join("\n\n") };
}

/** `(google.api.field_behavior) = REQUIRED`. */
export function isRequired(field: DescField): boolean {
  return (
    hasOption(field, field_behavior) &&
    getOption(field, field_behavior).includes(FieldBehavior.REQUIRED)
  );
}

/**
 * Whether a request must have a body: its body field is REQUIRED, or the
 * message the body is (`body: "*"`, or the body field's) has a proto2
 * required field. No body is the empty message otherwise.
 */
export function bodyRequired(
  bodyField: DescField | undefined,
  wholeRequest: DescMessage | undefined,
): boolean {
  const message =
    wholeRequest ?? (bodyField?.fieldKind === "message" ? bodyField.message : undefined);
  return (
    (bodyField !== undefined && isRequired(bodyField)) ||
    (message?.fields.some((f) => f.presence === FeatureSet_FieldPresence.LEGACY_REQUIRED) ?? false)
  );
}

/**
 * A path or query parameter's schema: a string is an identifier unless the
 * field has a rule of its own, a floating-point number any finite number
 * (query.ts reads it with Number() and refuses what is not finite), an
 * integer within its `(docflow.legacy.integer_range)`.
 */
export function parameterSchema(field: DescField, derived: Json): Json {
  const isString = field.fieldKind === "scalar" && field.scalar === ScalarType.STRING;
  const isFloating =
    field.fieldKind === "scalar" &&
    (field.scalar === ScalarType.DOUBLE || field.scalar === ScalarType.FLOAT);
  const schema: Json = {
    ...exactFieldSchema(field, isString ? IDENTIFIER : isFloating ? { type: "number" } : derived),
  };
  if (hasOption(field, integer_range)) {
    const range = getOption(field, integer_range);
    if (isFieldSet(range, IntegerRangeSchema.field.min)) schema.minimum = Number(range.min);
    if (isFieldSet(range, IntegerRangeSchema.field.max)) schema.maximum = Number(range.max);
    if (isFieldSet(range, IntegerRangeSchema.field.default)) schema.default = Number(range.default);
  }
  return schema;
}
