/**
 * CallValues, the context values of every call from the front: what
 * connect-es's createContextValues answers, key for key (a value set, a
 * default, a value set to undefined, a deleted one, chaining).
 */
import { createContextKey, createContextValues } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { CallValues } from "../../src/rpc/context";

const withDefault = createContextKey<string | undefined>("fallback", { description: "d" });
const plain = createContextKey<number | undefined>(undefined, { description: "p" });

describe("CallValues answers as connect-es's ContextValues", () => {
  for (const [name, make] of [
    ["CallValues", () => new CallValues()],
    ["connect-es", () => createContextValues()],
  ] as const) {
    it(`${name}: a key never set gives its default; set, undefined and deleted values`, () => {
      const values = make();
      expect(values.get(withDefault)).toBe("fallback");
      expect(values.get(plain)).toBeUndefined();
      expect(values.set(withDefault, "given").set(plain, 7)).toBe(values);
      expect(values.get(withDefault)).toBe("given");
      expect(values.get(plain)).toBe(7);
      // Set to undefined: undefined, not the default.
      values.set(withDefault, undefined);
      expect(values.get(withDefault)).toBeUndefined();
      // Deleted: the default again.
      expect(values.delete(withDefault)).toBe(values);
      expect(values.get(withDefault)).toBe("fallback");
    });
  }

  it("keeps the values of two calls apart", () => {
    const a = new CallValues().set(plain, 1);
    const b = new CallValues().set(plain, 2);
    expect([a.get(plain), b.get(plain)]).toEqual([1, 2]);
  });
});
