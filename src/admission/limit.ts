/**
 * The concurrency limit (docs/operations.md, "Overload"; docs/decisions.md,
 * "Admission: a gradient on admitted calls' service time"): how many calls
 * may run at once. It learns from what admission controls, the service time
 * of the calls it admitted, as Netflix's Gradient2 does: each window (250 ms,
 * closed when a sample arrives after it, never on a timer) compares the
 * window's service time with a long baseline, route by route (a page call is
 * not "queueing" beside a small one); calls slowing down shrink the limit,
 * calls as fast as ever let it grow by a little.
 *
 * Never below the floor: above the batching knee, the least concurrency at
 * which the service reaches its whole throughput (8 or fewer on the bench's
 * VM without a flood; under one, calls slowed by the refusals between their
 * turns need more at once: docs/performance.md, "The batching knee"). On one
 * Node thread service time grows with every call running, so a gradient
 * alone would settle at a handful of calls and lose the batching of reads
 * and writes that concurrency buys; and when calls are slow because the
 * database is, more of them at once is what keeps the throughput.
 *
 * What it does not read: the event loop's delay (late because of arrivals
 * parsed and refused, which admission cannot reduce: shrinking on it fed a
 * collapse), refusals, failed, cancelled or fast-failing calls (their times
 * say nothing of queueing). A call that overran the service's own deadline is
 * a drop: the limit shrinks by a tenth, not below the floor.
 */

export interface LimitSettings {
  /** The least limit: the batching knee. Also the limit before anything is measured. */
  readonly floor: number;
  readonly max: number;
  /** The latency objective, ms: Little's law caps the limit at the best throughput times its share of it. */
  readonly sloMs: number;
  /** The longest a call may wait for a slot, ms (the SLO's share left to running is sloMs − this). */
  readonly queueTargetMs: number;
}

/** Gradient2's constants. */
const TOLERANCE = 1.5;
const SMOOTHING = 0.2;
const HEADROOM = 4;
const WINDOW_MS = 250;
const MIN_SAMPLES = 10;
/** Samples faster than this say nothing (a cache hit's microseconds). */
const MIN_SAMPLE_MS = 0.1;
/** The baseline's time constant: about a minute. */
const BASELINE_TAU_MS = 60_000;

interface RouteWindow {
  sum: number;
  n: number;
}
interface Baseline {
  ms: number;
  at: number;
}

export class GradientLimit {
  /** The current limit (fractional: calls are admitted while fewer than it run). */
  limit: number;
  /** The last window's service time over its baseline (1: as fast as ever). */
  ratio = 1;
  private windowEnd = 0;
  private samples = 0;
  private peakRunning = 0;
  private readonly windows = new Map<string, RouteWindow>();
  private readonly baselines = new Map<string, Baseline>();

  constructor(
    private readonly settings: LimitSettings,
    /** The best throughput lately, calls per second (0: not known yet). */
    private readonly bestThroughput: () => number,
  ) {
    this.limit = settings.floor;
  }

  /** A call of `route` that did its work took `ms` of service time; `running` ran when it started. */
  sample(route: string, ms: number, running: number, now: number): void {
    if (ms < MIN_SAMPLE_MS) return;
    let w = this.windows.get(route);
    if (!w) {
      w = { sum: 0, n: 0 };
      this.windows.set(route, w);
    }
    w.sum += ms;
    w.n++;
    this.samples++;
    if (running > this.peakRunning) this.peakRunning = running;
    if (now >= this.windowEnd) this.close(now);
  }

  /** A call ran past the service's own deadline (Netflix's onDropped): a tenth off, not below the floor. */
  drop(): void {
    this.limit = Math.max(this.settings.floor, this.limit * 0.9);
  }

  private close(now: number): void {
    this.windowEnd = now + WINDOW_MS;
    // Too few samples: the window goes on (Netflix drops them; ours are precious at low load).
    if (this.samples < MIN_SAMPLES) return;
    let num = 0;
    let den = 0;
    for (const [route, w] of this.windows) {
      if (w.n === 0) continue;
      const mean = w.sum / w.n;
      let base = this.baselines.get(route);
      if (!base) {
        base = { ms: mean, at: now };
        this.baselines.set(route, base);
      }
      num += (mean / base.ms) * w.n;
      den += w.n;
      base.ms += (1 - Math.exp(-(now - base.at) / BASELINE_TAU_MS)) * (mean - base.ms);
      base.at = now;
      // Gradient2's fast recovery: a baseline far above the present comes down quickly.
      if (base.ms / mean > 2) base.ms *= 0.95;
      w.sum = 0;
      w.n = 0;
    }
    this.ratio = den > 0 ? num / den : 1;
    // Calls far below the limit say what demand was, not what the instance can do: nor
    // does the throughput then (the cap and the floor's exception read it), so nothing moves.
    if (this.peakRunning >= this.limit / 2) {
      const gradient = Math.min(1, Math.max(0.5, TOLERANCE / this.ratio));
      const next = this.limit * gradient + HEADROOM;
      this.limit = this.limit * (1 - SMOOTHING) + next * SMOOTHING;
      this.limit = Math.min(
        this.settings.max,
        Math.max(this.settings.floor, Math.min(this.limit, this.littleCap())),
      );
    }
    this.samples = 0;
    this.peakRunning = 0;
  }

  /** Little's law: no more in flight than the best throughput finishes within the SLO's running share. */
  private littleCap(): number {
    const x = this.bestThroughput();
    const share = this.settings.sloMs - this.settings.queueTargetMs;
    return x > 0 ? Math.ceil((x * share) / 1000) : Number.POSITIVE_INFINITY;
  }
}
