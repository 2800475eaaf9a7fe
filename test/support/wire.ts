/**
 * Requests built by hand, byte for byte, for tests whose point is what
 * travels on the wire (compressed bodies, frames, trailers): no client
 * library decides for us whether to compress or how to frame.
 */
import http2 from "node:http2";
import { type DescMethod, type Message, toBinary } from "@bufbuild/protobuf";

/** One gRPC / gRPC-Web / Connect-streaming envelope: flags, 4-byte length, the message. */
export function envelope(message: Uint8Array, flags = 0): Buffer {
  const frame = Buffer.alloc(5 + message.length);
  frame[0] = flags;
  frame.writeUInt32BE(message.length, 1);
  Buffer.from(message).copy(frame, 5);
  return frame;
}

/** The envelopes of a gRPC / gRPC-Web body, in order (a trailer frame has flag 0x80). */
export function envelopes(body: Buffer): { flags: number; data: Buffer }[] {
  const out: { flags: number; data: Buffer }[] = [];
  let at = 0;
  while (at + 5 <= body.length) {
    const length = body.readUInt32BE(at + 1);
    out.push({ flags: body[at] ?? 0, data: body.subarray(at + 5, at + 5 + length) });
    at += 5 + length;
  }
  return out;
}

export interface H2Answer {
  /** Response headers, without `date` and `x-request-id` (they differ on every call). */
  readonly headers: Record<string, unknown>;
  readonly trailers: Record<string, unknown> | undefined;
  readonly body: Buffer;
  /** The RST_STREAM code the stream closed with (0: NO_ERROR, or none sent). */
  readonly rstCode: number | undefined;
}

/**
 * One request on a fresh cleartext HTTP/2 connection (prior knowledge).
 * `split`: the body goes in two DATA frames, 20 ms apart.
 */
export async function h2Request(
  baseUrl: string,
  headers: http2.OutgoingHttpHeaders,
  body: Uint8Array,
  options: { split?: boolean } = {},
): Promise<H2Answer> {
  const session = http2.connect(baseUrl);
  session.on("error", () => undefined);
  try {
    return await new Promise<H2Answer>((resolve, reject) => {
      const req = session.request(headers);
      let answerHeaders: Record<string, unknown> = {};
      let trailers: Record<string, unknown> | undefined;
      const chunks: Buffer[] = [];
      req.on("response", (received) => {
        const { date: _date, "x-request-id": _id, ...rest } = received;
        answerHeaders = rest;
      });
      req.on("trailers", (received) => {
        trailers = { ...received };
      });
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("error", reject);
      req.on("close", () =>
        resolve({
          headers: answerHeaders,
          trailers,
          body: Buffer.concat(chunks),
          rstCode: req.rstCode,
        }),
      );
      if (options.split) {
        req.write(body.subarray(0, 3));
        setTimeout(() => req.end(body.subarray(3)), 20);
      } else {
        req.end(body);
      }
    });
  } finally {
    session.close();
  }
}

/**
 * A unary gRPC call sent raw over h2c with a `grpc-timeout` of the client's
 * and no deadline of its own (the trailers are the server's answer): its
 * grpc-status.
 */
export async function grpcStatusWithTimeout(
  baseUrl: string,
  method: DescMethod,
  request: Message,
  headers: { authorization: string; "grpc-timeout": string; "x-request-id": string },
): Promise<string | undefined> {
  const res = await h2Request(
    baseUrl,
    {
      ":method": "POST",
      ":path": `/${method.parent.typeName}/${method.name}`,
      "content-type": "application/grpc",
      te: "trailers",
      ...headers,
    },
    envelope(toBinary(method.input, request)),
  );
  const status = res.trailers?.["grpc-status"] ?? res.headers["grpc-status"];
  return status === undefined ? undefined : String(status);
}
