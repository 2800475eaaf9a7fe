/**
 * Refusals paced when they take the core (docs/decisions.md, "Refusals
 * paced when they take the core"). A refusal costs the core what Node's
 * parse of the request and its write of the answer cost, whatever admission
 * decides, and a refused client with a pool of connections sends again as
 * soon as it is answered: at ten times capacity over HTTP/1.1 the refusals
 * alone took four fifths of the core, what was admitted got the rest (0.08
 * of capacity), and a probe on a new connection waited 5 s. Every client
 * has a bound on the calls it has out (its pool, its workers), so answering
 * its refusals later is the one thing the server can do to make it send
 * fewer: while refusals take more than `aboveShare` of the core, each
 * refusal at the door is held a while before it is written, the hold
 * growing until their share falls, at most `maxHoldMs` (the Retry-After it
 * carries), and shrinking to nothing once it has.
 *
 * Nothing runs while idle: the share moves as refusals are made.
 */
import { RateMeter } from "./meters";

export interface PaceSettings {
  /** Refusals are held while they take more than this share of the core (0–1). */
  readonly aboveShare: number;
  /** The longest a refusal is held, ms. */
  readonly maxHoldMs: number;
}

/** How often the hold may change, ms. */
const ADJUST_MS = 50;
/** The hold when pacing begins, ms. */
const FIRST_HOLD_MS = 20;
/** Under this, the hold is none. */
const LEAST_HOLD_MS = 5;
/**
 * The share's time constant: long enough to hold a loaded loop's turns
 * (the refusals of one turn come in together), short against a spike.
 */
const SHARE_TAU_MS = 250;
/**
 * What a refusal costs the core over the time measured around it (the
 * decision and the write): Node's parse of the request, its objects and
 * their garbage come before and after. A 10x HTTP/1.1 flood on this VM
 * (2026-11-29): 22 µs measured per refusal, about 67 µs of the core each.
 */
const UNMEASURED_FACTOR = 3;

export class RefusalPacer {
  private readonly work: RateMeter;
  private hold = 0;
  private adjustedAt: number;

  constructor(
    private readonly settings: PaceSettings,
    now: number,
  ) {
    this.work = new RateMeter(SHARE_TAU_MS, now);
    this.adjustedAt = now;
  }

  /** A refusal took `ms` of the loop (its decision, or its held answer's write). */
  refused(ms: number, now: number): void {
    this.work.add(now, ms);
  }

  /** The share of the core refusals take now (0–1, an estimate). */
  share(now: number): number {
    return Math.min(1, this.work.perMs(now) * UNMEASURED_FACTOR);
  }

  /** The hold as last set, ms, without changing it (for the logs). */
  get currentHoldMs(): number {
    return this.hold;
  }

  /** How long a refusal decided now is held before it is written, ms (0: at once). */
  holdMs(now: number): number {
    if (now - this.adjustedAt < ADJUST_MS) return this.hold;
    this.adjustedAt = now;
    const share = this.share(now);
    const { aboveShare, maxHoldMs } = this.settings;
    if (share > aboveShare) {
      this.hold = Math.min(maxHoldMs, Math.max(FIRST_HOLD_MS, this.hold * 1.5));
    } else if (share < 0.6 * aboveShare) {
      this.hold = this.hold * 0.7 < LEAST_HOLD_MS ? 0 : this.hold * 0.7;
    }
    return this.hold;
  }
}
