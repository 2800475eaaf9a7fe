/**
 * The legacy paths in the OpenAPI document: the legacy profile's style
 * (`OpenApiStyle`, src/transcoder/openapi.ts), what its bindings look like
 * where they differ from the JSON profile's. The one builder derives every
 * schema by the one type mapping; this style says the rest, as the legacy
 * profile serves it (docs/api.md §3):
 * - legacy JSON: proto field names, `(docflow.legacy.json_string)` booleans
 *   as the strings "true"/"false", every field always written (so
 *   `required` in answers), requests that may say `null` for an absent
 *   field: a request's form of a message is a component of its own;
 * - the query: the request's scalar and enum fields by JSON name, each a
 *   validated identifier or number, an empty value meaning absent;
 * - bodies and answers as JSON or binary protobuf (no Content-Type needed);
 * - errors: every status of the error table an operation may answer, as
 *   problem+json or text, with X-Service-ErrorCode (and Retry-After,
 *   WWW-Authenticate, Allow where the server sends them);
 * - the proto comments, and the domain's own rules (identifiers, group
 *   names, subscription Ids, index keys), as schemas.
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
import {
  http_errors,
  IntegerRangeSchema,
  integer_range,
  json_string,
} from "../../gen/docflow/legacy/options_pb";
import { FieldBehavior, field_behavior } from "../../gen/google/api/field_behavior_pb";
import { GROUP_NAME_PATTERN, MAX_GROUP_NAME_LENGTH } from "../domain/counteragent-groups";
import { MAX_INDEX_KEY_LENGTH } from "../domain/index-key";
import { DEFAULT_GROUP_ID } from "../domain/model";
import { SUBSCRIPTION_CATALOG } from "../domain/subscriptions";
import { ID_MAX_LENGTH, ID_PATTERN } from "../domain/validate";
import type { Direction, Json } from "../transcoder/openapi";
import type { OpenApiStyle, Profile } from "../transcoder/profile";
import type { Binding } from "../transcoder/rules";
import { MAX_REQUEST_BYTES } from "../wire/body";
import { HTTP_ERRORS } from "../wire/errors";
import { notOnLegacyPaths, queryAliases, queryFields } from "./query";

/**
 * What every legacy operation may answer besides its own errors (docs/api.md
 * §4), in the error table's words; methods add or refine with
 * `(docflow.legacy.http_errors)`.
 */
const COMMON_ERRORS: Readonly<Record<number, string>> = Object.fromEntries(
  ([400, 401, 402, 403, 405, 429, 500, 503] as const).map((status) => [
    status,
    HTTP_ERRORS[status].described,
  ]),
);

/**
 * An identifier (boxId, userId, messageId, …), as `src/domain/validate.ts`
 * checks it on every protocol: 1–256 characters (code points), not blank, no
 * control character (C0, DEL, C1). Every string query parameter is one.
 */
const IDENTIFIER: Json = {
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
  "docflow.api.v1.GetCounteragentsFromGroupRequest.after_index_key": () => ({
    type: "string",
    minLength: 22,
    maxLength: MAX_INDEX_KEY_LENGTH,
    pattern: "^[A-Za-z0-9_-]+$",
    description:
      "AfterIndexKey exactly as a page of the same box and group returned it; any other value, even of this shape, is a 400.",
  }),
};

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

/** `schema` refined by FIELD_SCHEMAS, or as it is. */
function refined(field: DescField, schema: Json): Json {
  const refine = FIELD_SCHEMAS[`${field.parent.typeName}.${field.name}`];
  return refine ? refine(schema) : schema;
}

/** The legacy profile's bindings in the OpenAPI document. */
export const LEGACY_OPENAPI: OpenApiStyle = {
  components: {
    schemas: {
      Problem: {
        type: "object",
        description: "An error, for clients that asked for JSON (RFC 9457).",
        properties: {
          type: { type: "string" },
          title: { type: "string" },
          status: { type: "integer" },
          detail: { type: "string", description: "Short, human-readable message." },
          errorCode: {
            type: "string",
            description: "Machine-readable code, as in X-Service-ErrorCode.",
          },
        },
        required: ["type", "title", "status", "detail", "errorCode"],
      },
    },
    headers: {
      "WWW-Authenticate": {
        description:
          'On every 401: the scheme(s) to use, e.g. `ServiceAuth realm="docflow-api", Bearer realm="docflow-api"` with no credentials, or `Bearer realm="docflow-api", error="invalid_token"`. On a 403 for a Bearer token without the required scope: `error="insufficient_scope"`.',
        schema: { type: "string" },
      },
      "X-Service-ErrorCode": {
        description:
          "Machine-readable error code, e.g. Http.Unauthorized or Restore.AlreadyRestored.",
        schema: { type: "string" },
      },
    },
  },
  // A string boolean is read as a string or a boolean but written as a
  // string, and a field that is not required may be null on input (proto
  // JSON: the field is absent).
  directional: true,
  // Legacy JSON writes the proto names (legacy-json.ts: useProtoFieldName).
  propertyName: (field) => field.name,
  omits: notOnLegacyPaths,
  property(field, derived, direction) {
    let schema = refined(field, stringBoolean(field, derived, direction));
    const required =
      field.presence === FeatureSet_FieldPresence.LEGACY_REQUIRED ||
      (direction === "output" && alwaysWritten(field));
    if (!required && direction === "input") schema = nullable(schema);
    return { schema, required };
  },
  message(message, schema, direction) {
    const rule = direction === "input" ? INPUT_MESSAGE_RULES[message.typeName] : undefined;
    if (!rule) return schema;
    return { ...schema, description: [schema.description, rule].filter(Boolean).join("\n\n") };
  },
  queryFields: (binding) => queryFields(binding.method.input, binding.body),
  queryParameters,
  requestBody(binding, json) {
    const { bodyField } = binding;
    const message =
      binding.body === "*"
        ? binding.method.input
        : bodyField?.fieldKind === "message"
          ? bodyField.message
          : undefined;
    if (!message) return undefined;
    // No body is binary protobuf of zero bytes, the empty message (an empty list): fine
    // unless the message has a required field, or the body field is marked REQUIRED.
    const required =
      message.fields.some((f) => f.presence === FeatureSet_FieldPresence.LEGACY_REQUIRED) ||
      (bodyField !== undefined && isRequired(bodyField));
    return {
      required,
      description: `${message.name}: JSON when Content-Type is application/json, otherwise binary protobuf (also with no Content-Type).${required ? "" : " No body at all is the empty message."}`,
      content: {
        "application/json": { schema: json() },
        "application/x-protobuf": { schema: binary(message) },
      },
    };
  },
  answer(binding, json) {
    const output = binding.method.output;
    if (output.fields.length === 0) {
      return { description: "Done. The body is empty (Content-Length: 0)." };
    }
    return {
      description: `${output.name}: JSON when Accept contains application/json, otherwise binary protobuf.`,
      content: {
        "application/json": { schema: json() },
        "application/x-protobuf": { schema: binary(output) },
      },
    };
  },
  errors,
};

function errors(binding: Binding<Profile>): Record<string, Json> {
  const described: Record<number, string> = { ...COMMON_ERRORS };
  if (binding.body !== "") {
    described[413] = `The request body is larger than ${MAX_REQUEST_BYTES} bytes.`;
  }
  if (hasOption(binding.method, http_errors)) {
    for (const e of getOption(binding.method, http_errors)) {
      described[e.status] = e.description;
    }
  }
  const out: Record<string, Json> = {};
  for (const [status, description] of Object.entries(described).sort(
    ([a], [b]) => Number(a) - Number(b),
  )) {
    out[status] = {
      description,
      headers: {
        "X-Service-ErrorCode": { $ref: "#/components/headers/X-Service-ErrorCode" },
        ...(status === "401" || status === "403"
          ? { "WWW-Authenticate": { $ref: "#/components/headers/WWW-Authenticate" } }
          : {}),
        ...(status === "405"
          ? { Allow: { description: "The method to use.", schema: { type: "string" } } }
          : {}),
        ...(status === "429" || status === "503"
          ? {
              "Retry-After": {
                description: "Seconds to wait before trying again (add jitter).",
                schema: { type: "integer", minimum: 1 },
              },
            }
          : {}),
      },
      // problem+json first: generators type the error body by the first media type.
      content: {
        "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } },
        "text/plain": {
          schema: {
            type: "string",
            description: "The same message as detail, for clients that did not ask for JSON.",
          },
        },
      },
    };
  }
  return out;
}

function binary(message: DescMessage): Json {
  return {
    type: "string",
    contentMediaType: "application/x-protobuf",
    description: `Binary protobuf ${message.typeName} (see the proto files).`,
  };
}

/** `(google.api.field_behavior) = REQUIRED`. */
function isRequired(field: DescField): boolean {
  return (
    hasOption(field, field_behavior) &&
    getOption(field, field_behavior).includes(FieldBehavior.REQUIRED)
  );
}

/**
 * A field's query parameter as query.ts reads it, then one deprecated
 * parameter for each other name it is accepted under.
 */
function queryParameters(field: DescField, derived: Json, comment: string | undefined): Json[] {
  const own = queryParameter(field, derived, comment);
  return [
    own,
    ...queryAliases(field).map((alias) => ({
      ...own,
      name: alias,
      description: `Another name for ${field.jsonName}, which older SDKs send; given with ${field.jsonName}, the two must agree.`,
      deprecated: true,
    })),
  ];
}

/** A query parameter as query.ts reads it. */
function queryParameter(field: DescField, derived: Json, comment: string | undefined): Json {
  const required = isRequired(field);
  const isString = field.fieldKind === "scalar" && field.scalar === ScalarType.STRING;
  const isFloating =
    field.fieldKind === "scalar" &&
    (field.scalar === ScalarType.DOUBLE || field.scalar === ScalarType.FLOAT);
  // query.ts reads a number with Number() and refuses what is not finite: no "NaN" here.
  const schema: Json = {
    ...refined(field, isString ? IDENTIFIER : isFloating ? { type: "number" } : derived),
  };
  if (hasOption(field, integer_range)) {
    const range = getOption(field, integer_range);
    if (isFieldSet(range, IntegerRangeSchema.field.min)) schema.minimum = Number(range.min);
    if (isFieldSet(range, IntegerRangeSchema.field.max)) schema.maximum = Number(range.max);
    if (isFieldSet(range, IntegerRangeSchema.field.default)) schema.default = Number(range.default);
  }
  // An empty value (or a bare key) means absent: fine for an optional
  // parameter, a 400 for a required one. (allowEmptyValue said so, but 3.1
  // deprecates it.)
  const description = [comment, required ? "" : "An empty value means absent."]
    .filter(Boolean)
    .join(" ");
  return {
    name: field.jsonName,
    in: "query",
    required,
    ...(description ? { description } : {}),
    schema,
  };
}

/**
 * A `(docflow.legacy.json_string)` bool (or list of them): written as the
 * string "true" or "false"; read as that string or a JSON boolean. Input
 * declares the strings only: a type mixing strings and booleans breaks
 * generators (Python: an enum class that does not import).
 */
function stringBoolean(field: DescField, derived: Json, direction: Direction): Json {
  if (!(hasOption(field, json_string) && getOption(field, json_string))) return derived;
  const strings: Json =
    direction === "output"
      ? { type: "string", enum: ["true", "false"] }
      : {
          type: "string",
          enum: ["true", "false"],
          description:
            'The string "true" or "false"; the JSON booleans true and false are accepted too.',
        };
  return field.fieldKind === "list" ? { ...derived, items: strings } : strings;
}

/**
 * A field every answer carries, set or not: lists, maps and fields without
 * presence, which legacy JSON writes empty or zero (`alwaysEmitImplicit`).
 */
function alwaysWritten(field: DescField): boolean {
  return (
    field.fieldKind === "list" ||
    field.fieldKind === "map" ||
    field.presence === FeatureSet_FieldPresence.IMPLICIT
  );
}

/** `schema` that also admits `null`. */
function nullable(schema: Json): Json {
  if (schema.type === undefined) return { anyOf: [schema, { type: "null" }] };
  return {
    ...schema,
    type: [...[schema.type].flat(), "null"],
    ...(Array.isArray(schema.enum) ? { enum: [...schema.enum, null] } : {}),
  };
}
