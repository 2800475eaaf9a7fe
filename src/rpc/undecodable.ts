/**
 * connect-es answers a request body that is not valid protobuf with
 * `internal` ("parse binary: …"): its binary parser serves clients and
 * servers alike, and for a client a bad answer is the server's fault. For a
 * server it is the caller's malformed data, which SPEC §4 makes
 * `invalid_argument`. The parser runs before any interceptor, so this wraps
 * the router's handlers and rewrites exactly that answer on the three
 * protocols: the Connect JSON error body, the gRPC trailer, the gRPC-Web
 * trailer frame. Everything else passes through untouched.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import type { UniversalHandler, UniversalServerResponse } from "@connectrpc/connect/protocol";

const PARSE_FAILURE = "parse binary: ";
const GRPC_INTERNAL = String(Code.Internal);
const GRPC_INVALID_ARGUMENT = String(Code.InvalidArgument);
const TRAILER_FLAG = 0x80;

/** grpc-message encoding: percent-encode every byte outside printable ASCII, and "%" (gRPC's HTTP/2 spec). */
export function encodeGrpcMessage(message: string): string {
  let out = "";
  for (const byte of Buffer.from(message, "utf8")) {
    out +=
      byte >= 0x20 && byte <= 0x7e && byte !== 0x25
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/** What callers read instead of the parser's own words. */
function undecodableMessage(typeName: string): string {
  return `the request is not a valid protobuf ${typeName}`;
}

export function reportUndecodableAsInvalid(handler: UniversalHandler): UniversalHandler {
  const message = undecodableMessage(handler.method.input.typeName);
  const grpcMessage = encodeGrpcMessage(message);
  const wrapped = async (req: Parameters<UniversalHandler>[0]) => {
    const res = await handler(req);
    if (res.trailer !== undefined) {
      // gRPC: the status travels in trailers, already set when the parse failed.
      if (isParseFailure(res.trailer)) {
        res.trailer.set("grpc-status", GRPC_INVALID_ARGUMENT);
        res.trailer.set("grpc-message", grpcMessage);
      }
      return res;
    }
    if (res.status === 500) {
      return rewriteConnectError(res, message);
    }
    if (handler.protocolNames.includes("grpc-web") && isGrpcWeb(req.header.get("content-type"))) {
      return rewriteGrpcWebTrailer(res, grpcMessage);
    }
    return res;
  };
  return Object.assign(wrapped, handler);
}

function isParseFailure(trailer: Headers): boolean {
  return (
    trailer.get("grpc-status") === GRPC_INTERNAL &&
    decodeURIComponent(trailer.get("grpc-message") ?? "").startsWith(PARSE_FAILURE)
  );
}

function isGrpcWeb(contentType: string | null): boolean {
  return (contentType ?? "").toLowerCase().startsWith("application/grpc-web");
}

async function collect(body: AsyncIterable<Uint8Array> | undefined): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  if (body) for await (const chunk of body) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** Connect unary: a 500 whose JSON body says internal + "parse binary: …" becomes a 400. */
async function rewriteConnectError(
  res: UniversalServerResponse,
  message: string,
): Promise<UniversalServerResponse> {
  const bytes = await collect(res.body);
  let error: { code?: unknown; message?: unknown } | undefined;
  try {
    error = JSON.parse(bytes.toString("utf8")) as typeof error;
  } catch {
    error = undefined;
  }
  let body = bytes;
  let status = res.status;
  if (
    error?.code === "internal" &&
    typeof error.message === "string" &&
    error.message.startsWith(PARSE_FAILURE)
  ) {
    const replacement = new ConnectError(message, Code.InvalidArgument);
    body = Buffer.from(
      JSON.stringify({ code: "invalid_argument", message: replacement.rawMessage }),
    );
    status = 400;
    res.header?.set("content-length", String(body.length));
  }
  return { ...res, status, body: once(body) };
}

/** gRPC-Web: an answer that is only a trailer frame saying internal + "parse binary: …". */
async function rewriteGrpcWebTrailer(
  res: UniversalServerResponse,
  grpcMessage: string,
): Promise<UniversalServerResponse> {
  if (!res.body) return res;
  const it = res.body[Symbol.asyncIterator]();
  const first = await it.next();
  const rest: AsyncIterable<Uint8Array> = { [Symbol.asyncIterator]: () => it };
  if (first.done) return { ...res, body: rest };
  const chunk = Buffer.from(first.value);
  if (chunk[0] === TRAILER_FLAG && chunk.length >= 5) {
    const text = chunk.subarray(5, 5 + chunk.readUInt32BE(1)).toString("utf8");
    const trailer = new Headers();
    for (const line of text.split("\r\n")) {
      const colon = line.indexOf(":");
      if (colon > 0) trailer.set(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
    }
    if (isParseFailure(trailer)) {
      const data = Buffer.from(
        `grpc-status: ${GRPC_INVALID_ARGUMENT}\r\ngrpc-message: ${grpcMessage}\r\n`,
        "utf8",
      );
      const frame = Buffer.alloc(5 + data.length);
      frame[0] = TRAILER_FLAG;
      frame.writeUInt32BE(data.length, 1);
      data.copy(frame, 5);
      return { ...res, body: prepend(frame, rest) };
    }
  }
  return { ...res, body: prepend(chunk, rest) };
}

async function* once(bytes: Uint8Array): AsyncIterable<Uint8Array> {
  yield bytes;
}

async function* prepend(
  first: Uint8Array,
  rest: AsyncIterable<Uint8Array>,
): AsyncIterable<Uint8Array> {
  yield first;
  yield* rest;
}
