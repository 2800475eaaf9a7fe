/**
 * The service's OpenAPI document (GET /openapi.json, `npm run openapi`): the
 * transcoder's one builder (src/transcoder/openapi.ts) over every binding the
 * service serves, each as its profile serves it (the legacy paths by the
 * legacy profile's style, src/legacy/openapi.ts), with what only the service
 * can say: its title and words, and its authentication (docs/api.md §5).
 */
import { protoComments } from "../../gen/proto-comments";
import { LEGACY_PROFILE_NAME } from "../legacy/profile";
import { buildOpenApi, type Json } from "../transcoder/openapi";
import type { Profile } from "../transcoder/profile";
import type { Binding } from "../transcoder/rules";
import { SERVICE_VERSION } from "../version";

/** The document of `bindings`, naming its server by `serverUrl`. */
export function serviceOpenApi(bindings: readonly Binding<Profile>[], serverUrl: string): Json {
  return buildOpenApi(bindings, {
    info: INFO,
    serverUrl,
    describe: (name) => protoComments[name],
    // Either scheme, never both in one request (docs/api.md §5.1).
    security: [{ ServiceAuth: [] }, { Bearer: [] }],
    securitySchemes: SECURITY_SCHEMES,
    // Two groups a reader (and a generated client's classes) can tell apart: the legacy
    // paths by their service's name, as before; the resource API beside them.
    tagOf: (binding) =>
      binding.profile.name === LEGACY_PROFILE_NAME
        ? binding.method.parent.name
        : `${binding.method.parent.name}V1`,
  });
}

const INFO: Json = {
  title: "docflow-api legacy HTTP API",
  version: SERVICE_VERSION,
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
