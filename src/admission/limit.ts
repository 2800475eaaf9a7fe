/**
 * The adaptive concurrency limit (docs/operations.md, "Overload"): how many
 * calls may run at once, learnt every window of about 100 ms from what the
 * instance did. By Little's law the calls running at once are the calls
 * finished per second times their latency, so the limit is the most calls
 * the instance has finished per second lately (the best window of the last
 * ten seconds) times the latency a call may have: the latency target, or
 * twice the no-load latency (the least of the last ten seconds) for calls
 * slower than that by nature. Beyond the limit calls wait in admission's
 * queue, where a wait can be seen and bounded, not inside the process,
 * where it cannot.
 *
 * The best window, not the last one, as TCP BBR estimates a path's
 * bandwidth: when refusing a flood takes the core away from admitted calls,
 * their throughput falls and their latency rises, and a limit computed from
 * the current window would shrink, lose the batching of reads and writes
 * that concurrency buys, fall further and collapse (measured, see
 * docs/performance.md "Overload"). A slower database lowers the best window
 * within ten seconds, and the limit with it.
 *
 * Why not a latency-gradient limiter (TCP Vegas, Netflix's Gradient2, Envoy's
 * adaptive concurrency): on one Node thread latency grows with every call
 * running, so they settle at 4–6 calls, and the service then lost about a
 * third of its throughput (measured: 1,400–1,600 calls/s against 2,000–2,400
 * at 32 connections).
 */

export interface LimitSettings {
  /** The limit before anything is measured. */
  readonly initial: number;
  readonly min: number;
  readonly max: number;
  /** The latency admitted calls may have (their wait inside the process included). */
  readonly latencyTargetMs: number;
  /** The event loop's mean delay the limit keeps under. */
  readonly loopDelayTargetMs: number;
}

/** Windows remembered for the least latency: 100 of about 100 ms (ten seconds). */
const LATENCY_WINDOWS = 100;
/** Windows remembered for the best throughput: 10 of about 100 ms (a second). */
const RATE_WINDOWS = 10;
/** How much of a new window's average the latency estimate takes. */
const EWMA_WEIGHT = 0.3;
/** Calls slower than this many times the no-load latency are queueing. */
const TOLERANCE = 2;

/** The largest (or least) of the last WINDOWS values. */
class Window {
  private readonly values: number[] = [];
  private at = 0;
  constructor(private readonly size: number) {}
  push(value: number): void {
    if (this.values.length < this.size) this.values.push(value);
    else {
      this.values[this.at] = value;
      this.at = (this.at + 1) % this.size;
    }
  }
  max(): number {
    let best = 0;
    for (const v of this.values) if (v > best) best = v;
    return best;
  }
  min(): number {
    let least = Number.POSITIVE_INFINITY;
    for (const v of this.values) if (v < least) least = v;
    return Number.isFinite(least) ? least : 0;
  }
}

export class AdaptiveLimit {
  /** The current limit (fractional: calls are admitted while fewer than it run). */
  limit: number;
  /** Smoothed average latency of a call, in ms (what a queued call should expect a slot to take). */
  latencyMs = 0;
  /** The best throughput of the last second, in calls per second. */
  throughput = 0;
  /** The no-load latency estimate, in ms (0 until a call has finished). */
  noLoadMs = 0;
  private sum = 0;
  private count = 0;
  private windowMin = Number.POSITIVE_INFINITY;
  private readonly rates = new Window(RATE_WINDOWS);
  private readonly minimums = new Window(LATENCY_WINDOWS);

  constructor(private readonly settings: LimitSettings) {
    this.limit = settings.initial;
  }

  /** A call finished after `ms`. */
  sample(ms: number): void {
    this.sum += ms;
    this.count++;
    if (ms < this.windowMin) this.windowMin = ms;
  }

  /**
   * Ends a window of `windowMs` in which at most `peakRunning` calls ran at
   * once, the event loop was late by `loopDelayMs` on average, `queued`
   * calls wait and `refused` were refused: a late loop shrinks the limit
   * while there is excess demand; a punctual one that the calls filled grows it.
   */
  adjust(windowMs: number, peakRunning: number, loopDelayMs = 0, queued = 0, refused = 0): void {
    const { min, max, loopDelayTargetMs, latencyTargetMs } = this.settings;
    const calls = this.count;
    this.rates.push((calls * 1000) / windowMs);
    if (calls > 0) {
      const average = this.sum / calls;
      this.latencyMs =
        this.latencyMs === 0 ? average : this.latencyMs + EWMA_WEIGHT * (average - this.latencyMs);
      this.minimums.push(this.windowMin);
    }
    this.sum = 0;
    this.count = 0;
    this.windowMin = Number.POSITIVE_INFINITY;
    this.throughput = this.rates.max();
    this.noLoadMs = this.minimums.min();
    if (loopDelayMs > loopDelayTargetMs) {
      // A late loop is excess demand's only while calls wait or are refused; with
      // nobody waiting a smaller limit would only make a queue (closed-loop clients
      // at normal load keep the loop as busy as they like).
      if (queued > 0 || refused > 0) {
        // Far over: a fifth at once (a spike's first windows decide how long it hurts).
        this.limit = Math.max(min, this.limit * (loopDelayMs > 2 * loopDelayTargetMs ? 0.8 : 0.9));
      }
      return;
    }
    // Calls far below the limit say what demand was, not what the instance can do.
    if (peakRunning < 0.5 * this.limit) return;
    // Little's law caps it: no more calls than the instance finishes in the latency target.
    const targetMs = Math.max(latencyTargetMs, TOLERANCE * this.noLoadMs);
    const cap = this.throughput > 0 ? (this.throughput * targetMs) / 1000 : max;
    // Full and punctual: a tenth more, or as many as wait (up to doubling) — a limit
    // that a flood shrank is back within a few windows once the loop is free.
    const grown =
      peakRunning >= 0.8 * this.limit
        ? this.limit + Math.max(this.limit * 0.1 + 1, Math.min(queued, this.limit))
        : this.limit;
    this.limit = Math.min(max, Math.max(min, Math.min(grown, cap)));
  }
}
