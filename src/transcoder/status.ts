/**
 * Errors as `google.rpc.Status` in JSON, the way Google's HTTP APIs write
 * them (AIP-193): `{"error": {"code": <HTTP status>, "message", "status":
 * "<CODE_NAME>", "details": [{"@type": …}, …]}}`. Google's REST clients (the
 * Go client's googleapi.CheckResponse among them) read this shape.
 */
import {
  create,
  type DescMessage,
  fromBinary,
  type JsonValue,
  type Message,
  type Registry,
  toJson,
} from "@bufbuild/protobuf";
import { Code, type ConnectError } from "@connectrpc/connect";

/** The HTTP status of each code, as google/rpc/code.proto gives it. */
export const HTTP_STATUS_OF_CODE: Readonly<Record<Code, number>> = {
  [Code.Canceled]: 499,
  [Code.Unknown]: 500,
  [Code.InvalidArgument]: 400,
  [Code.DeadlineExceeded]: 504,
  [Code.NotFound]: 404,
  [Code.AlreadyExists]: 409,
  [Code.PermissionDenied]: 403,
  [Code.ResourceExhausted]: 429,
  [Code.FailedPrecondition]: 400,
  [Code.Aborted]: 409,
  [Code.OutOfRange]: 400,
  [Code.Unimplemented]: 501,
  [Code.Internal]: 500,
  [Code.Unavailable]: 503,
  [Code.DataLoss]: 500,
  [Code.Unauthenticated]: 401,
};

/** `google.rpc.Code` names: `INVALID_ARGUMENT`, … (`Code` names them `InvalidArgument`). */
export function codeName(code: Code): string {
  if (code === Code.Canceled) return "CANCELLED";
  return (Code[code] ?? "Unknown").replace(/(?<=[a-z])(?=[A-Z])/g, "_").toUpperCase();
}

/** The error as Google's JSON error body. Details are written when the registry knows their type. */
export function statusJson(
  error: ConnectError,
  httpStatus: number,
  registry: Registry | undefined,
): JsonValue {
  const details: JsonValue[] = [];
  for (const detail of error.details) {
    if ("desc" in detail) {
      details.push(anyJson(detail.desc, create(detail.desc, detail.value as never), registry));
      continue;
    }
    const desc = registry?.getMessage(detail.type);
    if (desc) details.push(anyJson(desc, fromBinary(desc, detail.value), registry));
  }
  return {
    error: {
      code: httpStatus,
      message: error.rawMessage,
      status: codeName(error.code),
      ...(details.length > 0 && { details }),
    },
  };
}

/** A message as google.protobuf.Any in JSON: its fields beside "@type", or "value" for a well-known type. */
function anyJson(desc: DescMessage, message: Message, registry: Registry | undefined): JsonValue {
  const json = toJson(desc, message, { registry });
  const type = `type.googleapis.com/${desc.typeName}`;
  return json !== null && typeof json === "object" && !Array.isArray(json)
    ? { "@type": type, ...json }
    : { "@type": type, value: json };
}
