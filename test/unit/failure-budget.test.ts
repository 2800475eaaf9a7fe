/**
 * src/domain/failure-budget.ts, on a clock of the test's: how many failures a
 * bucket takes, when it refuses and for how long, how a burst is reported
 * once it ends, and that memory stays bounded (docs/security.md,
 * "Credential guessing").
 */
import { describe, expect, it } from "vitest";
import { DomainError, ErrorKind } from "../../src/domain/errors";
import { FailureBudget } from "../../src/domain/failure-budget";

function budget(perAddress: number, perKey: number, windowMs: number, maxEntries?: number) {
  let now = 0;
  const b = new FailureBudget({ perAddress, perKey, windowMs }, () => now, maxEntries);
  return {
    b,
    at: (ms: number) => {
      now = ms;
    },
    /** undefined: the call may try; else the Retry-After it is refused with. */
    refusal: (address?: string, key?: string) => {
      try {
        b.check(address, key);
        return undefined;
      } catch (error) {
        expect(error).toBeInstanceOf(DomainError);
        expect((error as DomainError).kind).toBe(ErrorKind.TooManyFailures);
        expect((error as DomainError).errorCode).toBe("Auth.TooManyFailures");
        return (error as DomainError).retryAfterS;
      }
    },
  };
}

describe("a bucket per address", () => {
  it("takes `budget` failures, then refuses until one has drained (window ÷ budget)", () => {
    const { b, at, refusal } = budget(3, 0, 60_000);
    for (let i = 0; i < 3; i++) {
      expect(refusal("a")).toBeUndefined();
      b.fail("a");
    }
    expect(refusal("a")).toBe(20);
    at(10_000);
    expect(refusal("a")).toBe(10);
    at(19_999);
    expect(refusal("a")).toBe(1);
    at(20_000);
    expect(refusal("a")).toBeUndefined();
    // Another address is another bucket.
    expect(refusal("b")).toBeUndefined();
  });

  it("a full bucket empties in the window", () => {
    const { b, at, refusal } = budget(2, 0, 1_000);
    b.fail("a");
    b.fail("a");
    b.fail("a");
    expect(refusal("a")).toBe(1);
    at(1_000);
    expect(refusal("a")).toBeUndefined();
    b.fail("a");
    expect(refusal("a")).toBeUndefined();
  });

  it("no address (a call in process): never counted, never refused", () => {
    const { b, refusal } = budget(1, 0, 60_000);
    b.fail(undefined);
    b.fail(undefined);
    expect(refusal(undefined)).toBeUndefined();
  });

  it("a budget of 0 is no budget", () => {
    const { b, refusal } = budget(0, 0, 60_000);
    expect(b.off).toBe(true);
    for (let i = 0; i < 10; i++) b.fail("a", "k");
    expect(refusal("a", "k")).toBeUndefined();
  });
});

describe("a bucket per API key, beside the address's", () => {
  it("a key over its budget is refused from any address; the longer wait wins", () => {
    const { b, refusal } = budget(10, 2, 60_000);
    b.fail("a", "k");
    b.fail("b", "k");
    expect(refusal("c", "k")).toBe(30);
    expect(refusal("c", "other")).toBeUndefined();
    expect(refusal("a")).toBeUndefined();
  });

  it("failures that named no key fill no key's bucket: other addresses without a key are not refused", () => {
    const { b, refusal } = budget(10, 2, 60_000);
    b.fail("a");
    b.fail("b");
    b.fail("c");
    expect(refusal("d")).toBeUndefined();
    expect(refusal("d", "k")).toBeUndefined();
  });
});

describe("bursts: reported once, when they end", () => {
  it("counts the failures and the refusals, and closes once the bucket takes calls and all is quiet", () => {
    const { b, at, refusal } = budget(2, 0, 1_000);
    b.fail("a");
    b.fail("a");
    expect(b.bursting).toBe(true);
    expect(refusal("a")).toBe(1);
    expect(refusal("a")).toBe(1);
    at(200);
    expect(refusal("a")).toBe(1);
    expect(b.sweep(5_000)).toEqual([]);
    at(5_200);
    expect(b.sweep(5_000)).toEqual([
      { kind: "address", who: "a", failures: 1, refused: 3, durationMs: 5_200 },
    ]);
    expect(b.bursting).toBe(false);
    expect(b.sweep(5_000)).toEqual([]);
  });
});

describe("memory", () => {
  it("at most maxEntries buckets: the least recently touched is forgotten first", () => {
    const { b, refusal } = budget(1, 0, 60_000, 2);
    b.fail("a");
    b.fail("b");
    b.fail("c");
    expect(refusal("a")).toBeUndefined();
    expect(refusal("b")).toBe(60);
    expect(refusal("c")).toBe(60);
  });

  it("an empty bucket is forgotten at the sweep", () => {
    const { b, at } = budget(1, 0, 1_000);
    b.fail("a");
    at(60_000);
    b.sweep(0);
    expect(b.bursting).toBe(false);
  });
});

describe("the edges", () => {
  it("off only when both budgets are 0", () => {
    expect(budget(0, 0, 1_000).b.off).toBe(true);
    expect(budget(1, 0, 1_000).b.off).toBe(false);
    expect(budget(0, 1, 1_000).b.off).toBe(false);
  });

  it("a budget of 0 counts nothing: no bucket, no burst", () => {
    const { b } = budget(0, 5, 1_000);
    b.fail("a", "k");
    b.fail("a", "k");
    expect(b.size).toBe(1);
    expect(b.bursting).toBe(false);
  });

  it("draining counts from the last failure's time, not from zero", () => {
    const { b, at, refusal } = budget(2, 0, 1_000);
    at(10_000);
    b.fail("a");
    b.fail("a");
    expect(refusal("a")).toBe(1);
    at(10_499);
    expect(refusal("a")).toBe(1);
    at(10_500);
    expect(refusal("a")).toBeUndefined();
  });

  it("a key's burst is reported as the key's, with its duration", () => {
    const { b, at, refusal } = budget(0, 1, 1_000);
    at(100);
    b.fail("a", "k");
    expect(refusal("a", "k")).toBe(1);
    at(1_100);
    expect(b.sweep(1_000)).toEqual([
      { kind: "apiKey", who: "k", failures: 1, refused: 1, durationMs: 1_000 },
    ]);
  });

  it("a burst whose bucket is still full is not over, however quiet", () => {
    const { b, at, refusal } = budget(1, 0, 60_000);
    b.fail("a");
    expect(refusal("a")).toBe(60);
    at(30_000);
    expect(b.sweep(1_000)).toEqual([]);
    expect(b.bursting).toBe(true);
  });

  it("a burst whose bucket has room, but refused a call a moment ago, is not over yet", () => {
    const { b, at, refusal } = budget(1, 0, 1_000);
    b.fail("a");
    at(999);
    expect(refusal("a")).toBe(1);
    at(1_500);
    expect(b.sweep(1_000)).toEqual([]);
    at(1_999);
    expect(b.sweep(1_000)).toHaveLength(1);
  });

  it("buckets that drained are forgotten at the sweep; the others are kept", () => {
    // One failure drains in 1 s.
    const { b, at } = budget(10, 0, 10_000);
    b.fail("a");
    at(500);
    b.fail("b");
    at(1_000);
    b.sweep(0);
    expect(b.size).toBe(1);
    at(5_000);
    b.sweep(0);
    expect(b.size).toBe(0);
  });

  it("a bucket touched again moves to the back of the line: the untouched one is forgotten first", () => {
    const { b, refusal } = budget(1, 0, 60_000, 2);
    b.fail("a");
    b.fail("b");
    b.fail("a");
    b.fail("c");
    expect(refusal("a")).toBe(60);
    expect(refusal("b")).toBeUndefined();
  });
});

describe("as the service makes it", () => {
  it("on the process's own clock, a full bucket refuses", () => {
    const b = new FailureBudget({ perAddress: 1, perKey: 0, windowMs: 60_000 });
    b.fail("a");
    expect(() => b.check("a")).toThrow(DomainError);
    expect(() => b.check("b")).not.toThrow();
  });

  it("below its budget a bucket opens no burst", () => {
    const { b, refusal } = budget(3, 0, 60_000);
    b.fail("a");
    b.fail("a");
    expect(refusal("a")).toBeUndefined();
    expect(b.bursting).toBe(false);
  });
});
