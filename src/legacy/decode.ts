/**
 * Legacy request decoding (docs/api.md §3): query parameters and the body (JSON when
 * Content-Type says so, binary protobuf otherwise) become the RPC's request
 * message. Failures are the domain's invalid_argument, or resource_exhausted
 * past the size limit.
 */
import { create, type DescMessage, fromBinary, type Message } from "@bufbuild/protobuf";
import { invalidArgument } from "../domain/errors";
import type { Exchange } from "../transcoder/exchange";
import type { LegacyRoute } from "./http-rules";
import { LegacyJsonError, legacyJsonToMessage } from "./legacy-json";
import { QueryError, readQuery } from "./query";

const JSON_BODY = /^application\/json\s*(;|$)/i;
/** Strict UTF-8 (a whole body at a time: no state between calls). */
const UTF8 = new TextDecoder("utf-8", { fatal: true });

/** The body and query of a request on a legacy route, as the RPC's request message. */
export async function decodeRequest(
  route: LegacyRoute,
  exchange: Exchange,
  query: string,
): Promise<Message> {
  const schema = route.method.input;
  let fields: Record<string, unknown>;
  try {
    fields = readQuery(new URLSearchParams(query), route.queryFields);
  } catch (error) {
    throw error instanceof QueryError ? invalidArgument(error.message) : error;
  }
  if (route.body === "") {
    // Stryker disable next-line CallExpression: Node drains an unread body once the answer is written; this only starts sooner
    exchange.skipBody();
    return create(schema, fields);
  }
  // The body with the configured size limit and its Content-Encoding removed.
  const body = await exchange.readBody();
  // Stryker disable next-line StringLiteral: any text that is not a JSON type reads the same as none
  const isJson = JSON_BODY.test(exchange.header("content-type") ?? "");
  const bodySchema = route.bodyField?.message ?? schema;
  const bodyMessage = isJson ? decodeJson(bodySchema, body) : decodeBinary(bodySchema, body);
  if (!route.bodyField) {
    return Object.assign(bodyMessage, fields);
  }
  return create(schema, { ...fields, [route.bodyField.localName]: bodyMessage });
}

function decodeJson(schema: DescMessage, body: Uint8Array): Message {
  try {
    return legacyJsonToMessage(schema, UTF8.decode(body));
  } catch (error) {
    throw invalidArgument(
      error instanceof LegacyJsonError ? error.message : "the request body is not valid UTF-8",
    );
  }
}

function decodeBinary(schema: DescMessage, body: Uint8Array): Message {
  try {
    return fromBinary(schema, body);
  } catch {
    throw invalidArgument(`the request body is not a valid protobuf ${schema.name}`);
  }
}
