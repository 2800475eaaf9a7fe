/**
 * Reading enveloped messages (gRPC, gRPC-Web, Connect streams): a unary
 * call's one envelope, a stream's envelopes as they arrive, each opened —
 * decompressed as its flag and the call's coding say, within the size limit.
 * The frames are cut by wire/body.ts (readEnvelopes) and written by its
 * writeEnvelope. These run inside the call (streams) as well as before it
 * (a unary body): they throw ConnectErrors (face.ts).
 */
import type { Message } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import type { MethodRoute } from "../call/route";
import { ENVELOPE_HEADER_BYTES, type Envelope, EnvelopeError, readEnvelopes } from "../wire/body";
import { BodyDecodingError, type ContentCoding, decompress } from "../wire/compression";
import type { NodeRequest } from "../wire/http";
import type { CallSettings } from "./face";

/** An envelope's flag: its message is compressed with the call's coding. */
export const COMPRESSED_FLAG = 0b1;

/** A message decompressed, within the size limit. */
export async function decompressMessage(
  bytes: Uint8Array,
  coding: ContentCoding,
  maxBytes: number,
): Promise<Uint8Array> {
  try {
    return await decompress(bytes, coding, maxBytes);
  } catch (error) {
    if (error instanceof BodyDecodingError && error.kind === "too-large") {
      throw new ConnectError(
        `message is larger than configured readMaxBytes ${maxBytes} after decompression`,
        Code.ResourceExhausted,
      );
    }
    throw new ConnectError("decompression failed", Code.InvalidArgument);
  }
}

/** An envelope's message, decompressed as its flag and the call's coding say. */
async function openEnvelope(
  settings: CallSettings,
  envelope: Envelope,
  maxBytes: number,
): Promise<Uint8Array> {
  if ((envelope.flags & COMPRESSED_FLAG) === 0) return envelope.data;
  if (settings.requestCoding === "identity") {
    throw new ConnectError(
      "received compressed envelope, but do not know how to decompress",
      Code.Internal,
    );
  }
  return decompressMessage(envelope.data, settings.requestCoding, maxBytes);
}

/** The one message of a unary call's enveloped body. */
export async function oneEnvelope(
  settings: CallSettings,
  body: Buffer,
  maxBytes: number,
): Promise<Uint8Array> {
  if (body.length < ENVELOPE_HEADER_BYTES) {
    throw new ConnectError(
      "protocol error: missing input message for unary method",
      Code.Unimplemented,
    );
  }
  const length = body.readUInt32BE(1);
  if (length > maxBytes) {
    throw new ConnectError(
      `message size ${length} is larger than configured readMaxBytes ${maxBytes}`,
      Code.ResourceExhausted,
    );
  }
  if (body.length < ENVELOPE_HEADER_BYTES + length) {
    throw new ConnectError(
      `protocol error: promised ${length} bytes in enveloped message, got ${body.length - ENVELOPE_HEADER_BYTES} bytes`,
      Code.InvalidArgument,
    );
  }
  if (body.length > ENVELOPE_HEADER_BYTES + length) {
    throw new ConnectError(
      "protocol error: received extra input message for unary method",
      Code.Unimplemented,
    );
  }
  return openEnvelope(
    settings,
    { flags: body[0] as number, data: body.subarray(ENVELOPE_HEADER_BYTES) },
    maxBytes,
  );
}

/** A stream's messages, decoded as they arrive; an end-of-stream flag ends them. */
export async function* streamInputs(
  maxBytes: number,
  req: NodeRequest,
  settings: CallSettings,
  route: MethodRoute,
): AsyncGenerator<Message> {
  try {
    for await (const envelope of readEnvelopes(req, maxBytes)) {
      if ((envelope.flags & ~COMPRESSED_FLAG) !== 0) {
        throw new ConnectError(
          `protocol error: invalid envelope flags ${envelope.flags}`,
          Code.InvalidArgument,
        );
      }
      yield settings.codec.parse(
        route.method.input,
        await openEnvelope(settings, envelope, maxBytes),
      );
    }
  } catch (error) {
    if (error instanceof EnvelopeError) {
      throw new ConnectError(
        error.message,
        error.kind === "too-large"
          ? Code.ResourceExhausted
          : error.kind === "closed"
            ? Code.Canceled
            : Code.InvalidArgument,
      );
    }
    throw error;
  }
}
