/**
 * OpenAPI 3.1 for every binding the transcoder serves, from the same compiled
 * bindings the route table holds: what is described is what is served. One
 * builder, one type mapping (openapi-schema.ts); each binding is described
 * as its profile serves it: the JSON profile's as google/api/http.proto says
 * (below), another profile's through the style it brings (`Profile.openApi`:
 * its JSON's names and shapes, body media types, error answers).
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
import type { DescField, DescMessage } from "@bufbuild/protobuf";
import {
  type Components,
  collectMessages,
  createComponents,
  type Direction,
  fieldSchema,
  type Json,
  type StyleUse,
  valueSchema,
  WELL_KNOWN,
} from "./openapi-schema";
import type { OpenApiStyle, Profile } from "./profile";
import { type Binding, HTTP_BODY } from "./rules";
import type { Segment } from "./template";

export type { Direction, Json } from "./openapi-schema";

/** How deep query parameters follow nested messages. */
const QUERY_DEPTH = 3;

export interface OpenApiOptions {
  /** The document's `info` (title, version, description). */
  readonly info: Json;
  /** The server's absolute URL (generators need one). */
  readonly serverUrl: string;
  /** A proto element's leading comment, by full name. */
  readonly describe?: (name: string) => string | undefined;
  /** The security requirements of every operation, and their schemes: the host's authentication. */
  readonly security?: readonly Json[];
  readonly securitySchemes?: Readonly<Record<string, Json>>;
  /**
   * What only the host knows of a binding's operation, applied to it last:
   * its group (tag), its name (operationId), headers its implementation reads
   * or writes.
   */
  readonly refine?: (binding: Binding<Profile>, operation: Json) => void;
  /**
   * The style of the bindings whose profile has none of its own (the JSON
   * profile's), made by `protoJsonStyle`: what only the host knows of its
   * fields (default: proto3 JSON as the types say).
   */
  readonly jsonStyle?: OpenApiStyle;
}

/** A style as this document uses it: the messages of its answers, gathered first. */
interface Use extends StyleUse {
  readonly style: OpenApiStyle;
  readonly outputs: Set<string>;
}

/** The JSON profile's style: proto3 JSON by JSON names, application/json, google.rpc.Status errors. */
const PROTO_JSON: OpenApiStyle = {
  components: { schemas: { "google.rpc.Status": statusSchema() } },
};

/** The JSON profile's style with a host's hooks (its fields' exact schemas, say). */
export function protoJsonStyle(hooks: Omit<OpenApiStyle, "components">): OpenApiStyle {
  return { ...hooks, components: PROTO_JSON.components };
}

/** The document of `bindings`, each described as its profile serves it. */
export function buildOpenApi(bindings: readonly Binding<Profile>[], options: OpenApiOptions): Json {
  const describe = options.describe ?? (() => undefined);
  const components = createComponents(describe);
  const headers: Record<string, Json> = {};
  const uses = new Map<OpenApiStyle, Use>();
  const styleOf = (binding: Binding<Profile>) =>
    binding.profile.openApi ?? options.jsonStyle ?? PROTO_JSON;
  for (const binding of bindings) {
    const style = styleOf(binding);
    let use = uses.get(style);
    if (!use) {
      use = { name: binding.profile.name, style, outputs: new Set<string>() };
      uses.set(style, use);
      Object.assign(components.schemas, style.components?.schemas);
      Object.assign(headers, style.components?.headers);
    }
    collectMessages(binding.method.output, use.outputs);
  }
  const paths: Record<string, Record<string, Json>> = {};
  // OpenAPI holds paths that differ only in their parameters' names to be one
  // path: a later binding takes the names the first one gave (by position).
  const byShape = new Map<string, { path: string; names: string[] }>();
  for (const binding of bindings) {
    const use = uses.get(styleOf(binding)) as Use;
    let { path, parameters } = pathOf(binding, use.style);
    // No "{" inside a variable: each "{" starts one try, which ends at the next brace.
    const names = [...path.matchAll(/\{([^{}]+)\}/g)].map((m) => m[1] as string);
    const shape = path.replace(/\{[^{}]+\}/g, "{}");
    const first = byShape.get(shape);
    if (!first) byShape.set(shape, { path, names });
    else if (first.path !== path) {
      const rename = new Map(names.map((n, i) => [n, first.names[i] as string]));
      path = first.path;
      parameters = parameters.map((p) => ({ ...p, name: rename.get(p.name as string) ?? p.name }));
    }
    const item = paths[path] ?? {};
    const verb = binding.httpMethod.toLowerCase();
    const operation = operationOf(binding, parameters, use, components, describe);
    options.refine?.(binding, operation);
    if (STANDARD_VERBS.has(verb)) item[verb] = operation;
    else item[`x-${verb}`] = operation; // OpenAPI has no field for a custom method
    paths[path] = item;
  }
  return {
    openapi: "3.1.0",
    info: options.info,
    servers: [{ url: options.serverUrl }],
    ...(options.security ? { security: options.security } : {}),
    paths,
    components: {
      schemas: components.schemas,
      ...(options.securitySchemes ? { securitySchemes: options.securitySchemes } : {}),
      ...(Object.keys(headers).length > 0 ? { headers } : {}),
    },
  };
}

function operationOf(
  binding: Binding<Profile>,
  pathParameters: readonly Json[],
  use: Use,
  components: Components,
  describe: (name: string) => string | undefined,
): Json {
  const { method } = binding;
  const { style } = use;
  const ref = (direction: Direction) => (m: DescMessage) => components.ref(m, use, direction);
  const rpc = `${method.parent.typeName}.${method.name}`;
  const query = style.queryFields
    ? style.queryFields(binding).flatMap((field) => {
        const schema = fieldSchema(field, ref("input"));
        const comment = describe(`${field.parent.typeName}.${field.name}`);
        return (
          style.queryParameters?.(field, schema, comment) ?? [
            queryParameter(field.jsonName, schema, comment),
          ]
        );
      })
    : binding.body === "*"
      ? []
      : queryParameters(method.input, binding.bound, "", "", 0, describe, style);
  const operation: Json = {
    operationId: binding.index === 0 ? method.name : `${method.name}${binding.index + 1}`,
    summary: summaryOf(describe(rpc)) ?? method.name,
    ...(describe(rpc) ? { description: describe(rpc) } : {}),
    tags: [method.parent.name],
    "x-rpc": `/${method.parent.typeName}/${method.name}`,
    parameters: [...pathParameters, ...query],
  };
  const answerJson = () =>
    binding.responseField
      ? fieldSchema(binding.responseField, ref("output"))
      : components.ref(method.output, use, "output");
  const answer = style.answer ? style.answer(binding, answerJson) : answerOf(binding, answerJson);
  const created = binding.profile.created?.(binding);
  operation.responses = {
    ...(created
      ? {
          "201": {
            ...(answer as Record<string, Json>),
            description: `Created: the resource as stored; Location names it (the request's path and its ${created.jsonName}).`,
            headers: {
              Location: {
                description: "The created resource's path.",
                schema: { type: "string" },
              },
            },
          },
        }
      : { "200": answer }),
    ...(style.errors ? style.errors(binding) : { default: STATUS_ANSWER }),
  };
  if (binding.body !== "") {
    const bodyJson = () =>
      binding.bodyField
        ? fieldSchema(binding.bodyField, ref("input"))
        : components.ref(method.input, use, "input");
    const body = style.requestBody
      ? style.requestBody(binding, bodyJson)
      : requestBodyOf(binding, bodyJson);
    if (body) operation.requestBody = body;
  }
  return operation;
}

const STATUS_ANSWER: Json = {
  description: "An error, as google.rpc.Status in Google's JSON.",
  content: {
    "application/json": { schema: { $ref: "#/components/schemas/google.rpc.Status" } },
  },
};

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

/** The first sentence of a proto comment, on one line. */
function summaryOf(comment: string | undefined): string | undefined {
  const text = comment?.replace(/\s+/g, " ").trim();
  if (!text) return undefined;
  const end = text.search(/\.(?:\s|$)/);
  return end < 0 ? text : text.slice(0, end + 1);
}

/** The OpenAPI path of a template, and its path parameters. */
function pathOf(
  binding: Binding<Profile>,
  style: OpenApiStyle,
): { path: string; parameters: Json[] } {
  const { template } = binding;
  const parts: string[] = [];
  const parameters: Json[] = [];
  const param = (name: string, description: string, field: DescField | undefined) =>
    parameters.push({
      name,
      in: "path",
      required: true,
      description,
      schema: field
        ? (style.parameterSchema?.(field, valueSchema(field)) ?? valueSchema(field))
        : { type: "string" },
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

function queryParameter(
  name: string,
  schema: Json,
  description: string | undefined,
  explode = false,
): Json {
  return {
    name,
    in: "query",
    ...(description ? { description } : {}),
    schema,
    ...(explode ? { style: "form", explode: true } : {}),
  };
}

/** Every field the path and the body leave, by JSON field path; nested messages flattened. */
function queryParameters(
  message: DescMessage,
  bound: ReadonlySet<string>,
  protoPrefix: string,
  jsonPrefix: string,
  depth: number,
  describe: (name: string) => string | undefined,
  style: OpenApiStyle,
): Json[] {
  const out: Json[] = [];
  const exact = (field: DescField, derived: Json) =>
    style.parameterSchema?.(field, derived) ?? derived;
  for (const field of message.fields) {
    const protoPath = protoPrefix === "" ? field.name : `${protoPrefix}.${field.name}`;
    if (bound.has(protoPath)) continue;
    const name = jsonPrefix === "" ? field.jsonName : `${jsonPrefix}.${field.jsonName}`;
    const description = describe(`${message.typeName}.${field.name}`);
    if (field.fieldKind === "scalar" || field.fieldKind === "enum") {
      out.push(queryParameter(name, exact(field, valueSchema(field)), description));
    } else if (field.fieldKind === "list" && field.listKind !== "message") {
      out.push(
        queryParameter(
          name,
          fieldSchema(field, () => ({})),
          description,
          true,
        ),
      );
    } else if (field.fieldKind === "message") {
      const wkt = WELL_KNOWN[field.message.typeName];
      if (wkt) out.push(queryParameter(name, exact(field, wkt), description));
      else if (depth < QUERY_DEPTH && field.message.typeName !== HTTP_BODY) {
        out.push(
          ...queryParameters(field.message, bound, protoPath, name, depth + 1, describe, style),
        );
      }
    }
  }
  return out;
}

function requestBodyOf(binding: Binding<Profile>, json: () => Json): Json {
  if (binding.httpBodyRequest) {
    return {
      content: {
        "*/*": { schema: { type: "string", contentMediaType: "application/octet-stream" } },
      },
    };
  }
  const description =
    binding.body === "*" && binding.bound.size > 0
      ? `Every field but ${[...binding.bound].join(", ")}, which the path sets.`
      : undefined;
  return {
    required: false,
    ...(description ? { description } : {}),
    content: { "application/json": { schema: json() } },
  };
}

function answerOf(binding: Binding<Profile>, json: () => Json): Json {
  if (binding.httpBodyResponse) {
    return {
      description: "The response's google.api.HttpBody: its content type and bytes.",
      content: {
        "*/*": { schema: { type: "string", contentMediaType: "application/octet-stream" } },
      },
    };
  }
  const schema = json();
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

/** google.rpc.Status as Google's HTTP APIs write it (AIP-193). */
function statusSchema(): Json {
  return {
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
}
