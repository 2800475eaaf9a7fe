/** AIP-158 paging beside the legacy paging of a list (src/domain/paging.ts, docs/api.md §3.1). */
import { describe, expect, it } from "vitest";
import { cursorOf, pageLengthOf, pagesByToken } from "../../src/domain/paging";

describe("the page's length", () => {
  it("page_size: 0 or absent is the default, over the most is the most (coerced, never refused)", () => {
    expect(pageLengthOf({}, 100, 100)).toBe(100);
    expect(pageLengthOf({ pageSize: 0 }, 100, 100)).toBe(100);
    expect(pageLengthOf({ pageSize: 7 }, 100, 100)).toBe(7);
    expect(pageLengthOf({ pageSize: 2_147_483_647 }, 100, 100)).toBe(100);
  });

  it("the legacy count: 1 to the most, as before", () => {
    expect(pageLengthOf({ count: 1 }, 100, 100)).toBe(1);
    expect(pageLengthOf({ count: 100 }, 100, 100)).toBe(100);
    expect(() => pageLengthOf({ count: 0 }, 100, 100)).toThrow(
      /count must be an integer from 1 to 100/,
    );
    expect(() => pageLengthOf({ count: 101 }, 100, 100)).toThrow(/count/);
  });

  it("a negative page_size, or page_size with count: a 400", () => {
    expect(() => pageLengthOf({ pageSize: -1 }, 100, 100)).toThrow(
      /page_size must not be negative/,
    );
    expect(() => pageLengthOf({ pageSize: 5, count: 5 }, 100, 100)).toThrow(
      /give page_size or count, not both/,
    );
    // page_size 0 is "not given": count alone decides.
    expect(pageLengthOf({ pageSize: 0, count: 5 }, 100, 100)).toBe(5);
  });
});

describe("where the page starts", () => {
  it("page_token, or nothing; with the legacy cursor beside it: a 400", () => {
    expect(cursorOf(undefined, undefined, "afterIndexKey")).toBeUndefined();
    expect(cursorOf("", "key", "afterIndexKey")).toBeUndefined();
    expect(cursorOf("token", undefined, "afterIndexKey")).toBe("token");
    expect(cursorOf("token", "", "afterIndexKey")).toBe("token");
    expect(() => cursorOf("token", "key", "afterIndexKey")).toThrow(
      /give page_token or afterIndexKey, not both/,
    );
    expect(() => cursorOf("token", 2, "page")).toThrow(/give page_token or page, not both/);
  });

  it("a request pages by token when it gives a token or a size", () => {
    expect(pagesByToken({})).toBe(false);
    expect(pagesByToken({ pageSize: 0, pageToken: "" })).toBe(false);
    expect(pagesByToken({ pageSize: 3 })).toBe(true);
    expect(pagesByToken({ pageToken: "t" })).toBe(true);
  });
});
