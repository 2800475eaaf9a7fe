/**
 * Refusals paced when they take the core (src/admission/pacer.ts,
 * docs/decisions.md "Refusals paced when they take the core"), on a clock of
 * the test's: while refusals take more than their share of the core, a
 * refusal is held before it is written, longer the longer that lasts, never
 * past the Retry-After; once they take less, the hold shrinks to nothing.
 */
import { describe, expect, it } from "vitest";
import { RefusalPacer } from "../../src/admission/pacer";

/** Refusals of `costMs` each, `perMs` of them a ms, from `from` for `ms`: the last hold. */
function refuse(p: RefusalPacer, from: number, ms: number, perMs: number, costMs: number) {
  let hold = 0;
  for (let t = from; t < from + ms; t += 1) {
    for (let i = 0; i < perMs; i++) {
      hold = p.holdMs(t);
      p.refused(costMs, t);
    }
  }
  return hold;
}

describe("refusals are held while they take the core, and only then", () => {
  it("refusals taking a tenth of the core (a 2x flood's): none held", () => {
    const p = new RefusalPacer({ aboveShare: 0.5, maxHoldMs: 1_000 }, 0);
    // 2 refusals a ms of 0.02 ms: 0.04 of the loop measured, 0.12 with what is not.
    expect(refuse(p, 0, 2_000, 2, 0.02)).toBe(0);
    expect(p.share(2_000)).toBeLessThan(0.2);
  });

  it("refusals taking four fifths of the core: held, the hold growing to the Retry-After at most", () => {
    const p = new RefusalPacer({ aboveShare: 0.5, maxHoldMs: 1_000 }, 0);
    // 14 a ms of 0.02 ms: 0.28 measured, 0.84 of the core with what is not.
    const early = refuse(p, 0, 300, 14, 0.02);
    expect(early).toBeGreaterThan(0);
    const later = refuse(p, 300, 2_000, 14, 0.02);
    expect(later).toBeGreaterThan(early);
    expect(later).toBeLessThanOrEqual(1_000);
    expect(refuse(p, 2_300, 5_000, 14, 0.02)).toBe(1_000);
  });

  it("once refusals take less than the share (the clients send fewer), the hold shrinks to nothing", () => {
    const p = new RefusalPacer({ aboveShare: 0.5, maxHoldMs: 1_000 }, 0);
    expect(refuse(p, 0, 3_000, 14, 0.02)).toBe(1_000);
    // A tenth of the core now.
    const shrinking = refuse(p, 3_000, 400, 2, 0.02);
    expect(shrinking).toBeLessThan(1_000);
    expect(refuse(p, 3_400, 2_000, 2, 0.02)).toBe(0);
  });

  it("idle: no refusals, no share, no hold, whatever came before", () => {
    const p = new RefusalPacer({ aboveShare: 0.5, maxHoldMs: 1_000 }, 0);
    refuse(p, 0, 3_000, 14, 0.02);
    expect(p.share(60_000)).toBeLessThan(0.01);
  });
});
