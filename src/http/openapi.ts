/**
 * The service's OpenAPI document (GET /openapi.json, `npm run openapi`): the
 * transcoder's one builder (src/transcoder/openapi.ts) over every binding the
 * service serves, each as its profile serves it (the legacy paths by the
 * legacy profile's style, src/legacy/openapi.ts), with what only the service
 * can say: its title and words, and its authentication (docs/api.md §5).
 */
import { getOption } from "@bufbuild/protobuf";
import { FeatureSet_FieldPresence } from "@bufbuild/protobuf/wkt";
import { http } from "../../gen/google/api/annotations_pb";
import { protoComments } from "../../gen/proto-comments";
import { LEGACY_PROFILE_NAME } from "../legacy/profile";
import { conditional } from "../rpc/preconditions";
import { buildOpenApi, type Json, protoJsonStyle } from "../transcoder/openapi";
import type { Profile } from "../transcoder/profile";
import type { Binding } from "../transcoder/rules";
import { SERVICE_VERSION } from "../version";
import {
  bodyRequired,
  exactFieldSchema,
  nullable,
  parameterSchema,
  withInputRule,
} from "../wire/field-schemas";

/** The document of `bindings`, naming its server by `serverUrl`. */
export function serviceOpenApi(bindings: readonly Binding<Profile>[], serverUrl: string): Json {
  return buildOpenApi(bindings, {
    info: INFO,
    serverUrl,
    describe: (name) => protoComments[name],
    // Either scheme, never both in one request (docs/api.md §5.1).
    security: [{ ServiceAuth: [] }, { Bearer: [] }],
    securitySchemes: SECURITY_SCHEMES,
    jsonStyle: RESOURCE_STYLE,
    refine: (binding, operation) => {
      if (binding.profile.name === LEGACY_PROFILE_NAME) return;
      resourceOperation(binding, operation);
    },
  });
}

/**
 * The resource API's fields as exactly as the legacy paths' (src/wire/field-schemas.ts):
 * identifiers, names, ranges and tokens as the server checks them, so that a client
 * generated from the document, and the fuzz run, send what the server takes. proto3
 * JSON reads `null` as a field's default (absent); a proto2 required field must be there.
 */
const RESOURCE_STYLE = protoJsonStyle({
  // A message in requests and answers has a request form of its own (`….Input`), as on
  // the legacy paths: null is a request's way to leave a field out, and never an answer's,
  // so a generated client types the answers' fields without null.
  directional: true,
  property(field, derived, direction) {
    const schema = exactFieldSchema(field, derived);
    const required = field.presence === FeatureSet_FieldPresence.LEGACY_REQUIRED;
    return { schema: direction === "input" && !required ? nullable(schema) : schema, required };
  },
  // proto3 JSON as the JSON profile reads it: a key that names no field is a 400.
  message: (message, schema) => withInputRule(message, { ...schema, additionalProperties: false }),
  parameterSchema,
  requestBody: (binding, json) => ({
    required: bodyRequired(
      binding.bodyField,
      binding.body === "*" ? binding.method.input : undefined,
    ),
    content: { "application/json": { schema: json() } },
  }),
});

/** If-Match as src/rpc/preconditions.ts reads it: `*`, or entity tags (strong or weak) separated by commas. */
const ENTITY_TAG = '(W/)?"[\\x21\\x23-\\x7E\\x80-\\xFF]*"';
const IF_MATCH_PATTERN = `^[ \\t]*(\\*|[ \\t,]*${ENTITY_TAG}([ \\t,]+${ENTITY_TAG})*[ \\t,]*)[ \\t]*$`;

/**
 * A resource API operation as a reader and a generated client should see it
 * (docs/api.md §3.1): in a group of its own beside the legacy paths
 * (`CounteragentServiceV1`), named by its RPC and `V1` (and by its resource
 * when an RPC has several bindings: `RestoreDocumentV1`), with the entity tag
 * headers where the implementation reads or writes them.
 */
function resourceOperation(binding: Binding<Profile>, operation: Json): void {
  const { method } = binding;
  operation.tags = [`${method.parent.name}V1`];
  const bindings = getOption(method, http).additionalBindings.length;
  operation.operationId = `${method.name}${bindings > 1 ? resourceOf(binding.template.source) : ""}V1`;
  const responses = operation.responses as Record<string, Json>;
  // Node's HTTP parser answers it before any route, as text (docs/api.md §4).
  responses["431"] = {
    description: "The request's headers, its URL included, are over 16 KiB: answered as text.",
    content: { "text/plain": { schema: { type: "string" } } },
  };
  const success = responses["201"] ?? responses["200"];
  if (success && method.output.typeName === GROUP_MESSAGE) {
    success.headers = {
      ...(success.headers as Json | undefined),
      ETag: {
        description:
          "The group's entity tag: send it back in If-Match to change or delete the group only as you saw it.",
        schema: { type: "string" },
      },
    };
  }
  if (conditional(method)) {
    operation.parameters = [
      ...(operation.parameters as unknown as Json[]),
      {
        name: "If-Match",
        in: "header",
        required: false,
        description:
          'The group\'s ETag as you last saw it (or *): a group that changed since is not written, and the answer is 412 (FAILED_PRECONDITION, reason ETAG_MISMATCH). A weak tag (W/"…") never matches.',
        schema: { type: "string", pattern: IF_MATCH_PATTERN },
      },
    ];
    responses["412"] = {
      description: "The group changed since the ETag in If-Match was read: nothing was written.",
      content: {
        "application/json": { schema: { $ref: "#/components/schemas/google.rpc.Status" } },
      },
    };
  }
}

/** Every answer that is a group carries its ETag (src/rpc/counteragent-service.ts, answerGroup). */
const GROUP_MESSAGE = "docflow.legacy.CounteragentGroup";

/** `…/messages/{message_id}/documents/{document_id}:restore` → "Document": the last collection, singular. */
function resourceOf(template: string): string {
  const collections = template.split("/").filter((s) => s !== "" && !s.startsWith("{"));
  const last = (collections.at(-1) ?? "").replace(/s$/, "");
  return last.charAt(0).toUpperCase() + last.slice(1);
}

const INFO: Json = {
  title: "docflow-api HTTP API",
  version: SERVICE_VERSION,
  description: [
    "The HTTP API of the electronic document exchange service: the legacy paths the existing SDKs call (`/Restore`, `/GetCounteragentsFromGroup`, …: the groups named by their service), and beside them the resource API (`/v1/boxes/{box_id}/…`: the groups named `…V1`), one RPC behind both.",
    "",
    '**The resource API** takes and answers proto3 JSON, answers errors as google.rpc.Status (`{"error": …}` with an ErrorInfo whose metadata holds the error code), answers a create with 201 and Location, and gives counteragent groups an ETag that If-Match sends back (412 when the group changed).',
    "",
    "**The legacy paths:**",
    '**Send `Accept: application/json` to get JSON.** Responses are binary protobuf (`application/x-protobuf`) unless `Accept` contains `application/json`; `Accept: */*` and no Accept at all mean protobuf, which is what the existing SDKs expect. A client generated from this document must send that header: the generated Python client does so by itself; with typescript-fetch, set `headers: { Accept: "application/json" }` in its Configuration.',
    "Request bodies are JSON when `Content-Type` is `application/json`, otherwise binary protobuf.",
    'Legacy JSON uses the proto field names (PascalCase); the legacy booleans (`IsSubscribed`, `AnyDepartment`) travel as the string "true" or "false" (JSON booleans are accepted in requests).',
    "A bare or empty query parameter means absent. Success is always 200.",
    "Errors carry the header X-Service-ErrorCode and an application/problem+json body for clients that asked for JSON (a short text otherwise).",
    "The same operations are served over gRPC, Connect and gRPC-Web (see `x-rpc`). For protobuf, generate a client from the service's .proto files rather than from this document.",
  ].join("\n"),
};

const SECURITY_SCHEMES: Readonly<Record<string, Json>> = {
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
};
