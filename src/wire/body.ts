/**
 * The one reader of request bodies, with the size limit: every protocol's
 * adapter reads its body here, whole (unary calls, legacy paths) or message
 * by message (streams, `readEnvelopes`); and the one writer of envelopes
 * (`writeEnvelope`).
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { invalidArgument, unsupportedMediaType } from "../domain/errors";
import { BodyDecodingError, decodeBody } from "./compression";
import { type NodeRequest, requestGone } from "./http";

/** Largest request message accepted, on every protocol (the legacy body, a gRPC or Connect message). */
export const MAX_REQUEST_BYTES = 1024 * 1024;

export type BodyRead =
  /** The whole body. */
  | { readonly kind: "read"; readonly bytes: Buffer }
  /** More than the limit: nothing more is kept; the rest is read and dropped. */
  | { readonly kind: "too-large" }
  /** The client went away before the body ended: there is no one to answer. */
  | { readonly kind: "closed" };

/**
 * The whole body, if it is at most `maxBytes`. A Content-Length over the
 * limit is refused before anything is read.
 */
export function readBody(req: NodeRequest, maxBytes: number): Promise<BodyRead> {
  const declared = Number(req.headers["content-length"] ?? 0);
  if (declared > maxBytes) {
    req.resume();
    return Promise.resolve({ kind: "too-large" });
  }
  if (req.readableEnded) return Promise.resolve({ kind: "read", bytes: Buffer.alloc(0) });
  // Gone before the read began: its 'close' is past, and no 'end' will come.
  if (requestGone(req)) return Promise.resolve({ kind: "closed" });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        tooLarge = true;
        chunks.length = 0;
      } else if (!tooLarge) {
        chunks.push(chunk);
      }
    };
    const onEnd = () => {
      done();
      if (tooLarge) resolve({ kind: "too-large" });
      else {
        resolve({
          kind: "read",
          bytes: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size),
        });
      }
    };
    const onClose = () => {
      done();
      resolve(tooLarge ? { kind: "too-large" } : { kind: "closed" });
    };
    const done = () => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("close", onClose);
    };
    req.on("data", onData);
    req.once("end", onEnd);
    req.once("close", onClose);
  });
}

/** One message of an enveloped body (gRPC, gRPC-Web, Connect streams): its flags and bytes. */
export interface Envelope {
  readonly flags: number;
  readonly data: Buffer;
}

/** Why an enveloped body cannot be read on. */
export class EnvelopeError extends Error {
  override readonly name = "EnvelopeError";
  constructor(
    readonly kind: "too-large" | "truncated" | "closed",
    message: string,
  ) {
    super(message);
  }
}

export const ENVELOPE_HEADER_BYTES = 5;

/**
 * The messages of an enveloped body, as they arrive: 5 bytes of flags and
 * length, then the message. A message over `maxBytes` or a body that ends
 * mid-envelope throws an EnvelopeError. Whenever the reader stops (done,
 * failed, or no longer wanted), the rest of the body is read and dropped,
 * never left unread: a client still uploading (HTTP/2 flow control, an
 * HTTP/1.1 keep-alive connection) must be able to finish.
 */
export async function* readEnvelopes(
  req: NodeRequest,
  maxBytes: number,
): AsyncGenerator<Envelope, void, undefined> {
  const chunks: Buffer[] = [];
  let ended = false;
  let closed = requestGone(req);
  let wake: (() => void) | undefined;
  const onData = (chunk: Buffer) => {
    chunks.push(chunk);
    req.pause();
    wake?.();
  };
  const onEnd = () => {
    ended = true;
    wake?.();
  };
  const onClose = () => {
    closed = true;
    wake?.();
  };
  req.on("data", onData);
  req.once("end", onEnd);
  req.once("close", onClose);
  let pending: Buffer = Buffer.alloc(0);
  try {
    for (;;) {
      while (pending.length >= ENVELOPE_HEADER_BYTES) {
        const length = pending.readUInt32BE(1);
        if (length > maxBytes) {
          throw new EnvelopeError(
            "too-large",
            `message size ${length} is larger than configured readMaxBytes ${maxBytes}`,
          );
        }
        if (pending.length < ENVELOPE_HEADER_BYTES + length) break;
        const flags = pending[0] as number;
        const data = pending.subarray(ENVELOPE_HEADER_BYTES, ENVELOPE_HEADER_BYTES + length);
        pending = pending.subarray(ENVELOPE_HEADER_BYTES + length);
        yield { flags, data };
      }
      const chunk = chunks.shift();
      if (chunk) {
        pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
        continue;
      }
      if (ended) break;
      if (closed) throw new EnvelopeError("closed", "the client closed the request");
      await new Promise<void>((resolve) => {
        wake = resolve;
        req.resume();
      });
      wake = undefined;
    }
    if (pending.length > 0) {
      throw new EnvelopeError("truncated", "protocol error: incomplete envelope");
    }
  } finally {
    req.off("data", onData);
    req.off("end", onEnd);
    req.off("close", onClose);
    // Whatever is left is read and dropped.
    req.resume();
  }
}

/**
 * Writes one envelope — flags, a 4-byte big-endian length, the message — into
 * `target` at `offset`, and says where it ends: the one writer of the frame
 * (gRPC, gRPC-Web, Connect streams). Two envelopes may share one buffer
 * (gRPC-Web's message and its trailers); the message is copied once.
 */
export function writeEnvelope(
  target: Buffer,
  offset: number,
  flags: number,
  data: Uint8Array,
): number {
  target[offset] = flags;
  target.writeUInt32BE(data.length, offset + 1);
  target.set(data, offset + ENVELOPE_HEADER_BYTES);
  return offset + ENVELOPE_HEADER_BYTES + data.length;
}

/** One envelope in a buffer of its own. */
export function encodeEnvelope(flags: number, data: Uint8Array): Buffer {
  const frame = Buffer.allocUnsafe(ENVELOPE_HEADER_BYTES + data.length);
  writeEnvelope(frame, 0, flags, data);
  return frame;
}

/**
 * The whole body with its Content-Encoding (gzip, br) removed, the size limit
 * holding for the decoded bytes (the legacy paths' and the transcoder's
 * bodies); a failure is the error the request gets.
 */
export async function readDecodedBody(req: NodeRequest, maxBytes: number): Promise<Buffer> {
  const read = await readBody(req, maxBytes);
  if (read.kind === "too-large") {
    throw new ConnectError(
      `the request body is larger than ${maxBytes} bytes`,
      Code.ResourceExhausted,
    );
  }
  if (read.kind === "closed")
    // Stryker disable next-line StringLiteral: the client is gone; no one reads the words
    throw new ConnectError("the client closed the request", Code.Canceled);
  try {
    return await decodeBody(read.bytes, req.headers["content-encoding"], maxBytes);
  } catch (error) {
    // Stryker disable next-line ConditionalExpression: decodeBody throws BodyDecodingError only; the guard keeps a future bug a 500
    if (!(error instanceof BodyDecodingError)) throw error;
    if (error.kind === "unsupported") throw unsupportedMediaType(error.message);
    if (error.kind === "too-large") throw new ConnectError(error.message, Code.ResourceExhausted);
    throw invalidArgument(error.message);
  }
}
