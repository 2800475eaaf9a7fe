/**
 * The failure budget of authentication (docs/api.md §5, docs/security.md,
 * "Credential guessing"): wrong credentials cost their sender. Each client
 * address and each API key has a bucket that every failed authentication
 * fills by one and that empties by itself at `budget` per `windowMs`. A
 * full bucket refuses the next call (429 `Auth.TooManyFailures`, with when
 * to come back) before its credentials are looked up, whether they are
 * right or not: a guesser learns nothing more until the bucket empties.
 *
 * A burst (a bucket full, refusing) is reported once, when it ends, with its
 * counts. Memory is bounded: at most `maxEntries` buckets (the least recently
 * touched forgotten first), and an empty bucket is no bucket.
 */
import { DomainError, ErrorKind } from "./errors";

export interface FailureBudgetConfig {
  /** Failures a bucket holds before it refuses; 0: no budget for that kind. */
  readonly perAddress: number;
  readonly perKey: number;
  /** A full bucket empties in this long (one failure every windowMs / budget). */
  readonly windowMs: number;
}

/** A burst that ended: who it came from (an address, or an API key's fingerprint), and its counts. */
export interface FailureBurst {
  readonly kind: "address" | "apiKey";
  readonly who: string;
  /** Failures counted while the burst lasted, the one that filled the bucket included. */
  readonly failures: number;
  /** Calls refused with 429 while the bucket was full. */
  readonly refused: number;
  readonly durationMs: number;
}

interface Bucket {
  /** Failures in the bucket at `at`. */
  level: number;
  at: number;
  /** An open burst: when it started, and its counts. */
  burst:
    | { startedAt: number; failures: number; refused: number; lastRefusedAt: number }
    | undefined;
}

/** A refusal: how long until the bucket takes a call again. */
export const tooManyFailures = (retryAfterS: number) =>
  new DomainError(
    ErrorKind.TooManyFailures,
    "Auth.TooManyFailures",
    `too many failed authentications from this client; retry after ${retryAfterS} s`,
    { retryAfterS },
  );

export class FailureBudget {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    readonly config: FailureBudgetConfig,
    private readonly clock: () => number = () => performance.now(),
    private readonly maxEntries = 50_000,
  ) {}

  /** True when the budget refuses nothing (both kinds 0). */
  get off(): boolean {
    return this.config.perAddress === 0 && this.config.perKey === 0;
  }

  /**
   * Throws `tooManyFailures` when `address` or `apiKey` (a fingerprint, never
   * the key) has a full bucket; counts the refusal in its burst.
   */
  check(address: string | undefined, apiKey?: string): void {
    const now = this.clock();
    let wait = 0;
    for (const [key, budget] of this.slots(address, apiKey)) {
      wait = Math.max(wait, this.waitMs(key, budget, now));
    }
    if (wait > 0) throw tooManyFailures(Math.max(1, Math.ceil(wait / 1000)));
  }

  /** A failed authentication from `address`, with `apiKey` if the header named one. */
  fail(address: string | undefined, apiKey?: string): void {
    const now = this.clock();
    for (const [key, budget] of this.slots(address, apiKey)) this.fill(key, budget, now);
  }

  /** The buckets a call counts in, with their budgets: none for what is unknown or has no budget. */
  private slots(address: string | undefined, apiKey: string | undefined): [string, number][] {
    const slots: [string, number][] = [];
    if (address !== undefined && this.config.perAddress > 0) {
      slots.push([`a:${address}`, this.config.perAddress]);
    }
    if (apiKey !== undefined && this.config.perKey > 0)
      slots.push([`k:${apiKey}`, this.config.perKey]);
    return slots;
  }

  /**
   * Closes the bursts whose bucket takes calls again and whose last refusal is
   * `quietMs` old, and forgets empty buckets; returns the bursts closed.
   */
  sweep(quietMs: number): FailureBurst[] {
    const now = this.clock();
    const ended: FailureBurst[] = [];
    for (const [key, bucket] of this.buckets) {
      const budget = key.startsWith("a:") ? this.config.perAddress : this.config.perKey;
      const level = this.levelOf(bucket, budget, now);
      const { burst } = bucket;
      if (burst && level <= budget - 1 && now - burst.lastRefusedAt >= quietMs) {
        ended.push({
          kind: key.startsWith("a:") ? "address" : "apiKey",
          who: key.slice(2),
          failures: burst.failures,
          refused: burst.refused,
          durationMs: Math.round(now - burst.startedAt),
        });
        bucket.burst = undefined;
      }
      if (!bucket.burst && level === 0) this.buckets.delete(key);
    }
    return ended;
  }

  /** Buckets held now (memory: an empty bucket is forgotten at the sweep). */
  get size(): number {
    return this.buckets.size;
  }

  /** True while a burst is open (someone still has to say when it ended). */
  get bursting(): boolean {
    for (const bucket of this.buckets.values()) if (bucket.burst) return true;
    return false;
  }

  private levelOf(bucket: Bucket, budget: number, now: number): number {
    const drained = ((now - bucket.at) * budget) / this.config.windowMs;
    return Math.max(0, bucket.level - drained);
  }

  private waitMs(key: string, budget: number, now: number): number {
    const bucket = this.buckets.get(key);
    if (!bucket) return 0;
    const level = this.levelOf(bucket, budget, now);
    // Full: one more failure would overflow it. It takes a call again once a failure has drained.
    if (level <= budget - 1) return 0;
    // A full bucket has its burst: `fill` opened it, and a sweep closes none that is full.
    const burst = bucket.burst as NonNullable<Bucket["burst"]>;
    burst.refused++;
    burst.lastRefusedAt = now;
    return ((level - (budget - 1)) * this.config.windowMs) / budget;
  }

  private fill(key: string, budget: number, now: number): void {
    let bucket = this.buckets.get(key);
    if (bucket) {
      bucket.level = this.levelOf(bucket, budget, now);
      this.buckets.delete(key); // re-inserted: the most recently touched last
    } else {
      bucket = { level: 0, at: now, burst: undefined };
      if (this.buckets.size >= this.maxEntries) {
        const oldest = this.buckets.keys().next().value as string;
        this.buckets.delete(oldest);
      }
    }
    bucket.level = Math.min(budget, bucket.level + 1);
    bucket.at = now;
    if (bucket.level > budget - 1) {
      bucket.burst ??= { startedAt: now, failures: 0, refused: 0, lastRefusedAt: now };
    }
    if (bucket.burst) bucket.burst.failures++;
    this.buckets.set(key, bucket);
  }
}
