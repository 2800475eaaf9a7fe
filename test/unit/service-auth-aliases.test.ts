/**
 * docs/api.md §5, SERVICE_AUTH_ALIASES: the ServiceAuth header in an SDK's
 * own spelling, word for word (src/domain/auth.ts), and the words of the
 * 401s for every set of schemes. Expected texts are written out here.
 */
import { describe, expect, it } from "vitest";
import {
  parseServiceAuth,
  SERVICE_AUTH_ONLY,
  type ServiceAuthAlias,
  serviceAuthSpellings,
} from "../../src/domain/auth";
import { DomainError, ErrorKind } from "../../src/domain/errors";

const DIADOC: ServiceAuthAlias = { scheme: "DiadocAuth", prefix: "ddauth" };
const sdk = serviceAuthSpellings([DIADOC]);
const BOTH = 'ServiceAuth realm="docflow-api", DiadocAuth realm="docflow-api"';

/** What a refused header says to the caller. */
function refusal(run: () => unknown) {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    const e = error as DomainError;
    return { kind: e.kind, errorCode: e.errorCode, message: e.message, challenge: e.challenge };
  }
  throw new Error("not refused");
}
const unauthenticated = (message: string, challenge = BOTH) => ({
  kind: ErrorKind.Unauthenticated,
  errorCode: "Http.Unauthorized",
  message,
  challenge,
});

describe("the SDK's spelling is read as ServiceAuth", () => {
  it.each([
    [
      "the Java SDK's own (no space after the comma)",
      "DiadocAuth ddauth_api_client_id=k,ddauth_token=t",
    ],
    ["a space after the comma", "DiadocAuth ddauth_api_client_id=k, ddauth_token=t"],
    [
      "the scheme in any case, spaces around it",
      "  diadocAUTH   ddauth_api_client_id=k , ddauth_token=t ",
    ],
    ["names in any case", "DiadocAuth DDAUTH_API_CLIENT_ID=k, Ddauth_Token=t"],
    ["quoted values", 'DiadocAuth ddauth_api_client_id="k",ddauth_token="t"'],
    ["the other order", "DiadocAuth ddauth_token=t,ddauth_api_client_id=k"],
    ["an unknown parameter besides", "DiadocAuth ddauth_api_client_id=k,x=y,ddauth_token=t"],
  ])("%s", (_name, header) => {
    expect(parseServiceAuth(header, sdk)).toEqual({ apiKey: "k", token: "t" });
  });

  it("a value is everything after the first '=', as in ServiceAuth", () => {
    expect(
      parseServiceAuth("DiadocAuth ddauth_api_client_id=a=b,ddauth_token=dG9r+ZW4/c2VjcmV0==", sdk),
    ).toEqual({ apiKey: "a=b", token: "dG9r+ZW4/c2VjcmV0==" });
  });

  it("the canonical spelling keeps working beside it", () => {
    expect(parseServiceAuth("ServiceAuth svcauth_api_client_id=k, svcauth_token=t", sdk)).toEqual({
      apiKey: "k",
      token: "t",
    });
  });

  it("several aliases: each with its own prefix, whatever its case as configured", () => {
    const two = serviceAuthSpellings([DIADOC, { scheme: "Legacy-Auth.v2", prefix: "LEG" }]);
    expect(parseServiceAuth("legacy-auth.V2 leg_api_client_id=k,LEG_token=t", two)).toEqual({
      apiKey: "k",
      token: "t",
    });
    expect(parseServiceAuth("DiadocAuth ddauth_api_client_id=k,ddauth_token=t", two)).toEqual({
      apiKey: "k",
      token: "t",
    });
  });
});

describe("what an alias header is refused for", () => {
  it.each([
    [
      "DiadocAuth ddauth_api_client_id=k,svcauth_token=t",
      "the Authorization header mixes spellings: svcauth_token with the DiadocAuth scheme",
    ],
    [
      "DiadocAuth ddauth_api_client_id=k,ddauth_token=t,SVCAUTH_API_CLIENT_ID=k",
      "the Authorization header mixes spellings: svcauth_api_client_id with the DiadocAuth scheme",
    ],
    [
      "ServiceAuth svcauth_api_client_id=k, ddauth_token=t",
      "the Authorization header mixes spellings: ddauth_token with the ServiceAuth scheme",
    ],
    // The SDK before AuthManager.setCredentials: the key alone.
    [
      "DiadocAuth ddauth_api_client_id=k",
      "the Authorization header needs ddauth_api_client_id and ddauth_token",
    ],
    [
      'DiadocAuth ddauth_api_client_id=k,ddauth_token=""',
      "the Authorization header needs ddauth_api_client_id and ddauth_token",
    ],
    [
      "DiadocAuth svcauth_api_client_id=k, svcauth_token=t",
      "the Authorization header mixes spellings: svcauth_api_client_id with the DiadocAuth scheme",
    ],
    ["DiadocAuth ddauth_token=t,DDAUTH_TOKEN=u", "the Authorization header repeats ddauth_token"],
    ["DiadocAuth ddauth_token=t,!!!", "the Authorization header is malformed"],
  ])("%j: %s", (header, message) => {
    expect(refusal(() => parseServiceAuth(header, sdk))).toEqual(unauthenticated(message));
  });

  it.each([
    "DiadocAuth",
    "Diadoc ddauth_api_client_id=k,ddauth_token=t",
    "xDiadocAuth ddauth_api_client_id=k,ddauth_token=t",
    "DiadocAuthddauth_token=t",
    "Basic dXNlcjpwYXNz",
    "Bearer abc",
  ])("%j: a scheme the service does not take", (header) => {
    expect(refusal(() => parseServiceAuth(header, sdk))).toEqual(
      unauthenticated("the Authorization header must use the ServiceAuth (or DiadocAuth) scheme"),
    );
  });

  it("no header: the challenge of every scheme", () => {
    expect(refusal(() => parseServiceAuth(" ", sdk))).toEqual(
      unauthenticated("the Authorization header is missing"),
    );
  });
});

describe("without aliases nothing changes", () => {
  const serviceAuthOnly = 'ServiceAuth realm="docflow-api"';
  it("the SDK's spelling is a scheme the service does not take", () => {
    expect(
      refusal(() => parseServiceAuth("DiadocAuth ddauth_api_client_id=k,ddauth_token=t")),
    ).toEqual(
      unauthenticated("the Authorization header must use the ServiceAuth scheme", serviceAuthOnly),
    );
  });

  it("a ddauth_ parameter beside ServiceAuth's is just an unknown parameter", () => {
    expect(
      parseServiceAuth("ServiceAuth svcauth_api_client_id=k, ddauth_token=x, svcauth_token=t"),
    ).toEqual({ apiKey: "k", token: "t" });
  });

  it("the default is ServiceAuth alone, Bearer off", () => {
    expect(serviceAuthSpellings([], false)).toEqual(SERVICE_AUTH_ONLY);
    expect(SERVICE_AUTH_ONLY.challenge).toBe(serviceAuthOnly);
    expect(SERVICE_AUTH_ONLY.anyChallenge).toBe(serviceAuthOnly);
  });
});

describe("the words of the 401s name every scheme taken", () => {
  it.each([
    [
      [],
      false,
      "the ServiceAuth scheme",
      'ServiceAuth realm="docflow-api"',
      'ServiceAuth realm="docflow-api"',
    ],
    [
      [],
      true,
      "the ServiceAuth scheme or Bearer",
      'ServiceAuth realm="docflow-api"',
      'ServiceAuth realm="docflow-api", Bearer realm="docflow-api"',
    ],
    [[DIADOC], false, "the ServiceAuth (or DiadocAuth) scheme", BOTH, BOTH],
    [
      [DIADOC],
      true,
      "the ServiceAuth (or DiadocAuth) scheme or Bearer",
      BOTH,
      `${BOTH}, Bearer realm="docflow-api"`,
    ],
    [
      [DIADOC, { scheme: "OtherAuth", prefix: "oa" }],
      true,
      "the ServiceAuth (or DiadocAuth or OtherAuth) scheme or Bearer",
      `${BOTH}, OtherAuth realm="docflow-api"`,
      `${BOTH}, OtherAuth realm="docflow-api", Bearer realm="docflow-api"`,
    ],
  ] as const)("aliases %j, Bearer on %s: %s", (aliases, bearerOn, names, challenge, any) => {
    const spellings = serviceAuthSpellings(aliases, bearerOn);
    expect(spellings.wrongScheme).toBe(`the Authorization header must use ${names}`);
    // Refused credentials, in any spelling: the ServiceAuth family, never Bearer.
    expect(spellings.challenge).toBe(challenge);
    // No credentials, or a scheme not taken: everything.
    expect(spellings.anyChallenge).toBe(any);
  });
});

describe("an alias never hides a scheme of its own", () => {
  it.each([
    [[{ scheme: "serviceauth", prefix: "x" }]],
    [[{ scheme: "Bearer", prefix: "x" }]],
    [[DIADOC, { scheme: "DIADOCAUTH", prefix: "x" }]],
  ])("%j is refused (config.ts refuses it first, with the variable's name)", (aliases) => {
    expect(() => serviceAuthSpellings(aliases)).toThrow("cannot be an alias");
  });
});
