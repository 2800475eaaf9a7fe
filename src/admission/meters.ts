/**
 * What admission measures (docs/operations.md, "Overload"), all lazily: a
 * meter moves when an event reaches it, never on a timer, so an idle
 * service runs nothing for admission.
 */

/** Events per ms, an exponentially weighted average with time constant `tauMs`. */
export class RateMeter {
  private rate = 0;
  private count = 0;
  private at: number;
  constructor(
    private readonly tauMs: number,
    now: number,
  ) {
    this.at = now;
  }

  tick(now: number): void {
    this.roll(now);
    this.count++;
  }

  /** `amount` of something (ms of work) at `now`: perMs is then that amount per ms. */
  add(now: number, amount: number): void {
    this.roll(now);
    this.count += amount;
  }

  perMs(now: number): number {
    this.roll(now);
    return this.rate;
  }

  private roll(now: number): void {
    const dt = now - this.at;
    // Folded at most every 5 ms: a rate over less is noise.
    if (dt < 5) return;
    const weight = 1 - Math.exp(-dt / this.tauMs);
    this.rate += weight * (this.count / dt - this.rate);
    this.count = 0;
    this.at = now;
  }
}

/**
 * Completions per ms of busy time: its clock runs only while a call runs, so
 * an idle spell never decays it (a meter that decays while idle would
 * predict an endless wait for the first call after a pause). Unknown until a
 * few calls have finished.
 */
export class BusyRate {
  private rate = 0;
  private count = 0;
  private busy = 0;
  private total = 0;
  private totalBusy = 0;
  private at = 0;
  private wasBusy = false;
  constructor(private readonly tauMs = 250) {}

  /** The number of calls running changed at `now` (busy: some run now). */
  advance(now: number, busyNow: boolean): void {
    if (this.wasBusy) {
      this.busy += now - this.at;
      this.totalBusy += now - this.at;
    }
    this.at = now;
    this.wasBusy = busyNow;
    if (this.busy < 5) return;
    this.rate =
      this.totalBusy < 50
        ? this.total / this.totalBusy
        : this.rate +
          (1 - Math.exp(-this.busy / this.tauMs)) * (this.count / this.busy - this.rate);
    this.count = 0;
    this.busy = 0;
  }

  /** A call finished at `now`, `stillBusy` if others run. */
  complete(now: number, stillBusy: boolean): void {
    this.count++;
    this.total++;
    this.advance(now, stillBusy);
  }

  /** Calls finished since the start. */
  get completed(): number {
    return this.total;
  }

  /** Time with calls running since the start, ms (as of the last event). */
  get busyMs(): number {
    return this.totalBusy;
  }

  /** Completions per ms, or undefined before five calls have finished. */
  perMs(now: number): number | undefined {
    this.advance(now, this.wasBusy);
    return this.total < 5 || this.rate <= 0 ? undefined : this.rate;
  }
}

/**
 * The most completions in one second of the last `seconds` (a max filter, as
 * TCP BBR keeps a path's bandwidth): a dip while a flood is refused does not
 * lower it; a slower database does, within `seconds`.
 */
export class BestThroughput {
  private readonly buckets: number[];
  private second = -1;
  /** The best bucket, kept as ticks come (read on every arrival: no walk over the buckets). */
  private best = 0;
  constructor(seconds = 10) {
    this.buckets = new Array<number>(seconds).fill(0);
  }

  tick(now: number): void {
    this.roll(now);
    const at = this.second % this.buckets.length;
    const n = (this.buckets[at] as number) + 1;
    this.buckets[at] = n;
    if (n > this.best) this.best = n;
  }

  /** Calls per second, the best full second remembered (the current one counts once it beats them). */
  perSecond(now: number): number {
    this.roll(now);
    return this.best;
  }

  private roll(now: number): void {
    const second = Math.floor(now / 1000);
    if (this.second < 0) this.second = second;
    if (second <= this.second) return;
    // Every second that passed, up to a whole round, starts empty.
    for (let s = this.second + 1; s <= second && s - this.second <= this.buckets.length; s++) {
      this.buckets[s % this.buckets.length] = 0;
    }
    this.second = second;
    let best = 0;
    for (const n of this.buckets) if (n > best) best = n;
    this.best = best;
  }
}
