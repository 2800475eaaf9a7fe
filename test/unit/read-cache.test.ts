/** The credentials/rights cache: coalesced loads, a short time to live, a bound, no cached failures. */
import { describe, expect, it } from "vitest";
import { createReadCache } from "../../src/storage/read-cache";

function counter(value: (key: string) => string | Promise<string> = (k) => `v:${k}`) {
  const loads: string[] = [];
  return {
    loads,
    load: async (key: string) => {
      loads.push(key);
      await new Promise((r) => setTimeout(r, 5));
      return value(key);
    },
  };
}

describe("read cache", () => {
  it("concurrent lookups of one key share one load (no thundering herd)", async () => {
    const c = counter();
    const get = createReadCache(c.load, { ttlMs: 1_000, maxEntries: 10 });
    const values = await Promise.all(Array.from({ length: 100 }, () => get("a")));
    expect(new Set(values)).toEqual(new Set(["v:a"]));
    expect(c.loads).toEqual(["a"]);
  });

  it("answers are reused until the time to live has passed, then loaded again", async () => {
    let now = 0;
    const c = counter();
    const get = createReadCache(c.load, { ttlMs: 1_000, maxEntries: 10, now: () => now });
    await get("a");
    now = 999;
    await get("a");
    expect(c.loads).toEqual(["a"]);
    now = 1_006;
    await get("a");
    expect(c.loads).toEqual(["a", "a"]);
  });

  it("keeps at most maxEntries keys, dropping the oldest", async () => {
    const c = counter();
    const get = createReadCache(c.load, { ttlMs: 60_000, maxEntries: 2 });
    await get("a");
    await get("b");
    await get("c");
    await get("b");
    await get("a");
    expect(c.loads).toEqual(["a", "b", "c", "a"]);
  });

  it("a failed load is not kept: the next lookup tries again", async () => {
    let fail = true;
    const c = counter(() => {
      if (fail) throw new Error("database down");
      return "ok";
    });
    const get = createReadCache(c.load, { ttlMs: 60_000, maxEntries: 10 });
    await expect(get("a")).rejects.toThrow("database down");
    fail = false;
    expect(await get("a")).toBe("ok");
    expect(c.loads).toEqual(["a", "a"]);
  });

  it("ttl 0 turns it off", async () => {
    const c = counter();
    const get = createReadCache(c.load, { ttlMs: 0, maxEntries: 10 });
    await get("a");
    await get("a");
    expect(c.loads).toEqual(["a", "a"]);
  });
});
