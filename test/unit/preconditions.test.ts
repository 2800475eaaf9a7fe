/** If-Match as the handlers read it (src/rpc/preconditions.ts; RFC 9110 §13.1.1, §8.8.3). */
import { describe, expect, it } from "vitest";
import { parseIfMatch } from "../../src/rpc/preconditions";

describe("If-Match", () => {
  it("absent: no precondition; * (with blanks around): any current group", () => {
    expect(parseIfMatch(undefined)).toBeUndefined();
    expect(parseIfMatch(null)).toBeUndefined();
    expect(parseIfMatch(" * ")).toEqual({ any: true });
  });

  it("a list of tags, repeats joined by commas, blanks and empty items skipped; weak tags dropped (never a strong match)", () => {
    expect(parseIfMatch('"a"')).toEqual({ etags: ['"a"'] });
    expect(parseIfMatch('"a", W/"b",, "c,d"\t,"e"')).toEqual({ etags: ['"a"', '"c,d"', '"e"'] });
    expect(parseIfMatch('W/"only-weak"')).toEqual({ etags: [] });
    expect(parseIfMatch('""')).toEqual({ etags: ['""'] });
  });

  it.each([
    ["", "nothing at all"],
    [" , ", "only separators"],
    ["abc", "no quotes"],
    ['"abc', "no closing quote"],
    ['"a"b', "text after a tag"],
    ['"a b"', "a blank inside"],
    ['"a\u007fb"', "DEL inside"],
    ['*, "a"', "* in a list"],
    ['w/"a"', "a lower-case weak prefix"],
  ])("%j (%s): a bad request, not a precondition", (value) => {
    expect(() => parseIfMatch(value)).toThrow(/If-Match must be/);
  });

  it("a long hostile value is read in one pass (no regular expression)", () => {
    const value = `${'"a",'.repeat(50_000)}x`;
    expect(() => parseIfMatch(value)).toThrow(/If-Match must be/);
  });
});
