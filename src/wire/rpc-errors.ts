/**
 * How an RPC error travels on each wire: the Connect protocol's JSON error
 * (unary body, end-of-stream message), gRPC's status trailers
 * (`grpc-status`, the percent-encoded `grpc-message`, the
 * `grpc-status-details-bin` google.rpc.Status) and metadata headers, binary
 * ones in base64. A code's Connect name is connect-es's `codeToString`.
 */
import { create, toBinary, toJson } from "@bufbuild/protobuf";
import { base64Encode } from "@bufbuild/protobuf/wire";
import { AnySchema, anyPack } from "@bufbuild/protobuf/wkt";
import type { ConnectError } from "@connectrpc/connect";
import { codeToString } from "@connectrpc/connect/protocol-connect";
import { StatusSchema } from "../../gen/google/rpc/status_pb";

/** An error's details as google.protobuf.Any messages: typed ones packed, wire ones as they came. */
function detailsAsAny(error: ConnectError) {
  return error.details.map((detail) =>
    "desc" in detail
      ? anyPack(detail.desc, create(detail.desc, detail.value))
      : create(AnySchema, { typeUrl: `type.googleapis.com/${detail.type}`, value: detail.value }),
  );
}

/**
 * The optional human-readable form of a typed detail (the Connect protocol's
 * `debug` key); none for details that came off the wire, or that JSON cannot
 * write (an Any whose type is unknown).
 */
function debugJson(detail: ConnectError["details"][number] | undefined): unknown {
  if (detail === undefined || !("desc" in detail)) return undefined;
  try {
    return toJson(detail.desc, create(detail.desc, detail.value));
  } catch {
    return undefined;
  }
}

/** The Connect protocol's error object: `{code, message?, details?}`. */
export function connectErrorJson(error: ConnectError): Record<string, unknown> {
  const json: Record<string, unknown> = { code: codeToString(error.code) };
  if (error.rawMessage.length > 0) json.message = error.rawMessage;
  if (error.details.length > 0) {
    json.details = detailsAsAny(error).map((any, index) => {
      const entry: Record<string, unknown> = {
        type: any.typeUrl.slice(any.typeUrl.lastIndexOf("/") + 1),
        value: base64Encode(any.value, "std_raw"),
      };
      const debug = debugJson(error.details[index]);
      if (debug !== undefined) entry.debug = debug;
      return entry;
    });
  }
  return json;
}

/** grpc-message: percent-encodes every byte outside printable ASCII, and "%" (gRPC's HTTP/2 spec). */
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

/** The gRPC status trailers of an error (`null`: success). */
export function grpcStatusTrailers(error: ConnectError | null): Record<string, string> {
  if (error === null) return { "grpc-status": "0" };
  const trailers: Record<string, string> = { "grpc-status": String(error.code) };
  if (error.rawMessage.length > 0) trailers["grpc-message"] = encodeGrpcMessage(error.rawMessage);
  if (error.details.length > 0) {
    const status = create(StatusSchema, {
      code: error.code,
      message: error.rawMessage,
      details: detailsAsAny(error),
    });
    trailers["grpc-status-details-bin"] = base64Encode(toBinary(StatusSchema, status), "std_raw");
  }
  return trailers;
}

/**
 * Headers an error adds on every protocol (its metadata: a WWW-Authenticate
 * challenge, or what a handler attached), less the ones a protocol owns.
 */
export function errorMetadata(
  error: ConnectError,
  reserved: ReadonlySet<string>,
): [string, string][] {
  if (error.isWireError) return [];
  const out: [string, string][] = [];
  error.metadata.forEach((value, name) => {
    if (!reserved.has(name)) out.push([name, value]);
  });
  return out;
}
