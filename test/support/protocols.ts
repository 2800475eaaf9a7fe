/**
 * One call, six ways: the four RPC protocols and the two legacy encodings,
 * all answered in one shape so that a rule is tested once for every protocol.
 */
import type { DescMessage, DescMethodUnary, MessageShape } from "@bufbuild/protobuf";
import { fromBinary, fromJson, getOption, isFieldSet, toBinary, toJson } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { http } from "../../gen/google/api/annotations_pb";
import {
  callRpc,
  type Harness,
  legacy,
  RPC_PROTOCOLS,
  type RpcProtocol,
  type Served,
  server,
} from "./harness";

export const PROTOCOLS = [...RPC_PROTOCOLS, "legacy-protobuf", "legacy-json"] as const;
/** Every wire protocol, and "in-memory" (no network: for domain rules). */
export type Protocol = (typeof PROTOCOLS)[number] | "in-memory";

export type Outcome<O> =
  | { ok: true; message: O }
  | { ok: false; status: number; errorCode: string | undefined; message: string };

/** The legacy status a gRPC/Connect error stands for (docs/api.md §4), written out independently of src/. */
function statusOf(code: Code, reason: string | undefined): number {
  if (code === Code.FailedPrecondition && reason === "API_SUBSCRIPTION_ENDED") return 402;
  if (code === Code.FailedPrecondition && reason === "ETAG_MISMATCH") return 412;
  const table: Partial<Record<Code, number>> = {
    [Code.InvalidArgument]: 400,
    [Code.Unauthenticated]: 401,
    [Code.PermissionDenied]: 403,
    [Code.NotFound]: 404,
    [Code.AlreadyExists]: 409,
  };
  return table[code] ?? 500;
}

/** One call over `protocol`: "in-memory" needs no port; every other protocol, the server tier. */
export async function call<I extends DescMessage, O extends DescMessage>(
  h: Served,
  protocol: Protocol,
  method: DescMethodUnary<I, O>,
  request: MessageShape<I>,
  authorization?: string,
  extraHeaders: Record<string, string> = {},
): Promise<Outcome<MessageShape<O>>> {
  if (protocol === "legacy-protobuf" || protocol === "legacy-json") {
    return callLegacy(server(h, protocol), protocol, method, request, authorization, extraHeaders);
  }
  const r = await callRpc(h, protocol as RpcProtocol, method, request, authorization, extraHeaders);
  return r.ok
    ? r
    : { ok: false, status: statusOf(r.code, r.reason), errorCode: r.errorCode, message: r.message };
}

async function callLegacy<I extends DescMessage, O extends DescMessage>(
  h: Harness,
  protocol: "legacy-protobuf" | "legacy-json",
  method: DescMethodUnary<I, O>,
  request: MessageShape<I>,
  authorization: string | undefined,
  extraHeaders: Record<string, string>,
): Promise<Outcome<MessageShape<O>>> {
  const rule = getOption(method, http);
  const verb = rule.pattern.case?.toUpperCase() ?? "POST";
  const path = String(rule.pattern.value);
  const query = new URLSearchParams();
  let body: Uint8Array | string | undefined;
  const json = protocol === "legacy-json";
  for (const field of method.input.fields) {
    const value = (request as Record<string, unknown>)[field.localName];
    if (field.name === rule.body) {
      if (value !== undefined && field.fieldKind === "message") {
        body = json
          ? legacyJsonString(toJson(field.message, value as never))
          : toBinary(field.message, value as never);
      }
    } else if (isFieldSet(request, field)) {
      query.set(field.jsonName, String(value));
    }
  }
  const headers: Record<string, string> = { ...extraHeaders };
  if (authorization) headers.authorization = authorization;
  if (json) {
    headers.accept = "application/json";
    if (body !== undefined) headers["content-type"] = "application/json; charset=utf-8";
  }
  const res = await legacy(h, { method: verb, path: `${path}?${query}`, headers, body });
  if (res.status !== 200) {
    const errorCode = res.headers["x-service-errorcode"];
    const message = json ? String((JSON.parse(res.text) as { detail?: string }).detail) : res.text;
    return {
      ok: false,
      status: res.status,
      errorCode: typeof errorCode === "string" ? errorCode : undefined,
      message,
    };
  }
  const message =
    res.body.length === 0
      ? fromBinary(method.output, res.body)
      : json
        ? fromJson(
            method.output,
            JSON.parse(res.text, (_k, v) => (v === "true" ? true : v === "false" ? false : v)),
          )
        : fromBinary(method.output, res.body);
  return { ok: true, message };
}

/** Legacy JSON as an existing client writes it: bools as "true"/"false". */
export function legacyJsonString(value: unknown): string {
  return JSON.stringify(value, (_k, v) => (typeof v === "boolean" ? String(v) : v));
}

export function expectOk<O>(outcome: Outcome<O>): O {
  if (!outcome.ok) {
    throw new Error(
      `expected success, got ${outcome.status} ${outcome.errorCode}: ${outcome.message}`,
    );
  }
  return outcome.message;
}
