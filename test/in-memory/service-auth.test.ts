/**
 * ServiceAuth (docs/api.md §5): the header's grammar, word for word, and the checks
 * of the key and the token against the stored credentials (the real store on
 * the test database), with the expiry decided by the clock given.
 */
import { describe, expect, it } from "vitest";
import {
  authenticate,
  hashSecret,
  parseServiceAuth,
  serviceAuthSpellings,
} from "../../src/domain/auth";
import { DomainError, ErrorKind } from "../../src/domain/errors";
import { DISABLED_KEY, KEY, SDK_ALIASES, sdkAuthHeader, USERS } from "../support/fixture";
import { useInMemory } from "../support/harness";

const h = useInMemory();

/** What a refused header says to the caller. */
async function refusal(run: () => unknown) {
  try {
    await run();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    const e = error as DomainError;
    return { kind: e.kind, errorCode: e.errorCode, message: e.message, challenge: e.challenge };
  }
  throw new Error("not refused");
}
const unauthenticated = (message: string) => ({
  kind: ErrorKind.Unauthenticated,
  errorCode: "Http.Unauthorized",
  message,
  challenge: 'ServiceAuth realm="docflow-api"',
});

describe("the header's grammar", () => {
  it.each([
    ["the contract's (docs/api.md) form", "ServiceAuth svcauth_api_client_id=k, svcauth_token=t"],
    ["no space after the comma", "ServiceAuth svcauth_api_client_id=k,svcauth_token=t"],
    [
      "the scheme in any case, spaces around it",
      "  serviceAUTH   svcauth_api_client_id=k , svcauth_token=t  ",
    ],
    ["names in any case", "ServiceAuth SVCAUTH_API_CLIENT_ID=k, Svcauth_Token=t"],
    ["quoted values", 'ServiceAuth svcauth_api_client_id="k", svcauth_token="t"'],
    ["spaces around =", "ServiceAuth svcauth_api_client_id = k, svcauth_token= t"],
    ["the other order", "ServiceAuth svcauth_token=t, svcauth_api_client_id=k"],
    ["an unknown parameter besides", "ServiceAuth svcauth_api_client_id=k, x=y, svcauth_token=t"],
  ])("%s", (_name, header) => {
    expect(parseServiceAuth(header)).toEqual({ apiKey: "k", token: "t" });
  });

  it("a value is everything after the first '=' (base64 tokens carry '=', '+' and '/')", () => {
    expect(
      parseServiceAuth("ServiceAuth svcauth_api_client_id=a=b, svcauth_token=dG9r+ZW4/c2VjcmV0=="),
    ).toEqual({
      apiKey: "a=b",
      token: "dG9r+ZW4/c2VjcmV0==",
    });
    expect(
      parseServiceAuth('ServiceAuth svcauth_api_client_id="k,1", svcauth_token=" t "'),
    ).toEqual({
      apiKey: "k,1",
      token: " t ",
    });
  });

  it.each([
    [null, "the Authorization header is missing"],
    [undefined, "the Authorization header is missing"],
    ["", "the Authorization header is missing"],
    [" \t", "the Authorization header is missing"],
    ["Bearer abc", "the Authorization header must use the ServiceAuth scheme"],
    ["ServiceAuth", "the Authorization header must use the ServiceAuth scheme"],
    ["xServiceAuth svcauth_token=t", "the Authorization header must use the ServiceAuth scheme"],
    ["ServiceAuthsvcauth_token=t", "the Authorization header must use the ServiceAuth scheme"],
    ["ServiceAuth svcauth_api_client_id", "the Authorization header is malformed"],
    ["ServiceAuth =k", "the Authorization header is malformed"],
    ["ServiceAuth svcauth_token=t, !!!", "the Authorization header is malformed"],
    [
      "ServiceAuth svcauth_token=t, svcauth_token=u, svcauth_api_client_id=k",
      "the Authorization header repeats svcauth_token",
    ],
    [
      "ServiceAuth svcauth_token=t, SVCAUTH_TOKEN=u",
      "the Authorization header repeats svcauth_token",
    ],
    [
      "ServiceAuth svcauth_token=t",
      "the Authorization header needs svcauth_api_client_id and svcauth_token",
    ],
    [
      "ServiceAuth svcauth_api_client_id=k",
      "the Authorization header needs svcauth_api_client_id and svcauth_token",
    ],
    [
      "ServiceAuth svcauth_api_client_id=, svcauth_token=t",
      "the Authorization header needs svcauth_api_client_id and svcauth_token",
    ],
    [
      'ServiceAuth svcauth_api_client_id=k, svcauth_token=""',
      "the Authorization header needs svcauth_api_client_id and svcauth_token",
    ],
  ])("%j: %s", async (header, message) => {
    expect(await refusal(() => parseServiceAuth(header))).toEqual(unauthenticated(message));
  });
});

/**
 * One wording whatever was wrong (docs/security.md, "What a 401 tells"): a
 * 401 never says whether the API key exists.
 */
const REFUSED = "the API key or the token is unknown, disabled or expired";

describe("the key and the token against the stored credentials", () => {
  const header = (key: string, token: string) =>
    `ServiceAuth svcauth_api_client_id=${key}, svcauth_token=${token}`;
  const expiresAt = async (token: string) =>
    (await h.db.collection("tokens").findOne({ _id: hashSecret(token) as never }))
      ?.expiresAt as Date;

  it("only hashes are stored: the SHA-256 of the secret, in hex", async () => {
    expect(hashSecret("abc")).toBe(
      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    );
    expect(await expiresAt(USERS.admin.token)).toBeInstanceOf(Date);
  });

  it("a known, enabled key and a live token: the token's user, from the key's client", async () => {
    const now = () => new Date("2030-01-01T00:00:00Z");
    expect(await authenticate(header(KEY, USERS.clerk.token), h.deps.credentials, now)).toEqual({
      userId: USERS.clerk.userId,
      client: "Test client",
    });
  });

  it("an unknown key, a disabled one: 401, whatever the token", async () => {
    const now = () => new Date("2030-01-01T00:00:00Z");
    for (const key of ["no-such-key", DISABLED_KEY]) {
      expect(
        await refusal(() => authenticate(header(key, USERS.admin.token), h.deps.credentials, now)),
      ).toEqual(unauthenticated(REFUSED));
    }
  });

  it("an unknown key, a disabled key, an unknown token and an expired token: the same 401, word for word", async () => {
    const now = () => new Date("2030-01-01T00:00:00Z");
    const answers = [];
    for (const [key, token] of [
      ["no-such-key", USERS.admin.token],
      [DISABLED_KEY, USERS.admin.token],
      [KEY, "no-such-token"],
      [KEY, USERS.expired.token],
      ["no-such-key", "no-such-token"],
    ] as const) {
      answers.push(await refusal(() => authenticate(header(key, token), h.deps.credentials, now)));
    }
    expect(new Set(answers.map((a) => JSON.stringify(a))).size).toBe(1);
    expect(answers[0]).toEqual(unauthenticated(REFUSED));
  });

  it("an unknown token: 401", async () => {
    const now = () => new Date("2030-01-01T00:00:00Z");
    expect(
      await refusal(() => authenticate(header(KEY, "no-such-token"), h.deps.credentials, now)),
    ).toEqual(unauthenticated(REFUSED));
  });

  it("a token is refused from its expiry on, to the millisecond", async () => {
    const at = await expiresAt(USERS.admin.token);
    const before = () => new Date(at.getTime() - 1);
    const exactly = () => new Date(at.getTime());
    expect(await authenticate(header(KEY, USERS.admin.token), h.deps.credentials, before)).toEqual({
      userId: USERS.admin.userId,
      client: "Test client",
    });
    expect(
      await refusal(() =>
        authenticate(header(KEY, USERS.admin.token), h.deps.credentials, exactly),
      ),
    ).toEqual(unauthenticated(REFUSED));
  });
});

describe("an SDK's spelling (SERVICE_AUTH_ALIASES) against the stored credentials", () => {
  const sdk = serviceAuthSpellings(SDK_ALIASES);
  const now = () => new Date("2030-01-01T00:00:00Z");
  const both = 'ServiceAuth realm="docflow-api", DiadocAuth realm="docflow-api"';

  it("the same caller as ServiceAuth: the token's user, from the key's client", async () => {
    expect(await authenticate(sdkAuthHeader("clerk"), h.deps.credentials, now, sdk)).toEqual({
      userId: USERS.clerk.userId,
      client: "Test client",
    });
  });

  it("the same refusals, each challenging both spellings", async () => {
    for (const [header, message] of [
      [sdkAuthHeader("admin", "no-such-key"), REFUSED],
      [sdkAuthHeader("admin", DISABLED_KEY), REFUSED],
      [sdkAuthHeader("expired"), REFUSED],
    ]) {
      expect(await refusal(() => authenticate(header, h.deps.credentials, now, sdk))).toEqual({
        ...unauthenticated(message),
        challenge: both,
      });
    }
  });
});
