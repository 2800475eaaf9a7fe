/**
 * The message codecs of every RPC protocol (binary protobuf, canonical proto
 * JSON), and a message as it goes on the wire: serialized, and compressed
 * from COMPRESS_MIN_BYTES up when the client accepts it (docs/api.md §3).
 */
import {
  type DescMessage,
  fromBinary,
  fromJsonString,
  type Message,
  type Registry,
  toBinary,
  toJsonString,
} from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { COMPRESS_MIN_BYTES, compress } from "../wire/compression";
import type { CallSettings, Codecs } from "./face";

/** The codecs of every protocol; `registry` resolves google.protobuf.Any in JSON. */
export function createCodecs(registry?: Registry): Codecs {
  return {
    proto: {
      binary: true,
      parse(schema, bytes) {
        try {
          return fromBinary(schema, bytes);
        } catch {
          throw new ConnectError(
            `the request is not a valid protobuf ${schema.typeName}`,
            Code.InvalidArgument,
          );
        }
      },
      serialize: (schema, message) => toBinary(schema, message),
    },
    json: {
      binary: false,
      parse(schema, bytes) {
        let text: string;
        try {
          text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
        } catch {
          throw new ConnectError("the request is not valid UTF-8", Code.InvalidArgument);
        }
        try {
          return fromJsonString(schema, text, { ignoreUnknownFields: true, registry });
        } catch (error) {
          throw new ConnectError(
            `the request is not a valid JSON ${schema.typeName}: ${error instanceof Error ? error.message : "bad value"}`,
            Code.InvalidArgument,
          );
        }
      },
      serialize: (schema, message) =>
        Buffer.from(toJsonString(schema, message, { registry }), "utf8"),
    },
  };
}

/** A message as it goes on the wire: serialized, and compressed when it is worth it. */
export async function encodeMessage(
  settings: CallSettings,
  schema: DescMessage,
  message: Message,
): Promise<{ bytes: Uint8Array; compressed: boolean }> {
  const bytes = settings.codec.serialize(schema, message);
  if (settings.answerCoding && bytes.length >= COMPRESS_MIN_BYTES) {
    return { bytes: await compress(bytes, settings.answerCoding), compressed: true };
  }
  return { bytes, compressed: false };
}
