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
import { type DescField, type DescMessage, getOption, hasOption } from "@bufbuild/protobuf";
import { FeatureSet_FieldPresence } from "@bufbuild/protobuf/wkt";
import { http_errors, json_string } from "../../gen/docflow/legacy/options_pb";
import type { Direction, Json } from "../transcoder/openapi";
import type { OpenApiStyle, Profile } from "../transcoder/profile";
import type { Binding } from "../transcoder/rules";
import { MAX_REQUEST_BYTES } from "../wire/body";
import { HTTP_ERRORS } from "../wire/errors";
import {
  bodyRequired,
  exactFieldSchema,
  isRequired,
  nullable,
  parameterSchema,
  withInputRule,
} from "../wire/field-schemas";
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
    let schema = exactFieldSchema(field, stringBoolean(field, derived, direction));
    const required =
      field.presence === FeatureSet_FieldPresence.LEGACY_REQUIRED ||
      (direction === "output" && alwaysWritten(field));
    if (!required && direction === "input") schema = nullable(schema);
    return { schema, required };
  },
  message: (message, schema, direction) =>
    direction === "input" ? withInputRule(message, schema) : schema,
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
    const required = bodyRequired(bodyField, binding.body === "*" ? message : undefined);
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
  const schema = parameterSchema(field, derived);
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
