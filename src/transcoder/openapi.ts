/**
 * OpenAPI 3.1 for the bindings the JSON profile serves, from the same
 * compiled bindings the route table holds: what is described is what is
 * served.
 * - A path template becomes an OpenAPI path: a single-segment variable is a
 *   path parameter named by its field path (`{book.name}`); a variable with a
 *   sub-pattern is written out, each of its `*` a parameter of its own
 *   (`{name=shelves/*}` → `shelves/{name.1}`), since a client would encode
 *   the "/" of one parameter; a `**` is one parameter whose "/" must go
 *   unencoded (said in its description).
 * - Query parameters: every field the path and the body leave, by its JSON
 *   field path, nested messages flattened (up to a depth), repeated fields
 *   as arrays (`explode`).
 * - Bodies and answers in proto3 JSON; `response_body` as that field;
 *   google.api.HttpBody as any content type; server streams as NDJSON or SSE.
 * - Errors: google.rpc.Status in Google's JSON (status.ts).
 */
import { type DescField, type DescMessage, ScalarType } from "@bufbuild/protobuf";
import type { Profile } from "./json-profile";
import { type Binding, HTTP_BODY } from "./rules";
import type { Segment } from "./template";

type Json = Record<string, unknown>;

/** How deep query parameters follow nested messages. */
const QUERY_DEPTH = 3;

export interface OpenApiPaths {
  readonly paths: Record<string, Record<string, Json>>;
  readonly schemas: Record<string, Json>;
}

/** The paths and schemas of `bindings`; `describe` gives a proto element's comment by full name. */
export function openApiPaths(
  bindings: readonly Binding<Profile>[],
  describe: (name: string) => string | undefined = () => undefined,
): OpenApiPaths {
  const schemas: Record<string, Json> = { "google.rpc.Status": STATUS_SCHEMA };
  const ref = (message: DescMessage): Json => {
    addMessage(message, schemas, describe);
    return { $ref: `#/components/schemas/${message.typeName}` };
  };
  const paths: Record<string, Record<string, Json>> = {};
  // OpenAPI holds paths that differ only in their parameters' names to be one
  // path: a later binding takes the names the first one gave (by position).
  const byShape = new Map<string, { path: string; names: string[] }>();
  for (const binding of bindings) {
    const { method } = binding;
    let { path, parameters } = pathOf(binding);
    const names = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string);
    const shape = path.replace(/\{[^}]+\}/g, "{}");
    const first = byShape.get(shape);
    if (!first) byShape.set(shape, { path, names });
    else if (first.path !== path) {
      const rename = new Map(names.map((n, i) => [n, first.names[i] as string]));
      path = first.path;
      parameters = parameters.map((p) => ({ ...p, name: rename.get(p.name as string) ?? p.name }));
    }
    const rpc = `${method.parent.typeName}.${method.name}`;
    const query =
      binding.body === "*" ? [] : queryParameters(method.input, binding.bound, "", "", 0, describe);
    const operation: Json = {
      operationId: binding.index === 0 ? method.name : `${method.name}${binding.index + 1}`,
      summary: firstSentence(describe(rpc)) ?? method.name,
      ...(describe(rpc) ? { description: describe(rpc) } : {}),
      tags: [method.parent.name],
      "x-rpc": `/${method.parent.typeName}/${method.name}`,
      parameters: [...parameters, ...query],
      responses: {
        "200": answerOf(binding, ref),
        default: {
          description: "An error, as google.rpc.Status in Google's JSON.",
          content: {
            "application/json": { schema: { $ref: "#/components/schemas/google.rpc.Status" } },
          },
        },
      },
    };
    const body = requestBodyOf(binding, ref);
    if (body) operation.requestBody = body;
    const item = paths[path] ?? {};
    const verb = binding.httpMethod.toLowerCase();
    if (STANDARD_VERBS.has(verb)) item[verb] = operation;
    else item[`x-${verb}`] = operation; // OpenAPI has no field for a custom method
    paths[path] = item;
  }
  return { paths, schemas };
}

const STANDARD_VERBS = new Set([
  "get",
  "put",
  "post",
  "delete",
  "options",
  "head",
  "patch",
  "trace",
]);

function firstSentence(text: string | undefined): string | undefined {
  if (!text) return undefined;
  const end = text.search(/\.(\s|$)/);
  return (end < 0 ? text : text.slice(0, end + 1)).replace(/\s+/g, " ").trim();
}

/** The OpenAPI path of a template, and its path parameters. */
function pathOf(binding: Binding<Profile>): { path: string; parameters: Json[] } {
  const { template } = binding;
  const parts: string[] = [];
  const parameters: Json[] = [];
  const param = (name: string, description: string, field: DescField | undefined) =>
    parameters.push({
      name,
      in: "path",
      required: true,
      description,
      schema: field ? scalarOrEnum(field) : { type: "string" },
    });
  const literal = (s: Segment) => (s.kind === "literal" ? s.text : undefined);
  let at = 0;
  template.variables.forEach((v, i) => {
    for (const s of template.segments.slice(at, v.start))
      parts.push(literal(s) ?? `{_${parts.length}}`);
    const name = v.fieldPath.join(".");
    const field = binding.pathFields[i]?.at(-1);
    const inner = template.segments.slice(v.start, v.end);
    if (!v.multiSegment) {
      parts.push(`{${name}}`);
      param(name, `Sets ${name}.`, field);
    } else {
      let n = 0;
      for (const s of inner) {
        if (s.kind === "literal") parts.push(s.text);
        else {
          n++;
          const part = `${name}.${n}`;
          parts.push(`{${part}}`);
          param(
            part,
            s.kind === "**"
              ? `Part ${n} of ${name} (${inner.map((x) => (x.kind === "literal" ? x.text : x.kind)).join("/")}): the rest of the path; its "/" are sent as they are.`
              : `Part ${n} of ${name} (${inner.map((x) => (x.kind === "literal" ? x.text : x.kind)).join("/")}).`,
            undefined,
          );
        }
      }
    }
    at = v.end;
  });
  for (const s of template.segments.slice(at)) {
    const text = literal(s);
    if (text !== undefined) parts.push(text);
    else {
      const name = `_${parts.length}`;
      parts.push(`{${name}}`);
      param(name, s.kind === "**" ? "Any rest of the path." : "Any one segment.", undefined);
    }
  }
  const verb = template.verb === undefined ? "" : `:${template.verb}`;
  return { path: `/${parts.join("/")}${verb}`, parameters };
}

function queryParameters(
  message: DescMessage,
  bound: ReadonlySet<string>,
  protoPrefix: string,
  jsonPrefix: string,
  depth: number,
  describe: (name: string) => string | undefined,
): Json[] {
  const out: Json[] = [];
  for (const field of message.fields) {
    const protoPath = protoPrefix === "" ? field.name : `${protoPrefix}.${field.name}`;
    if (bound.has(protoPath)) continue;
    const name = jsonPrefix === "" ? field.jsonName : `${jsonPrefix}.${field.jsonName}`;
    const description = describe(`${message.typeName}.${field.name}`);
    const param = (schema: Json, explode = false) =>
      out.push({
        name,
        in: "query",
        ...(description ? { description } : {}),
        schema,
        ...(explode ? { style: "form", explode: true } : {}),
      });
    if (field.fieldKind === "scalar" || field.fieldKind === "enum") param(scalarOrEnum(field));
    else if (field.fieldKind === "list" && field.listKind !== "message") {
      param({ type: "array", items: itemSchema(field) }, true);
    } else if (field.fieldKind === "message") {
      const wkt = WELL_KNOWN[field.message.typeName];
      if (wkt) param(wkt);
      else if (depth < QUERY_DEPTH && field.message.typeName !== HTTP_BODY) {
        out.push(...queryParameters(field.message, bound, protoPath, name, depth + 1, describe));
      }
    }
  }
  return out;
}

function requestBodyOf(binding: Binding<Profile>, ref: (m: DescMessage) => Json): Json | undefined {
  if (binding.body === "") return undefined;
  if (binding.httpBodyRequest) {
    return {
      content: {
        "*/*": { schema: { type: "string", contentMediaType: "application/octet-stream" } },
      },
    };
  }
  const field = binding.bodyField;
  const schema = field ? fieldSchema(field, ref) : ref(binding.method.input);
  const description =
    binding.body === "*" && binding.bound.size > 0
      ? `Every field but ${[...binding.bound].join(", ")}, which the path sets.`
      : undefined;
  return {
    required: false,
    ...(description ? { description } : {}),
    content: { "application/json": { schema } },
  };
}

function answerOf(binding: Binding<Profile>, ref: (m: DescMessage) => Json): Json {
  if (binding.httpBodyResponse) {
    return {
      description: "The response's google.api.HttpBody: its content type and bytes.",
      content: {
        "*/*": { schema: { type: "string", contentMediaType: "application/octet-stream" } },
      },
    };
  }
  const schema = binding.responseField
    ? fieldSchema(binding.responseField, ref)
    : ref(binding.method.output);
  if (binding.method.methodKind === "server_streaming") {
    return {
      description:
        'A stream: one JSON message a line, or Server-Sent Events when Accept asks for text/event-stream; an error ends it as {"error": …}.',
      content: {
        // OpenAPI 3.2 calls it itemSchema; 3.1 has no field for it.
        "application/x-ndjson": { "x-itemSchema": schema, schema: { type: "string" } },
        "text/event-stream": { schema: { type: "string" } },
      },
    };
  }
  return { description: "OK", content: { "application/json": { schema } } };
}

const INT64 = new Set([
  ScalarType.INT64,
  ScalarType.UINT64,
  ScalarType.SINT64,
  ScalarType.FIXED64,
  ScalarType.SFIXED64,
]);

function scalarSchema(type: ScalarType): Json {
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
    default:
      return INT64.has(type)
        ? {
            type: "string",
            format: type === ScalarType.UINT64 || type === ScalarType.FIXED64 ? "uint64" : "int64",
          }
        : {
            type: "integer",
            format: type === ScalarType.UINT32 || type === ScalarType.FIXED32 ? "uint32" : "int32",
          };
  }
}

function scalarOrEnum(field: DescField): Json {
  if (field.fieldKind === "enum")
    return { type: "string", enum: field.enum.values.map((v) => v.name) };
  if (field.fieldKind === "scalar") return scalarSchema(field.scalar);
  return { type: "string" };
}

function itemSchema(field: DescField & { fieldKind: "list" }): Json {
  if (field.listKind === "enum")
    return { type: "string", enum: field.enum.values.map((v) => v.name) };
  if (field.listKind === "scalar") return scalarSchema(field.scalar);
  return {};
}

const WELL_KNOWN: Readonly<Record<string, Json>> = {
  "google.protobuf.Timestamp": { type: "string", format: "date-time" },
  "google.protobuf.Duration": { type: "string", pattern: "^-?[0-9]+(\\.[0-9]{1,9})?s$" },
  "google.protobuf.FieldMask": { type: "string", description: "Field paths, comma-separated." },
  "google.protobuf.BoolValue": { type: "boolean" },
  "google.protobuf.StringValue": { type: "string" },
  "google.protobuf.BytesValue": { type: "string", contentEncoding: "base64" },
  "google.protobuf.Int32Value": { type: "integer", format: "int32" },
  "google.protobuf.UInt32Value": { type: "integer", format: "uint32" },
  "google.protobuf.Int64Value": { type: "string", format: "int64" },
  "google.protobuf.UInt64Value": { type: "string", format: "uint64" },
  "google.protobuf.DoubleValue": { type: "number" },
  "google.protobuf.FloatValue": { type: "number" },
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

function fieldSchema(field: DescField, ref: (m: DescMessage) => Json): Json {
  switch (field.fieldKind) {
    case "scalar":
    case "enum":
      return scalarOrEnum(field);
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
              ? { type: "string", enum: field.enum.values.map((v) => v.name) }
              : scalarSchema(field.scalar),
      };
  }
}

function messageSchema(message: DescMessage, ref: (m: DescMessage) => Json): Json {
  return WELL_KNOWN[message.typeName] ?? MESSAGE_WKT[message.typeName] ?? ref(message);
}

function addMessage(
  message: DescMessage,
  schemas: Record<string, Json>,
  describe: (name: string) => string | undefined,
): void {
  if (schemas[message.typeName]) return;
  const properties: Json = {};
  schemas[message.typeName] = { type: "object", properties };
  const description = describe(message.typeName);
  if (description) schemas[message.typeName] = { ...schemas[message.typeName], description };
  const ref = (m: DescMessage) => {
    addMessage(m, schemas, describe);
    return { $ref: `#/components/schemas/${m.typeName}` };
  };
  for (const field of message.fields) {
    const doc = describe(`${message.typeName}.${field.name}`);
    const schema = fieldSchema(field, ref);
    properties[field.jsonName] = doc ? { ...schema, description: doc } : schema;
  }
}

/** google.rpc.Status as Google's HTTP APIs write it (AIP-193). */
const STATUS_SCHEMA: Json = {
  type: "object",
  properties: {
    error: {
      type: "object",
      properties: {
        code: { type: "integer", description: "The HTTP status." },
        message: { type: "string" },
        status: { type: "string", description: "The google.rpc.Code name, e.g. NOT_FOUND." },
        details: {
          type: "array",
          items: {
            type: "object",
            properties: { "@type": { type: "string" } },
            additionalProperties: {},
          },
        },
      },
      required: ["code", "message", "status"],
    },
  },
  required: ["error"],
};
