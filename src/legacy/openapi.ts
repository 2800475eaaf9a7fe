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
import type { LegacyRoute } from "./http-rules";
import { queryFields } from "./query";

type Json = Record<string, unknown>;

export interface OpenApiOptions {
  readonly version: string;
  /** Leading proto comments by fully qualified name (gen/proto-comments.ts). */
  readonly comments: Readonly<Record<string, string>>;
}

/** What every legacy operation may answer (SPEC §4); methods add or refine with `(docflow.legacy.http_errors)`. */
const COMMON_ERRORS: Readonly<Record<number, string>> = {
  400: "Malformed data, or a missing or invalid parameter. Nothing changes.",
  401: "The Authorization header is missing or wrong: unknown or disabled API client, unknown or expired token.",
  402: "The organization of the box has no remaining API subscription.",
  403: "Access to the box with this token is forbidden (unknown boxes too), or the caller lacks the rights.",
  405: "Wrong HTTP method; the Allow header names the right one.",
  500: "Unexpected processing error.",
};

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
  const ref = (message: DescMessage) => {
    addSchema(message, schemas, describe);
    return { $ref: `#/components/schemas/${message.typeName}` };
  };

  const paths: Record<string, Json> = {};
  for (const route of routes) {
    const { method } = route;
    const rpc = `${method.parent.typeName}.${method.name}`;
    const parameters = queryFields(method.input, route.body).map((field) =>
      queryParameter(field, describe),
    );
    const operation: Json = {
      operationId: method.name,
      summary: method.name,
      ...(describe(rpc) ? { description: describe(rpc) } : {}),
      tags: [method.parent.name],
      "x-rpc": `/${method.parent.typeName}/${method.name}`,
      parameters,
      responses: responses(route, ref),
    };
    if (route.body !== "") {
      const bodySchema =
        route.body === "*"
          ? method.input
          : method.input.fields.find((f) => f.name === route.body)?.message;
      if (bodySchema) {
        operation.requestBody = {
          required: true,
          description: `${bodySchema.name}: JSON when Content-Type is application/json, otherwise binary protobuf (also with no Content-Type).`,
          content: {
            "application/json": { schema: ref(bodySchema) },
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
        "Responses are binary protobuf (`application/x-protobuf`) unless `Accept` contains `application/json`.",
        "Request bodies are JSON when `Content-Type` is `application/json`, otherwise binary protobuf.",
        'Legacy JSON uses the proto field names (PascalCase); `IsSubscribed` travels as the string "true" or "false".',
        "A bare or empty query parameter means absent. Success is always 200.",
        "Errors carry a short text body (or application/problem+json for JSON clients) and the header X-Service-ErrorCode.",
        "The same operations are served over gRPC, Connect and gRPC-Web (see `x-rpc`).",
      ].join("\n"),
    },
    servers: [{ url: "/" }],
    security: [{ ServiceAuth: [] }],
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
      },
      headers: {
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
        ...(status === "405"
          ? { Allow: { description: "The method to use.", schema: { type: "string" } } }
          : {}),
      },
      content: {
        "text/plain": { schema: { type: "string" } },
        "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } },
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

function queryParameter(field: DescField, describe: (name: string) => string | undefined): Json {
  const required =
    hasOption(field, field_behavior) &&
    getOption(field, field_behavior).includes(FieldBehavior.REQUIRED);
  const schema = scalarSchema(field, false);
  if (hasOption(field, integer_range)) {
    const range = getOption(field, integer_range);
    if (isFieldSet(range, IntegerRangeSchema.field.min)) schema.minimum = Number(range.min);
    if (isFieldSet(range, IntegerRangeSchema.field.max)) schema.maximum = Number(range.max);
    if (isFieldSet(range, IntegerRangeSchema.field.default)) schema.default = Number(range.default);
  }
  if (required && schema.type === "string") schema.minLength = 1;
  const comment = describe(`${field.parent.typeName}.${field.name}`);
  return {
    name: field.jsonName,
    in: "query",
    required,
    ...(comment ? { description: comment } : {}),
    schema,
  };
}

function scalarSchema(field: DescField, legacyJson: boolean): Json {
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
      return legacyJson && hasOption(field, json_string) && getOption(field, json_string)
        ? { type: "string", enum: ["true", "false"] }
        : { type: "boolean" };
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

/** The legacy JSON shape of a message (and of the messages it holds) as a component schema. */
function addSchema(
  message: DescMessage,
  schemas: Json,
  describe: (name: string) => string | undefined,
): void {
  if (message.typeName in schemas) return;
  const properties: Json = {};
  schemas[message.typeName] = { type: "object" }; // placeholder against recursion
  const required: string[] = [];
  for (const field of message.fields) {
    let schema: Json;
    if (field.fieldKind === "message") {
      addSchema(field.message, schemas, describe);
      schema = { $ref: `#/components/schemas/${field.message.typeName}` };
    } else if (field.fieldKind === "list") {
      let items: Json;
      if (field.listKind === "message") {
        addSchema(field.message, schemas, describe);
        items = { $ref: `#/components/schemas/${field.message.typeName}` };
      } else {
        items = scalarSchema(field, true);
      }
      schema = { type: "array", items };
    } else if (field.fieldKind === "map") {
      schema = { type: "object" };
    } else {
      schema = scalarSchema(field, true);
    }
    const comment = describe(`${message.typeName}.${field.name}`);
    properties[field.jsonName] = comment ? { ...schema, description: comment } : schema;
    if (field.presence === FeatureSet_FieldPresence.LEGACY_REQUIRED) required.push(field.jsonName);
  }
  const comment = describe(message.typeName);
  schemas[message.typeName] = {
    type: "object",
    ...(comment ? { description: comment } : {}),
    properties,
    ...(required.length > 0 ? { required } : {}),
  };
}
