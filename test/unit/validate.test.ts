/** The identifier rule (docs/decisions.md) and the domain errors' shapes. */
import { describe, expect, it } from "vitest";
import {
  DomainError,
  duplicateGroupName,
  ErrorKind,
  storageUnavailable,
  subscriptionEnded,
  unauthenticated,
  unsupportedMediaType,
} from "../../src/domain/errors";
import { ID_PATTERN, isIdentifier, optionalId, requireId } from "../../src/domain/validate";

/** What the caller reads when an identifier is refused. */
function refusal(check: () => unknown): { kind: string; errorCode: string; message: string } {
  try {
    check();
  } catch (error) {
    if (error instanceof DomainError) {
      return { kind: error.kind, errorCode: error.errorCode, message: error.message };
    }
    throw error;
  }
  throw new Error("not refused");
}

describe("an identifier: 1 to 256 code points, not blank, no control character", () => {
  it.each([
    ["a plain GUID", "b0000000-0000-4000-8000-000000000001"],
    ["one character", "x"],
    ["inner spaces", "a b"],
    ["leading and trailing spaces around a character", "  a  "],
    ["non-ASCII letters", "Ящик-№1"],
    ["256 code points", "x".repeat(256)],
    ["256 emoji (512 UTF-16 units, 256 code points)", "😀".repeat(256)],
    ["U+00A0 beside a character", "\u00a0a"],
  ])("%s is one", (_name, value) => {
    expect(isIdentifier(value)).toBe(true);
    expect(requireId("boxId", value)).toBe(value);
  });

  it.each([
    ["empty", ""],
    ["257 code points", "x".repeat(257)],
    ["257 emoji", "😀".repeat(257)],
    ["a NUL inside", "a\u0000b"],
    ["a C0 control (U+001F)", "a\u001fb"],
    ["DEL (U+007F)", "a\u007fb"],
    ["a C1 control (U+0085)", "a\u0085b"],
    ["a C1 control at its end (U+009F)", "a\u009f"],
    ["a tab", "a\tb"],
    ["only spaces", "   "],
    ["only U+00A0", "\u00a0"],
    ["only U+1680", "\u1680"],
    ["only U+2000 and U+200A", "\u2000\u200a"],
    ["only U+2028 and U+2029", "\u2028\u2029"],
    ["only U+202F, U+205F, U+3000 and U+FEFF", "\u202f\u205f\u3000\ufeff"],
  ])("%s is not", (_name, value) => {
    expect(isIdentifier(value)).toBe(false);
  });

  it("the published pattern means the same in a plain (non-unicode) regular expression", () => {
    const plain = new RegExp(ID_PATTERN);
    for (const value of ["x", "a b", "   ", "a\u0000", "\ufeff", "\u00a0a"]) {
      expect(plain.test(value), JSON.stringify(value)).toBe(isIdentifier(value));
    }
  });
});

describe("the scan and the published pattern agree", () => {
  it("on every value made of 1 to 4 characters of a set that covers each class of the rule", () => {
    const pattern = new RegExp(ID_PATTERN, "u");
    const chars = [
      "a",
      " ",
      "\t",
      "\u0000",
      "\u007f",
      "\u009f",
      "\u00a0",
      "\u2000",
      "\u3000",
      "\ufeff",
      "é",
      "😀",
    ];
    const values = [""];
    for (let n = 0; n < 4; n++) {
      for (const v of [...values]) for (const c of chars) values.push(v + c);
    }
    const differ = values.filter((v) => pattern.test(v) !== isIdentifier(v));
    expect(differ.map((v) => JSON.stringify(v))).toEqual([]);
  });

  it("lengths: 256 code points are one, 257 are not, astral characters counted once", () => {
    expect(isIdentifier("😀".repeat(256))).toBe(true);
    expect(isIdentifier("😀".repeat(257))).toBe(false);
    expect(isIdentifier(`${" ".repeat(255)}x`)).toBe(true);
    expect(isIdentifier(" ".repeat(256))).toBe(false);
  });
});

describe("requireId and optionalId", () => {
  it("a required identifier that is absent or blank is 'required' (400)", () => {
    for (const value of [undefined, "", "   ", "\u3000"]) {
      expect(refusal(() => requireId("boxId", value))).toEqual({
        kind: ErrorKind.InvalidArgument,
        errorCode: "Http.BadRequest",
        message: "boxId is required",
      });
    }
  });

  it("a present identifier that breaks the rule is 'not a valid identifier' (400)", () => {
    expect(refusal(() => requireId("userId", "a\u0000"))).toEqual({
      kind: ErrorKind.InvalidArgument,
      errorCode: "Http.BadRequest",
      message: "userId is not a valid identifier",
    });
    expect(refusal(() => optionalId("documentId", "x".repeat(257)))).toEqual({
      kind: ErrorKind.InvalidArgument,
      errorCode: "Http.BadRequest",
      message: "documentId is not a valid identifier",
    });
  });

  it("an optional identifier: absent or empty is absent; blank is refused; a good one kept", () => {
    expect(optionalId("documentId", undefined)).toBeUndefined();
    expect(optionalId("documentId", "")).toBeUndefined();
    expect(() => optionalId("documentId", " ")).toThrow(DomainError);
    expect(optionalId("documentId", "d1")).toBe("d1");
  });
});

describe("the domain errors carry what the error table and the caller read", () => {
  it("each factory's kind, code, message and extras", () => {
    const e401 = unauthenticated("no", 'Bearer realm="x"');
    expect([e401.name, e401.kind, e401.errorCode, e401.message, e401.challenge]).toEqual([
      "DomainError",
      ErrorKind.Unauthenticated,
      "Http.Unauthorized",
      "no",
      'Bearer realm="x"',
    ]);
    expect(unauthenticated("no").challenge).toBeUndefined();
    const e402 = subscriptionEnded();
    expect([e402.kind, e402.errorCode, e402.message]).toEqual([
      ErrorKind.SubscriptionEnded,
      "Http.PaymentRequired",
      "the organization has no remaining API subscription",
    ]);
    const e409 = duplicateGroupName("Partners");
    expect([e409.kind, e409.errorCode, e409.message]).toEqual([
      ErrorKind.Conflict,
      "CounteragentGroup.DuplicateName",
      'the box already has a counteragent group named "Partners"',
    ]);
    const e415 = unsupportedMediaType("use gzip");
    expect([e415.kind, e415.errorCode, e415.message]).toEqual([
      ErrorKind.UnsupportedMediaType,
      "Http.UnsupportedMediaType",
      "use gzip",
    ]);
    const cause = new Error("driver text");
    const outage = storageUnavailable(cause);
    expect([outage.kind, outage.errorCode, outage.message, outage.cause]).toEqual([
      ErrorKind.Unavailable,
      "Http.InternalServerError",
      "the database is unavailable",
      cause,
    ]);
  });
});
