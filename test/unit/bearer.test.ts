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

beforeAll(async () => {
  const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
  const source = fileKeySource({ keys: [{ ...(await exportJWK(publicKey)), kid: "k1" }] });
  keys = (header, t) => {
    lookups++;
    return source(header, t);
  };
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
