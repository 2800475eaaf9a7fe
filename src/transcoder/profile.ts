/**
 * What a profile is: how one binding's requests are read and answered
 * (json-profile.ts is the spec's; a host may bring its own, as the legacy
 * paths do), and how its bindings are described in the OpenAPI document
 * where that differs from the JSON profile's (openapi.ts builds it).
 */
import type { DescField, Message } from "@bufbuild/protobuf";
import type { ConnectError } from "@connectrpc/connect";
import type { Exchange } from "./exchange";
import type { Json, SchemaStyle } from "./openapi-schema";
import type { BoundVariable } from "./route-table";
import type { Binding } from "./rules";

/** How one binding's requests are read and answered. */
export interface Profile {
  readonly name: string;
  /** Literal path segments match whatever their case. */
  readonly caseInsensitivePaths: boolean;
  /** A path with a trailing "/" does not match (google.api.http ignores one). */
  readonly exactTrailingSlash?: boolean;
  /** HEAD is served where GET is, and listed in a 405's Allow beside it (RFC 9110 §9.3.2). */
  readonly headWhereGet?: boolean;
  /** How its bindings are described in the OpenAPI document, where that differs from this profile's (openapi.ts). */
  readonly openApi?: OpenApiStyle;
  /**
   * A binding that creates a resource (AIP-133): the answer's field that
   * names it under the request's path. Such an answer is a 201 with
   * `Location` (RFC 9110 §15.3.2), and the OpenAPI document says so.
   */
  created?(binding: Binding<Profile>): DescField | undefined;
  /** Refuses, at start-up, a binding this profile cannot serve (throws with the reason). */
  check?(binding: Binding<Profile>): void;
  /** The request message; throws a ConnectError (the call still runs its interceptors, then fails with it). */
  decode(
    binding: Binding<Profile>,
    variables: readonly BoundVariable[],
    query: string,
    exchange: Exchange,
  ): Promise<Message>;
  answer(
    binding: Binding<Profile>,
    exchange: Exchange,
    output: Message,
    query: string,
    /** The response headers the implementation set (its `etag`, for the JSON profile). */
    header?: Headers,
  ): Promise<void>;
  answerStream(
    binding: Binding<Profile>,
    exchange: Exchange,
    outputs: AsyncIterable<Message>,
    query: string,
  ): Promise<void>;
  fail(exchange: Exchange, error: ConnectError): Promise<void>;
  /** The path is bound, not with this HTTP method: the methods it is bound with, and a template that matched it. */
  methodNotAllowed(exchange: Exchange, allowed: readonly string[], template: string): Promise<void>;
}

/**
 * How a profile's bindings are described where they differ from the JSON
 * profile's. Each hook is handed what this builder derived (schemas by the
 * one mapping, lazily where asking would add a component) and wraps or
 * refines it; a hook left out keeps the JSON profile's answer.
 */
export interface OpenApiStyle extends SchemaStyle {
  /** Components the style's operations refer to, added when a binding of the profile is described. */
  readonly components?: {
    readonly schemas?: Readonly<Record<string, Json>>;
    readonly headers?: Readonly<Record<string, Json>>;
  };
  /** The fields the profile reads from the query, each a parameter of its own (default: every field the path and the body leave, nested ones flattened). */
  queryFields?(binding: Binding<Profile>): readonly DescField[];
  /**
   * The parameters of one of `queryFields` (its own, then any other names it
   * is accepted under), given its schema by the one mapping and its comment.
   */
  queryParameters?(field: DescField, schema: Json, comment: string | undefined): Json[];
  /**
   * The schema of a path variable's field, or of a field the JSON profile reads from
   * the query, given the one mapping's (default: that one).
   */
  parameterSchema?(field: DescField, derived: Json): Json;
  /** The request body, given its JSON's schema (default: that JSON, application/json). */
  requestBody?(binding: Binding<Profile>, json: () => Json): Json | undefined;
  /** The 200 answer, given its JSON's schema. */
  answer?(binding: Binding<Profile>, json: () => Json): Json;
  /** The error answers by status (default: `default`, google.rpc.Status). */
  errors?(binding: Binding<Profile>): Readonly<Record<string, Json>>;
}
