/**
 * Errors as `google.rpc.Status` in JSON, the way Google's HTTP APIs write
 * them (AIP-193): `{"error": {"code": <HTTP status>, "message", "status":
 * "<CODE_NAME>", "details": [{"@type": …}, …]}}`. Google's REST clients (the
 * Go client's googleapi.CheckResponse among them) read this shape. The HTTP
 * status is the host's to say (its error table: the JSON profile's
 * `statusOf`); this module knows no table of its own.
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

const GOOGLE_CODE_NAMES: ReadonlyMap<Code, string> = new Map(
  Object.values(Code)
    .filter((code): code is Code => typeof code === "number")
    .map((code) => [
      code,
      code === Code.Canceled
        ? "CANCELLED"
        : Code[code].replace(/(?<=[a-z])(?=[A-Z])/g, "_").toUpperCase(),
    ]),
);

/**
 * A code by its `google.rpc.Code` enum name: `INVALID_ARGUMENT`, `CANCELLED`
 * (gRPC's status names are the same; `Code` names them `InvalidArgument`,
 * `Canceled`). Connect's lower-case form is `codeToString` of
 * `@connectrpc/connect/protocol-connect`.
 */
export function googleCodeName(code: Code): string {
  return GOOGLE_CODE_NAMES.get(code) ?? "UNKNOWN";
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
      status: googleCodeName(error.code),
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
