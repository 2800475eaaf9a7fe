/**
 * The one error table (src/wire/errors.ts) against sources written apart
 * from it: connect-es's own Connect-protocol HTTP statuses, the Connect
 * protocol's and gRPC's code names (connect-es's `codeToString`, the
 * transcoder's `googleCodeName`), gRPC's status numbers, docs/api.md §4's legacy statuses and
 * RFC 9110's titles.
 */
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { codeToHttpStatus, codeToString } from "@connectrpc/connect/protocol-connect";
import { describe, expect, it } from "vitest";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb";
import {
  clientOverShare,
  conflict,
  DomainError,
  ErrorKind,
  invalidArgument,
  notFound,
  overloaded,
  permissionDenied,
  preconditionFailed,
  storageUnavailable,
  subscriptionEnded,
  unauthenticated,
  unsupportedMediaType,
} from "../../src/domain/errors";
import { tooManyFailures } from "../../src/domain/failure-budget";
import { googleCodeName } from "../../src/transcoder/status";
import {
  answerHeadersOf,
  CHALLENGE_HEADER,
  CODES,
  challengeOf,
  codeOfGrpcStatus,
  connectToLegacyError,
  domainToConnectError,
  HTTP_ERRORS,
  INTERNAL_MESSAGE,
  legacyError,
  RETRY_AFTER_HEADER,
  RETRY_PUSHBACK_HEADER,
  restStatusOf,
} from "../../src/wire/errors";

/** Every code but OK, as gRPC numbers them (0 is OK, 1–16 the rest). */
const ALL_CODES: readonly Code[] = Array.from({ length: 16 }, (_, i) => (i + 1) as Code);

/** gRPC's names of its status codes (grpc/doc/statuscodes.md). */
const GRPC_NAMES: readonly string[] = [
  "OK",
  "CANCELLED",
  "UNKNOWN",
  "INVALID_ARGUMENT",
  "DEADLINE_EXCEEDED",
  "NOT_FOUND",
  "ALREADY_EXISTS",
  "PERMISSION_DENIED",
  "RESOURCE_EXHAUSTED",
  "FAILED_PRECONDITION",
  "ABORTED",
  "OUT_OF_RANGE",
  "UNIMPLEMENTED",
  "INTERNAL",
  "UNAVAILABLE",
  "DATA_LOSS",
  "UNAUTHENTICATED",
];

/** The Connect protocol's names of the codes (connectrpc.com/docs/protocol, "Error Codes"). */
const CONNECT_NAMES: readonly string[] = [
  "canceled",
  "unknown",
  "invalid_argument",
  "deadline_exceeded",
  "not_found",
  "already_exists",
  "permission_denied",
  "resource_exhausted",
  "failed_precondition",
  "aborted",
  "out_of_range",
  "unimplemented",
  "internal",
  "unavailable",
  "data_loss",
  "unauthenticated",
];

describe("codes: Connect statuses as connect-es has them; one name for each form of a code", () => {
  it.each(ALL_CODES)("code %i", (code) => {
    expect(CODES[code].connectStatus).toBe(codeToHttpStatus(code));
  });

  it("every code has a row, and only codes do", () => {
    expect(
      Object.keys(CODES)
        .map(Number)
        .sort((a, b) => a - b),
    ).toEqual([...ALL_CODES]);
  });

  it("Connect's names are connect-es's codeToString (marked internal there: this pins them)", () => {
    expect(ALL_CODES.map(codeToString)).toEqual(CONNECT_NAMES);
  });

  it("google.rpc.Code names as gRPC spells them (CANCELLED with two Ls): metric labels, span attributes (docs/api.md §9.1), google.rpc.Status JSON", () => {
    expect(["OK", ...ALL_CODES.map(googleCodeName)]).toEqual(GRPC_NAMES);
  });

  it("gRPC status numbers: 0 is OK, 1–16 themselves, anything else unknown", () => {
    expect(codeOfGrpcStatus(0)).toBeNull();
    for (const code of ALL_CODES) expect(codeOfGrpcStatus(code)).toBe(code);
    for (const other of [17, 99, -1, 1.5]) expect(codeOfGrpcStatus(other)).toBe(Code.Unknown);
  });
});

describe("legacy statuses (docs/api.md §4)", () => {
  const expected: Readonly<Record<Code, number>> = {
    [Code.Canceled]: 499,
    [Code.Unknown]: 500,
    [Code.InvalidArgument]: 400,
    [Code.DeadlineExceeded]: 500,
    [Code.NotFound]: 404,
    [Code.AlreadyExists]: 409,
    [Code.PermissionDenied]: 403,
    // 413, never 429: SDKs retry a 429.
    [Code.ResourceExhausted]: 413,
    // 402 only with the subscription's ErrorInfo (below).
    [Code.FailedPrecondition]: 400,
    [Code.Aborted]: 409,
    [Code.OutOfRange]: 400,
    [Code.Unimplemented]: 501,
    [Code.Internal]: 500,
    [Code.Unavailable]: 500,
    [Code.DataLoss]: 500,
    [Code.Unauthenticated]: 401,
  };
  it.each(ALL_CODES)("a code %i with no ErrorInfo of ours", (code) => {
    const legacy = connectToLegacyError(new ConnectError("words", code));
    expect(legacy.status).toBe(expected[code]);
    expect(legacy.errorCode).toBe(HTTP_ERRORS[legacy.status].errorCode);
    // A 5xx says nothing of its cause; a 4xx says what was wrong.
    expect(legacy.message).toBe(legacy.status >= 500 ? INTERNAL_MESSAGE : "words");
  });
});

describe("domain errors on every wire", () => {
  const cases: readonly [DomainError, Code, number, string][] = [
    [invalidArgument("boxId is required"), Code.InvalidArgument, 400, "INVALID_ARGUMENT"],
    [
      invalidArgument("unknown Id", "Subscriptions.UnknownId"),
      Code.InvalidArgument,
      400,
      "INVALID_ARGUMENT",
    ],
    [
      unauthenticated("no header", 'ServiceAuth realm="x"'),
      Code.Unauthenticated,
      401,
      "UNAUTHENTICATED",
    ],
    [subscriptionEnded(), Code.FailedPrecondition, 402, "API_SUBSCRIPTION_ENDED"],
    [permissionDenied("no rights"), Code.PermissionDenied, 403, "PERMISSION_DENIED"],
    [notFound("no message", "Message.NotFound"), Code.NotFound, 404, "NOT_FOUND"],
    [conflict("again", "Restore.AlreadyRestored"), Code.AlreadyExists, 409, "ALREADY_EXISTS"],
    [unsupportedMediaType("zstd"), Code.InvalidArgument, 415, "UNSUPPORTED_MEDIA_TYPE"],
    [storageUnavailable(new Error("driver words")), Code.Unavailable, 500, "UNAVAILABLE"],
    [overloaded(1), Code.Unavailable, 503, "OVERLOADED"],
    [clientOverShare(2), Code.ResourceExhausted, 429, "CLIENT_OVER_SHARE"],
    [tooManyFailures(3), Code.ResourceExhausted, 429, "AUTH_FAILURE_BUDGET"],
    [
      preconditionFailed("changed", "CounteragentGroup.EtagMismatch"),
      Code.FailedPrecondition,
      412,
      "ETAG_MISMATCH",
    ],
  ];

  it.each(cases)("%s", (domain, code, status, reason) => {
    const error = domainToConnectError(domain);
    expect(error.code).toBe(code);
    expect(error.rawMessage).toBe(domain.message);
    expect(error.cause).toBe(domain.cause);
    const [info, ...more] = error.findDetails(ErrorInfoSchema);
    expect(more).toEqual([]);
    expect(info?.reason).toBe(reason);
    expect(info?.domain).toBe("docflow-api");
    expect(info?.metadata).toEqual({ errorCode: domain.errorCode });

    const legacy = connectToLegacyError(error);
    expect(legacy.status).toBe(status);
    // A 503 is a refusal that did nothing: its words and code are shown (docs/api.md §4.1).
    if (status >= 500 && status !== 503) {
      // The driver's words and the error code stay in the log.
      expect(legacy).toEqual({
        status,
        errorCode: "Http.InternalServerError",
        message: INTERNAL_MESSAGE,
      });
    } else {
      expect(legacy).toEqual({ status, errorCode: domain.errorCode, message: domain.message });
    }
  });

  it("the resource API's status: the code's Connect status, but 412 for a stale If-Match and 402 for an ended subscription (not failed_precondition's 400)", () => {
    expect(restStatusOf(domainToConnectError(preconditionFailed("changed", "X.Y")))).toBe(412);
    expect(restStatusOf(domainToConnectError(subscriptionEnded()))).toBe(402);
    expect(restStatusOf(new ConnectError("x", Code.FailedPrecondition))).toBe(400);
    expect(restStatusOf(domainToConnectError(notFound("no", "X.NotFound")))).toBe(404);
    expect(restStatusOf(new ConnectError("x", Code.Unavailable))).toBe(503);
  });

  it("a challenge travels as the error's metadata, and only when there is one", () => {
    const challenged = domainToConnectError(unauthenticated("expired", 'Bearer realm="x"'));
    expect(challenged.metadata.get(CHALLENGE_HEADER)).toBe('Bearer realm="x"');
    expect(challengeOf(challenged)).toBe('Bearer realm="x"');
    const plain = domainToConnectError(unauthenticated("expired"));
    expect([...plain.metadata.keys()]).toEqual([]);
    expect(challengeOf(plain)).toBeUndefined();
  });

  /** A ConnectError carrying one ErrorInfo. */
  const withInfo = (code: Code, domain: string, reason: string, errorCode: string) =>
    new ConnectError("x", code, undefined, [
      {
        desc: ErrorInfoSchema,
        value: create(ErrorInfoSchema, { reason, domain, metadata: { errorCode } }),
      },
    ]);

  it("an ErrorInfo of another domain is not ours: the code decides", () => {
    const foreign = withInfo(
      Code.FailedPrecondition,
      "example.com",
      "API_SUBSCRIPTION_ENDED",
      "Their.Code",
    );
    expect(connectToLegacyError(foreign)).toEqual({
      status: 400,
      errorCode: "Http.BadRequest",
      message: "x",
    });
  });

  it("an ErrorInfo of ours with a reason the table does not know: the code decides, its errorCode kept", () => {
    const odd = withInfo(Code.NotFound, "docflow-api", "SOMETHING_ELSE", "Thing.Missing");
    expect(connectToLegacyError(odd)).toEqual({
      status: 404,
      errorCode: "Thing.Missing",
      message: "x",
    });
  });

  it("a 5xx carries neither its error code nor its words, whatever its detail says", () => {
    for (const [code, status, errorCode] of [
      [Code.Internal, 500, "Http.InternalServerError"],
      [Code.Unimplemented, 501, "Http.NotImplemented"],
    ] as const) {
      const odd = withInfo(code, "docflow-api", "SOMETHING_ELSE", "Secret.Detail");
      expect(connectToLegacyError(odd)).toEqual({
        status,
        errorCode,
        message: "unexpected processing error",
      });
    }
  });

  it("admission's refusals say when to come back, in the legacy answer's headers too", () => {
    expect(overloaded(1).message).toBe("the service is over its capacity; retry after 1 s");
    expect(clientOverShare(3).message).toBe(
      "this client is over its share of the service; retry after 3 s",
    );
    expect(overloaded(1).errorCode).toBe("Service.Overloaded");
    expect(clientOverShare(1).errorCode).toBe("Service.ClientOverShare");
    const refusal = domainToConnectError(overloaded(1));
    refusal.metadata.set(RETRY_AFTER_HEADER, "1");
    expect(answerHeadersOf(refusal)).toEqual({ "retry-after": "1" });
    const challenged = domainToConnectError(unauthenticated("expired", 'Bearer realm="x"'));
    expect(answerHeadersOf(challenged)).toEqual({ "www-authenticate": 'Bearer realm="x"' });
    expect(answerHeadersOf(domainToConnectError(notFound("no", "X.Y")))).toEqual({});
  });

  it("a refusal that did nothing says when to come back: Retry-After in s, grpc-retry-pushback-ms in ms", () => {
    for (const [domain, seconds] of [
      [tooManyFailures(7), 7],
      [overloaded(2), 2],
      [clientOverShare(3), 3],
    ] as const) {
      const error = domainToConnectError(domain);
      expect(error.metadata.get(RETRY_AFTER_HEADER)).toBe(String(seconds));
      expect(error.metadata.get("grpc-retry-pushback-ms")).toBe(String(seconds * 1000));
      expect(answerHeadersOf(error)).toEqual({ "retry-after": String(seconds) });
    }
    expect(tooManyFailures(7).errorCode).toBe("Auth.TooManyFailures");
    expect(tooManyFailures(7).message).toBe(
      "too many failed authentications from this client; retry after 7 s",
    );
    const plain = domainToConnectError(notFound("no", "X.Y"));
    expect(plain.metadata.get(RETRY_AFTER_HEADER)).toBeNull();
    expect(plain.metadata.get("grpc-retry-pushback-ms")).toBeNull();
  });

  it("every domain kind has a row", () => {
    for (const kind of Object.values(ErrorKind)) {
      const error = domainToConnectError(new DomainError(kind, "Some.Code", "m"));
      expect(error.findDetails(ErrorInfoSchema)).toHaveLength(1);
    }
  });
});

describe("the refusal headers clients read, by the names their specifications give", () => {
  it("Retry-After (RFC 9110 §10.2.3) and grpc-retry-pushback-ms (gRFC A6), lower case as HTTP/2 sends them", () => {
    expect(RETRY_AFTER_HEADER).toBe("retry-after");
    expect(RETRY_PUSHBACK_HEADER).toBe("grpc-retry-pushback-ms");
  });
});

describe("plain HTTP errors", () => {
  /** RFC 9110 §15 (and 499, nginx's, for logs). */
  const titles: Readonly<Record<number, string>> = {
    400: "Bad Request",
    401: "Unauthorized",
    402: "Payment Required",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    408: "Request Timeout",
    409: "Conflict",
    412: "Precondition Failed",
    413: "Content Too Large",
    // RFC 6585 §4.
    429: "Too Many Requests",
    415: "Unsupported Media Type",
    431: "Request Header Fields Too Large",
    499: "Client Closed Request",
    500: "Internal Server Error",
    501: "Not Implemented",
    503: "Service Unavailable",
    505: "HTTP Version Not Supported",
  };
  it("each status has its RFC title and an X-Service-ErrorCode of the title's words", () => {
    expect(Object.keys(HTTP_ERRORS).map(Number)).toEqual(Object.keys(titles).map(Number));
    for (const [status, row] of Object.entries(HTTP_ERRORS)) {
      expect(row.title).toBe(titles[Number(status)]);
    }
    expect(HTTP_ERRORS[413].errorCode).toBe("Http.PayloadTooLarge");
    expect(HTTP_ERRORS[505].errorCode).toBe("Http.VersionNotSupported");
    expect(HTTP_ERRORS[400].errorCode).toBe("Http.BadRequest");
  });

  it("legacyError: the status's own code unless one is given", () => {
    expect(legacyError(404, "no such path")).toEqual({
      status: 404,
      errorCode: "Http.NotFound",
      message: "no such path",
    });
    expect(legacyError(404, "gone", "Message.NotFound")).toEqual({
      status: 404,
      errorCode: "Message.NotFound",
      message: "gone",
    });
  });
});
