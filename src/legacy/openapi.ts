/**
 * The OpenAPI 3.1 document of the legacy HTTP paths, derived from the same
 * `google.api.http` rules the bridge serves, with proto comments as
 * descriptions: an RPC with a rule appears here with no other code.
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
import { MAX_REQUEST_BYTES } from "../wire/body";
import { HTTP_ERRORS } from "../wire/errors";
import type { LegacyRoute } from "./http-rules";
import { queryFields } from "./query";

type Json = Record<string, unknown>;

export interface OpenApiOptions {
  readonly version: string;
  /** Leading proto comments by fully qualified name (gen/proto-comments.ts). */
  readonly comments: Readonly<Record<string, string>>;
  /** The absolute URL of the service, as generated clients call it. */
  readonly serverUrl: string;
}

/** What every legacy operation may answer (docs/api.md §4); methods add or refine with `(docflow.legacy.http_errors)`. */
/** What every legacy operation may answer besides its own errors: the error table's words. */
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

export function buildOpenApi(routes: readonly LegacyRoute[], options: OpenApiOptions): Json {
  const schemas: Json = {
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
  };
  const describe = (name: string) => options.comments[name];
  const outputs = new Set<string>();
  for (const route of routes) collectMessages(route.method.output, outputs);
  const components: Components = { schemas, describe, outputs };
  const ref = (message: DescMessage, direction: Direction = "output") => ({
    $ref: `#/components/schemas/${addSchema(message, components, direction)}`,
  });

  const paths: Record<string, Json> = {};
  for (const route of routes) {
    const { method } = route;
    const rpc = `${method.parent.typeName}.${method.name}`;
    const parameters = queryFields(method.input, route.body).map((field) =>
      queryParameter(field, describe),
    );
    const operation: Json = {
      operationId: method.name,
      summary: summaryOf(describe(rpc)) ?? method.name,
      ...(describe(rpc) ? { description: describe(rpc) } : {}),
      tags: [method.parent.name],
      "x-rpc": `/${method.parent.typeName}/${method.name}`,
      parameters,
      responses: responses(route, ref),
    };
    if (route.body !== "") {
      const bodyField = method.input.fields.find((f) => f.name === route.body);
      const bodySchema = route.body === "*" ? method.input : bodyField?.message;
      if (bodySchema) {
        // No body is binary protobuf of zero bytes, the empty message (an empty list): fine
        // unless the message has a required field, or the body field is marked REQUIRED.
        const required =
          bodySchema.fields.some((f) => f.presence === FeatureSet_FieldPresence.LEGACY_REQUIRED) ||
          (bodyField !== undefined && isRequired(bodyField));
        operation.requestBody = {
          required,
          description: `${bodySchema.name}: JSON when Content-Type is application/json, otherwise binary protobuf (also with no Content-Type).${required ? "" : " No body at all is the empty message."}`,
          content: {
            "application/json": { schema: ref(bodySchema, "input") },
            "application/x-protobuf": { schema: binary(bodySchema) },
          },
        };
      }
    }
    paths[route.path] = { ...(paths[route.path] ?? {}), [route.verb.toLowerCase()]: operation };
  }

  return {
    openapi: "3.1.0",
    info: {
      title: "docflow-api legacy HTTP API",
      version: options.version,
      description: [
        "The legacy HTTP paths of the electronic document exchange API.",
        "",
        '**Send `Accept: application/json` to get JSON.** Responses are binary protobuf (`application/x-protobuf`) unless `Accept` contains `application/json`; `Accept: */*` and no Accept at all mean protobuf, which is what the existing SDKs expect. A client generated from this document must send that header: the generated Python client does so by itself; with typescript-fetch, set `headers: { Accept: "application/json" }` in its Configuration.',
        "Request bodies are JSON when `Content-Type` is `application/json`, otherwise binary protobuf.",
        'Legacy JSON uses the proto field names (PascalCase); the legacy booleans (`IsSubscribed`, `AnyDepartment`) travel as the string "true" or "false" (JSON booleans are accepted in requests).',
        "A bare or empty query parameter means absent. Success is always 200.",
        "Errors carry the header X-Service-ErrorCode and an application/problem+json body for clients that asked for JSON (a short text otherwise).",
        "The same operations are served over gRPC, Connect and gRPC-Web (see `x-rpc`). For protobuf, generate a client from the service's .proto files rather than from this document.",
      ].join("\n"),
    },
    servers: [{ url: options.serverUrl }],
    // Either scheme, never both in one request (docs/api.md §5.1).
    security: [{ ServiceAuth: [] }, { Bearer: [] }],
    paths,
    components: {
      schemas,
      securitySchemes: {
        ServiceAuth: {
          type: "apiKey",
          in: "header",
          name: "Authorization",
          description:
            "`ServiceAuth svcauth_api_client_id=<API_KEY>, svcauth_token=<ACCESS_TOKEN>` (enter the whole value).",
        },
        Bearer: {
          type: "http",
          scheme: "bearer",
          bearerFormat: "JWT",
          description:
            "An OAuth 2 / OIDC access token (a signed JWT) from the organisation's OpenID provider, as the legacy SDKs send it (Java ≥ 3.27.1, C# ≥ 2.24.0). Accepted where the deployment configures BEARER_ISSUER; never together with ServiceAuth.",
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
  };
}

function responses(route: LegacyRoute, ref: (m: DescMessage) => Json): Json {
  const output = route.method.output;
  const ok: Json =
    output.fields.length === 0
      ? { description: "Done. The body is empty (Content-Length: 0)." }
      : {
          description: `${output.name}: JSON when Accept contains application/json, otherwise binary protobuf.`,
          content: {
            "application/json": { schema: ref(output) },
            "application/x-protobuf": { schema: binary(output) },
          },
        };
  const errors: Record<number, string> = { ...COMMON_ERRORS };
  if (route.body !== "") {
    errors[413] = `The request body is larger than ${MAX_REQUEST_BYTES} bytes.`;
  }
  if (hasOption(route.method, http_errors)) {
    for (const e of getOption(route.method, http_errors)) {
      errors[e.status] = e.description;
    }
  }
  const out: Json = { "200": ok };
  for (const [status, description] of Object.entries(errors).sort(
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

/** The first sentence of a proto comment, on one line. */
export function summaryOf(comment: string | undefined): string | undefined {
  const text = comment?.replace(/\s+/g, " ").trim();
  if (!text) return undefined;
  const end = text.search(/\.(?:\s|$)/);
  return end < 0 ? text : text.slice(0, end + 1);
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

function queryParameter(field: DescField, describe: (name: string) => string | undefined): Json {
  const required = isRequired(field);
  const isString = field.fieldKind === "scalar" && field.scalar === ScalarType.STRING;
  const schema: Json = { ...refined(field, isString ? IDENTIFIER : scalarSchema(field, false)) };
  if (hasOption(field, integer_range)) {
    const range = getOption(field, integer_range);
    if (isFieldSet(range, IntegerRangeSchema.field.min)) schema.minimum = Number(range.min);
    if (isFieldSet(range, IntegerRangeSchema.field.max)) schema.maximum = Number(range.max);
    if (isFieldSet(range, IntegerRangeSchema.field.default)) schema.default = Number(range.default);
  }
  // An empty value (or a bare key) means absent: fine for an optional
  // parameter, a 400 for a required one. (allowEmptyValue said so, but 3.1
  // deprecates it.)
  const description = [
    describe(`${field.parent.typeName}.${field.name}`),
    required ? "" : "An empty value means absent.",
  ]
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

function scalarSchema(
  field: DescField,
  legacyJson: boolean,
  direction: Direction = "output",
): Json {
  if (field.fieldKind === "enum") {
    return { type: "string", enum: field.enum.values.map((v) => v.name) };
  }
  if (field.fieldKind !== "scalar" && field.fieldKind !== "list") return {};
  const scalar =
    field.fieldKind === "scalar"
      ? field.scalar
      : field.listKind === "scalar"
        ? field.scalar
        : undefined;
  switch (scalar) {
    case ScalarType.BOOL:
      if (!(legacyJson && hasOption(field, json_string) && getOption(field, json_string))) {
        return { type: "boolean" };
      }
      // Written as the string "true" or "false"; read as that string or a JSON boolean.
      // Input declares the strings only: a type mixing strings and booleans
      // breaks generators (Python: an enum class that does not import).
      return direction === "output"
        ? { type: "string", enum: ["true", "false"] }
        : {
            type: "string",
            enum: ["true", "false"],
            description:
              'The string "true" or "false"; the JSON booleans true and false are accepted too.',
          };
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
      return { type: "integer", format: "int32" };
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return { type: "integer", format: "int32", minimum: 0 };
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return { type: "string", pattern: "^-?[0-9]+$", format: "int64" };
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return { type: "number" };
    case ScalarType.BYTES:
      return { type: "string", contentEncoding: "base64" };
    default:
      return { type: "string" };
  }
}

/**
 * Requests and responses differ in legacy JSON: a `(docflow.legacy.json_string)`
 * bool is read as a string or a boolean but always written as a string, and a
 * field that is not required may be `null` on input (proto JSON: the field is
 * absent).
 */
type Direction = "input" | "output";

interface Components {
  readonly schemas: Json;
  readonly describe: (name: string) => string | undefined;
  /** Messages that appear in a response (their input form, if any, is named `….Input`). */
  readonly outputs: ReadonlySet<string>;
}

/** `message` and every message it holds, by full name. */
function collectMessages(message: DescMessage, into: Set<string>): void {
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

/**
 * The legacy JSON shape of a message (and of the messages it holds) as a
 * component schema, in one direction; returns the component's name.
 */
function addSchema(message: DescMessage, components: Components, direction: Direction): string {
  const { schemas, describe } = components;
  const name =
    direction === "input" && components.outputs.has(message.typeName)
      ? `${message.typeName}.Input`
      : message.typeName;
  if (name in schemas) return name;
  const properties: Json = {};
  schemas[name] = { type: "object" }; // placeholder against recursion
  const ref = (nested: DescMessage) => ({
    $ref: `#/components/schemas/${addSchema(nested, components, direction)}`,
  });
  const required: string[] = [];
  for (const field of message.fields) {
    let schema: Json;
    if (field.fieldKind === "message") {
      schema = ref(field.message);
    } else if (field.fieldKind === "list") {
      const items =
        field.listKind === "message" ? ref(field.message) : scalarSchema(field, true, direction);
      schema = { type: "array", items };
    } else if (field.fieldKind === "map") {
      schema = { type: "object" };
    } else {
      schema = scalarSchema(field, true, direction);
    }
    schema = refined(field, schema);
    const isRequired = field.presence === FeatureSet_FieldPresence.LEGACY_REQUIRED;
    if (isRequired || (direction === "output" && alwaysWritten(field))) {
      required.push(field.jsonName);
    } else if (direction === "input") {
      schema = nullable(schema);
    }
    const description = [describe(`${message.typeName}.${field.name}`), schema.description]
      .filter(Boolean)
      .join(" ");
    properties[field.jsonName] = description ? { ...schema, description } : schema;
  }
  const comment = describe(message.typeName);
  const schema: Json = {
    type: "object",
    ...(comment ? { description: comment } : {}),
    properties,
    ...(required.length > 0 ? { required } : {}),
  };
  const rule = direction === "input" ? INPUT_MESSAGE_RULES[message.typeName] : undefined;
  schemas[name] = rule
    ? { ...schema, description: [comment, rule].filter(Boolean).join("\n\n") }
    : schema;
  return name;
}
