/** The Bearer authenticator without a server: the app's clock, and no key lookup for what fails size or syntax. */
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { createBearerAuthenticator } from "../../src/auth/bearer-verifier";
import { fileKeySource, type KeySource } from "../../src/auth/jwks";
import { DomainError } from "../../src/domain/errors";
import { createLogger } from "../../src/log";

const settings = {
  issuer: "https://idp.test",
  audience: "docflow-api",
  algorithms: ["ES256"],
  clockSkewS: 30,
  maxLifetimeS: 86_400,
  userClaim: "sub",
};
const log = createLogger("silent", () => undefined);
let token: string;
let lookups = 0;
let keys: KeySource;
let signWith: (claims: Record<string, unknown>) => Promise<string>;

beforeAll(async () => {
  const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
  const source = fileKeySource({ keys: [{ ...(await exportJWK(publicKey)), kid: "k1" }] });
  keys = (header, t) => {
    lookups++;
    return source(header, t);
  };
  signWith = (claims) =>
    new SignJWT({ iss: settings.issuer, aud: settings.audience, sub: "u-admin", ...claims })
      .setProtectedHeader({ alg: "ES256", kid: "k1" })
      .sign(privateKey);
  token = await new SignJWT({ iss: settings.issuer, aud: settings.audience, sub: "u-admin" })
    .setProtectedHeader({ alg: "ES256", kid: "k1" })
    .setIssuedAt(new Date("2030-01-01T00:00:00Z"))
    .setExpirationTime(new Date("2030-01-01T01:00:00Z"))
    .sign(privateKey);
});

const at = (iso: string) => () => new Date(iso);

describe("the verifying clock is the app's clock", () => {
  it("accepts and refuses by the given time, with the skew", async () => {
    const auth = createBearerAuthenticator(settings, keys, log);
    await expect(
      auth.authenticate(`Bearer ${token}`, at("2030-01-01T00:30:00Z"), undefined),
    ).resolves.toEqual({ userId: "u-admin", client: "bearer" });
    await expect(
      auth.authenticate(`Bearer ${token}`, at("2030-01-01T01:00:20Z"), undefined),
    ).resolves.toEqual({ userId: "u-admin", client: "bearer" });
    await expect(
      auth.authenticate(`Bearer ${token}`, at("2030-01-01T01:00:40Z"), undefined),
    ).rejects.toBeInstanceOf(DomainError);
    const strict = createBearerAuthenticator({ ...settings, clockSkewS: 0 }, keys, log);
    await expect(
      strict.authenticate(`Bearer ${token}`, at("2030-01-01T01:00:01Z"), undefined),
    ).rejects.toMatchObject({ challenge: 'Bearer realm="docflow-api", error="invalid_token"' });
  });

  it("a token over 8 KiB or not a compact JWS never reaches a key lookup", async () => {
    const auth = createBearerAuthenticator(settings, keys, log);
    const before = lookups;
    for (const header of [
      `Bearer ${"a".repeat(4000)}.${"b".repeat(4200)}.c`,
      "Bearer a.b",
      "Bearer a.b.c.d.e",
      "Bearer a b",
      "Bearer",
    ]) {
      await expect(
        auth.authenticate(header, at("2030-01-01T00:30:00Z"), undefined),
      ).rejects.toBeInstanceOf(DomainError);
    }
    expect(lookups).toBe(before);
  });
});

describe("a token's lifetime (docs/api.md §5.1, docs/security.md)", () => {
  const now = at("2030-01-01T00:00:00Z");
  const nowS = Date.parse("2030-01-01T00:00:00Z") / 1000;
  /** What the authenticator answers, and what it logs. */
  const verify = async (claims: Record<string, unknown>, overrides = {}) => {
    const lines: string[] = [];
    const auth = createBearerAuthenticator(
      { ...settings, ...overrides },
      keys,
      createLogger("info", (line) => lines.push(line)),
    );
    try {
      await auth.authenticate(`Bearer ${await signWith(claims)}`, now, undefined);
      return "accepted";
    } catch (error) {
      const logged = lines.map((l) => JSON.parse(l)).find((l) => l.msg === "bearer: token refused");
      return `${(error as DomainError).message} (${logged?.category})`;
    }
  };

  it("a token without exp never expires: refused (fff96f0 accepted it)", async () => {
    expect(await verify({ iat: nowS })).toBe("the access token has no expiry (no_expiry)");
  });
  it("an iat in the future beyond the skew is refused; within it, accepted", async () => {
    expect(await verify({ iat: nowS + 31, exp: nowS + 600 })).toBe(
      "the access token was issued in the future (issued_in_future)",
    );
    expect(await verify({ iat: nowS + 30, exp: nowS + 600 })).toBe("accepted");
  });
  it("an exp in the year 2200 is refused: the lifetime is at most BEARER_MAX_LIFETIME_S", async () => {
    expect(await verify({ iat: nowS, exp: Date.parse("2200-01-01T00:00:00Z") / 1000 })).toBe(
      "the access token lives longer than this service accepts (lifetime_too_long)",
    );
  });
  it("the lifetime counts from iat, or from now when the token has none, with the skew", async () => {
    expect(await verify({ iat: nowS - 600, exp: nowS + 86_400 - 600 + 30 })).toBe("accepted");
    expect(await verify({ iat: nowS - 600, exp: nowS + 86_400 - 600 + 31 })).toBe(
      "the access token lives longer than this service accepts (lifetime_too_long)",
    );
    expect(await verify({ exp: nowS + 3_600 }, { maxLifetimeS: 3_600 })).toBe("accepted");
    expect(await verify({ exp: nowS + 3_631 }, { maxLifetimeS: 3_600 })).toBe(
      "the access token lives longer than this service accepts (lifetime_too_long)",
    );
  });
});
