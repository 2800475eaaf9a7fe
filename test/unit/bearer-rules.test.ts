/**
 * The Bearer rules that need no key (docs/api.md §5.1): which scheme a header uses,
 * the shape of a Bearer header and of a compact JWS, the challenges, and how
 * verified claims become the caller. Expected texts are written out here.
 */
import { describe, expect, it } from "vitest";
import {
  BearerRefused,
  bearerChallenge,
  callerFromClaims,
  checkLifetime,
  insufficientScope,
  isBearer,
  isServiceAuth,
  MAX_TOKEN_BYTES,
  noCredentialsChallenge,
  parseBearer,
  refused,
  SERVICE_AUTH_CHALLENGE,
  serviceAuthChallenge,
} from "../../src/domain/bearer";
import { ErrorKind } from "../../src/domain/errors";

const JWS = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ1In0.c2ln";

/** What a refusal says: the log's category, the caller's status kind, code, message and challenge. */
function refusal(run: () => unknown) {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(BearerRefused);
    const r = error as BearerRefused;
    expect(r.name).toBe("BearerRefused");
    expect(r.message).toBe(r.error.message);
    return {
      failure: r.failure,
      kind: r.error.kind,
      errorCode: r.error.errorCode,
      message: r.error.message,
      challenge: r.error.challenge,
    };
  }
  throw new Error("not refused");
}

describe("which scheme a header uses", () => {
  it.each([
    ["Bearer x", true, false],
    ["bearer x", true, false],
    ["  BEARER\tx", true, false],
    ["Bearer", true, false],
    ["Bearerx", false, false],
    ["x Bearer y", false, false],
    ["ServiceAuth a=b", false, true],
    [" serviceauth", false, true],
    ["ServiceAuthX a=b", false, false],
    ["Basic abc", false, false],
    ["Basic serviceauth", false, false],
    ["x ServiceAuth a=b", false, false],
    ["", false, false],
  ])("%j: bearer %s, ServiceAuth %s", (header, bearer, serviceAuth) => {
    expect(isBearer(header)).toBe(bearer);
    expect(isServiceAuth(header)).toBe(serviceAuth);
  });
});

describe("challenges (WWW-Authenticate)", () => {
  it("each one, as a client reads it", () => {
    expect(bearerChallenge()).toBe('Bearer realm="docflow-api"');
    expect(bearerChallenge("invalid_token")).toBe(
      'Bearer realm="docflow-api", error="invalid_token"',
    );
    expect(SERVICE_AUTH_CHALLENGE).toBe('ServiceAuth realm="docflow-api"');
    expect(noCredentialsChallenge(false)).toBe('ServiceAuth realm="docflow-api"');
    expect(noCredentialsChallenge(true)).toBe(
      'ServiceAuth realm="docflow-api", Bearer realm="docflow-api"',
    );
    // SERVICE_AUTH_ALIASES: each alias's scheme after ServiceAuth, in one value.
    expect(serviceAuthChallenge()).toBe(SERVICE_AUTH_CHALLENGE);
    expect(serviceAuthChallenge(["DiadocAuth"])).toBe(
      'ServiceAuth realm="docflow-api", DiadocAuth realm="docflow-api"',
    );
    expect(noCredentialsChallenge(true, ["DiadocAuth"])).toBe(
      'ServiceAuth realm="docflow-api", DiadocAuth realm="docflow-api", Bearer realm="docflow-api"',
    );
    const scope = insufficientScope("docflow");
    expect([scope.kind, scope.errorCode, scope.message, scope.challenge]).toEqual([
      ErrorKind.PermissionDenied,
      "Http.Forbidden",
      "the access token lacks the required scope",
      'Bearer realm="docflow-api", error="insufficient_scope", scope="docflow"',
    ]);
  });
});

describe("a Bearer header: size and syntax, before any key lookup", () => {
  it.each([`Bearer ${JWS}`, `bearer   ${JWS}  `, ` Bearer ${JWS}`])(
    "%j gives the token",
    (header) => {
      expect(parseBearer(header)).toBe(JWS);
    },
  );

  it.each([
    ["no token", "Bearer"],
    ["a tab instead of a space", `Bearer\t${JWS}`],
    ["two tokens", `Bearer ${JWS} ${JWS}`],
    ["a character outside token68", `Bearer ${JWS}!`],
    ["text before the scheme", `x Bearer ${JWS}`],
    ["another scheme", `Basic ${JWS}`],
  ])("%s: malformed (invalid_request)", (_name, header) => {
    expect(refusal(() => parseBearer(header))).toEqual({
      failure: "malformed_header",
      kind: ErrorKind.Unauthenticated,
      errorCode: "Http.Unauthorized",
      message: "the Authorization header is not `Bearer <token>`",
      challenge: 'Bearer realm="docflow-api", error="invalid_request"',
    });
  });

  it.each([
    ["two segments", "a.b"],
    ["four segments", "a.b.c.d"],
    ["an empty signature", "a.b."],
    ["padding", "a.b.c=="],
    ["standard base64 characters", "a+b.c.d"],
  ])("%s: not a compact JWS (invalid_token)", (_name, token) => {
    expect(refusal(() => parseBearer(`Bearer ${token}`))).toEqual({
      failure: "token_syntax",
      kind: ErrorKind.Unauthenticated,
      errorCode: "Http.Unauthorized",
      message: "the access token is not a signed JWT",
      challenge: 'Bearer realm="docflow-api", error="invalid_token"',
    });
  });

  it("a header that cannot hold a token within the limit is refused unread (60,000 blanks)", () => {
    expect(refusal(() => parseBearer(`Bearer ${" ".repeat(60_000)}x`))).toMatchObject({
      failure: "token_too_large",
      message: "the access token is too large",
    });
    expect(refusal(() => parseBearer(`${" ".repeat(60_000)}Bearer x.y.z`)).failure).toBe(
      "token_too_large",
    );
  });

  it("a header of an 8 KiB token and 256 characters around it is read; one more is not", () => {
    const token = `${"a".repeat(4_000)}.${"b".repeat(4_189)}.c`;
    expect(token.length).toBe(8 * 1024);
    const header = `Bearer ${token}${" ".repeat(256 - 7)}`;
    expect(header.length).toBe(8 * 1024 + 256);
    expect(parseBearer(header)).toBe(token);
    expect(refusal(() => parseBearer(`${header} `)).failure).toBe("token_too_large");
  });

  it("exactly 8 KiB is read; one byte more is too large, before its syntax is looked at", () => {
    const exact = `${"a".repeat(MAX_TOKEN_BYTES - 4)}.b.c`;
    expect(exact.length).toBe(MAX_TOKEN_BYTES);
    expect(parseBearer(`Bearer ${exact}`)).toBe(exact);
    expect(refusal(() => parseBearer(`Bearer a${exact}`))).toMatchObject({
      failure: "token_too_large",
      message: "the access token is too large",
      challenge: 'Bearer realm="docflow-api", error="invalid_token"',
    });
    // Too large and not a JWS: the size is what is reported.
    expect(refusal(() => parseBearer(`Bearer ${"a".repeat(MAX_TOKEN_BYTES + 1)}`)).failure).toBe(
      "token_too_large",
    );
  });

  it("a refusal the verifier raises carries its category and an invalid_token challenge", () => {
    expect(
      refusal(() => {
        throw refused("expired", "the access token has expired");
      }),
    ).toEqual({
      failure: "expired",
      kind: ErrorKind.Unauthenticated,
      errorCode: "Http.Unauthorized",
      message: "the access token has expired",
      challenge: 'Bearer realm="docflow-api", error="invalid_token"',
    });
  });
});

describe("verified claims → the caller", () => {
  const rules = { userClaim: "sub" };

  it("the user claim is the caller's user id; another claim when configured", () => {
    expect(callerFromClaims({ sub: "u-1" }, rules)).toStrictEqual({
      userId: "u-1",
      client: "bearer",
    });
    expect(callerFromClaims({ sub: "client", uid: "u-2" }, { userClaim: "uid" })).toStrictEqual({
      userId: "u-2",
      client: "bearer",
    });
  });

  it.each([
    ["missing", {}],
    ["not a string", { sub: 7 }],
    ["empty", { sub: "" }],
    ["blank", { sub: "   " }],
    ["257 characters", { sub: "x".repeat(257) }],
    ["257 code points", { sub: "😀".repeat(257) }],
    ["a control character", { sub: "u\u0000" }],
  ])("a user claim %s: 401 user_claim", (_name, claims) => {
    expect(refusal(() => callerFromClaims(claims, rules))).toMatchObject({
      failure: "user_claim",
      message: "the access token does not name a user",
      challenge: 'Bearer realm="docflow-api", error="invalid_token"',
    });
  });

  it("256 characters (code points, as every identifier) is a user id", () => {
    expect(callerFromClaims({ sub: "x".repeat(256) }, rules)).toStrictEqual({
      userId: "x".repeat(256),
      client: "bearer",
    });
    expect(callerFromClaims({ sub: "😀".repeat(256) }, rules)).toStrictEqual({
      userId: "😀".repeat(256),
      client: "bearer",
    });
  });

  it("allowed clients: client_id, else azp; anything else refused", () => {
    const only = { ...rules, allowedClientIds: ["app"] };
    expect(callerFromClaims({ sub: "u", client_id: "app" }, only)).toStrictEqual({
      userId: "u",
      client: "app",
    });
    expect(callerFromClaims({ sub: "u", azp: "app" }, only)).toStrictEqual({
      userId: "u",
      client: "app",
    });
    // client_id wins over azp when both are there.
    for (const claims of [
      { sub: "u", client_id: "other", azp: "app" },
      { sub: "u", azp: "other" },
      { sub: "u" },
      { sub: "u", client_id: 7 },
      { sub: "u", client_id: 7, azp: 8 },
    ]) {
      expect(
        refusal(() => callerFromClaims(claims, only)),
        JSON.stringify(claims),
      ).toMatchObject({
        failure: "client_not_allowed",
        message: "the access token's client is not allowed",
      });
    }
    // Any one of several allowed clients.
    const two = { ...rules, allowedClientIds: ["app", "tool"] };
    expect(callerFromClaims({ sub: "u", client_id: "tool" }, two)).toStrictEqual({
      userId: "u",
      client: "tool",
    });
    expect(callerFromClaims({ sub: "u", azp: "app" }, two)).toStrictEqual({
      userId: "u",
      client: "app",
    });
    // No list: any client, or none.
    expect(callerFromClaims({ sub: "u", client_id: "anyone" }, rules)).toStrictEqual({
      userId: "u",
      client: "anyone",
    });
  });

  it("the required scope: in `scope` (space-separated) or `scp` (array or string); missing it is not a 401", () => {
    const scoped = { ...rules, requiredScope: "docflow" };
    for (const claims of [
      { sub: "u", scope: "openid docflow" },
      { sub: "u", scope: "  docflow  " },
      { sub: "u", scp: ["x", "docflow"] },
      { sub: "u", scp: "x docflow" },
      { sub: "u", scope: "x", scp: ["docflow"] },
    ]) {
      expect(callerFromClaims(claims, scoped), JSON.stringify(claims)).toStrictEqual({
        userId: "u",
        client: "bearer",
      });
    }
    for (const claims of [
      { sub: "u" },
      { sub: "u", scope: "docflowx" },
      { sub: "u", scope: ["docflow"] },
      { sub: "u", scp: [7, "x"] },
      { sub: "u", scp: 7 },
    ]) {
      expect(callerFromClaims(claims, scoped), JSON.stringify(claims)).toStrictEqual({
        userId: "u",
        client: "bearer",
        missingScope: "docflow",
      });
    }
    // No required scope: none is missing.
    expect(callerFromClaims({ sub: "u" }, rules)).toStrictEqual({ userId: "u", client: "bearer" });
  });
});

describe("a token's lifetime, after its signature (checkLifetime)", () => {
  const now = 1_900_000_000;
  const check = (claims: Record<string, unknown>, skew = 30, max = 3_600) => {
    try {
      checkLifetime(claims, now, skew, max);
      return "accepted";
    } catch (error) {
      return (error as BearerRefused).failure;
    }
  };
  it("exp is required, as a number", () => {
    expect(check({})).toBe("no_expiry");
    expect(check({ exp: String(now + 60) })).toBe("no_expiry");
    expect(check({ exp: now + 60 })).toBe("accepted");
    expect(refusal(() => checkLifetime({}, now, 30, 3_600))).toEqual({
      failure: "no_expiry",
      kind: ErrorKind.Unauthenticated,
      errorCode: "Http.Unauthorized",
      message: "the access token has no expiry",
      challenge: 'Bearer realm="docflow-api", error="invalid_token"',
    });
  });
  it("iat later than now by more than the skew: refused; by the skew exactly, accepted", () => {
    expect(check({ iat: now + 31, exp: now + 600 })).toBe("issued_in_future");
    expect(check({ iat: now + 30, exp: now + 600 })).toBe("accepted");
    expect(check({ iat: now + 1, exp: now + 600 }, 0)).toBe("issued_in_future");
    expect(check({ iat: String(now + 1000), exp: now + 600 })).toBe("accepted");
    expect(
      refusal(() => checkLifetime({ iat: now + 31, exp: now + 600 }, now, 30, 3_600)).message,
    ).toBe("the access token was issued in the future");
  });
  it("exp − iat (exp − now without iat) at most the lifetime plus the skew", () => {
    expect(check({ iat: now, exp: now + 3_630 })).toBe("accepted");
    expect(check({ iat: now, exp: now + 3_631 })).toBe("lifetime_too_long");
    expect(check({ iat: now - 100, exp: now + 3_530 })).toBe("accepted");
    expect(check({ iat: now - 100, exp: now + 3_531 })).toBe("lifetime_too_long");
    expect(check({ exp: now + 3_630 })).toBe("accepted");
    expect(check({ exp: now + 3_631 })).toBe("lifetime_too_long");
    expect(check({ exp: now + 3_601 }, 0)).toBe("lifetime_too_long");
    expect(refusal(() => checkLifetime({ exp: now + 9_999 }, now, 0, 60)).message).toBe(
      "the access token lives longer than this service accepts",
    );
  });
});
