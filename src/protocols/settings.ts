/**
 * A call's settings from its headers, the same for every protocol but for
 * the names (docs/api.md §3): the client's timeout, the request's coding
 * (an unknown one is refused before the body is read: unimplemented, with
 * the codings accepted), and the answer's coding. Each protocol gives its
 * dialect: gRPC's `grpc-timeout` / `grpc-encoding`, Connect's
 * `connect-timeout-ms` / `content-encoding` or `connect-content-encoding`.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { ACCEPTED_CODINGS, answerCoding, codingOf } from "../wire/compression";
import { headerOf, type NodeRequest } from "../wire/http";
import type { CallSettings, Checked, Codec, ContentType } from "./face";

/** How a protocol names its settings. */
export interface SettingsDialect {
  /** The timeout header, how its error names it ("grpc timeout"), and its value in ms (undefined: malformed). */
  readonly timeoutHeader: string;
  readonly timeoutName: string;
  timeoutMs(value: string): number | undefined;
  /** The header that names the request's coding. */
  readonly codingHeader: string;
  /** The header that lists the codings the client accepts (also named in the refusal of an unknown one). */
  readonly acceptHeader: string;
}

/** The client's deadline in ms, from its timeout header when well formed. */
export function clientTimeoutMs(req: NodeRequest, dialect: SettingsDialect): number | undefined {
  const value = headerOf(req, dialect.timeoutHeader);
  return value === null ? undefined : dialect.timeoutMs(value);
}

/**
 * The settings a request's headers give, or the first protocol error in
 * them: an unknown coding, then a malformed timeout. `requested` is the
 * request's coding when it is not in `dialect.codingHeader` (Connect GET: the query).
 */
export function readSettings(
  req: NodeRequest,
  dialect: SettingsDialect,
  type: ContentType,
  codec: Codec,
  requested: string | null = headerOf(req, dialect.codingHeader),
): Checked<CallSettings> {
  const requestCoding = codingOf(requested);
  if (requestCoding === undefined) {
    return {
      ok: false,
      error: new ConnectError(
        `unknown compression "${(requested ?? "").slice(0, 40)}": supported encodings are ${ACCEPTED_CODINGS}`,
        Code.Unimplemented,
        { [dialect.acceptHeader]: ACCEPTED_CODINGS },
      ),
    };
  }
  const timeout = headerOf(req, dialect.timeoutHeader);
  const timeoutMs = timeout === null ? undefined : dialect.timeoutMs(timeout);
  if (timeout !== null && timeoutMs === undefined) {
    return {
      ok: false,
      error: new ConnectError(
        `protocol error: invalid ${dialect.timeoutName} value: ${timeout.slice(0, 40)}`,
        Code.InvalidArgument,
      ),
    };
  }
  return {
    ok: true,
    value: {
      type,
      codec,
      timeoutMs,
      requestCoding,
      answerCoding: answerCoding(requestCoding, headerOf(req, dialect.acceptHeader)),
    },
  };
}
