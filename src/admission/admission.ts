/**
 * Admission control (docs/api.md §4.1, docs/operations.md "Overload";
 * the design and its reasons: docs/decisions.md, "Admission"): which calls
 * run now, which wait, and which are refused before any work is done.
 *
 * - Calls run while fewer than the limit (limit.ts) run. Beyond it a call
 *   waits in its client's queue; the queues are served by deficit round
 *   robin weighted by each route's cost, so every client wanting service
 *   gets an equal share of the completions: a client asking less than its
 *   share waits one round at most, whatever another client floods. A client
 *   asking less than its share of the instance's capacity (modest) is served
 *   first: a flood whose refusals take the core does not shrink its share.
 * - A call is refused only when it cannot be served in time: its deadline
 *   (the client's, or the service's call deadline) would pass before it ran
 *   ("deadline"), or its client's queue grows steadily while its wait passes
 *   the queue target ("overloaded", or "client_share" for a client taking
 *   more than its share while others want service). A queue that is long but
 *   stable, as any closed loop of clients makes, is served.
 * - Nothing runs while idle: the meters move on events; one timer exists
 *   only while calls wait (their expiry).
 *
 * Nothing here knows HTTP: the front (src/http/admission.ts) asks and writes.
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import { GradientLimit, type LimitSettings } from "./limit";
import { BestThroughput, BusyRate, RateMeter } from "./meters";

export interface AdmissionSettings extends LimitSettings {
  /** Each client has a share while others want service (off: one queue, first come first served). */
  readonly fairShares: boolean;
  /** The service's own deadline of a call, ms: a call that cannot start in time is refused. */
  readonly callDeadlineMs?: number;
  /** At most this many calls wait, all clients together (default 4,096: memory). */
  readonly maxQueued?: number;
  /**
   * The longest a call holds its slot, ms (default: the call deadline and a
   * second): a call whose work never ends (a promise that never settles) gives
   * its slot back then, so that a lost slot cannot shrink the instance.
   */
  readonly holdMs?: number;
  /**
   * An instance is young until this many calls have finished (default 5,000)
   * or it has been busy for 10 s: while young, a queue must grow for 2 s to
   * be marked, since a cold instance reads a closed loop's first calls over
   * seconds.
   */
  readonly youngCalls?: number;
  /**
   * Refusals at the door are held before they are written while refusals
   * take more than this share of the core (default 0.6; pacer.ts).
   */
  readonly paceAboveShare?: number;
}

/** Admission's settings as the configuration gives them (docs/configuration.md, "Overload"). */
export interface AdmissionConfig extends AdmissionSettings {
  /** Off: every call runs at once, as before admission existed. */
  readonly enabled: boolean;
  /** What a refusal asks the client to wait, in seconds (Retry-After; grpc-retry-pushback-ms in ms). */
  readonly retryAfterS: number;
}

export const DEFAULT_ADMISSION: AdmissionConfig = Object.freeze({
  enabled: true,
  floor: 32,
  max: 200,
  sloMs: 250,
  queueTargetMs: 100,
  fairShares: true,
  retryAfterS: 1,
});

/** Why a call was refused. */
export const Refusal = {
  /** The instance is over its capacity: retry later, or elsewhere. */
  Overloaded: "overloaded",
  /** This client takes more than its share while others want service. */
  ClientShare: "client_share",
  /** The call's own deadline would pass before it could run. */
  Deadline: "deadline",
} as const;
export type Refusal = (typeof Refusal)[keyof typeof Refusal];

/** How an admitted call ended, for the limit: which service times say something of queueing. */
export const Outcome = {
  /** It did its work (an answer, or an error that the database was asked for: not found, a conflict). */
  Work: "work",
  /** It ran past the service's own deadline: a drop. */
  Overran: "overran",
  /** Anything else (a fast refusal of the pipeline, a client that left, an outage): not sampled. */
  Ignore: "ignore",
} as const;
export type Outcome = (typeof Outcome)[keyof typeof Outcome];

/** What admission tells the metrics (src/observability) as it happens. */
export interface AdmissionObserver {
  refused(reason: Refusal, client: string): void;
  /** A call that waited was admitted (or refused) after `seconds` in its queue. */
  waited(seconds: number, admitted: boolean): void;
  /**
   * Calls whose work outlived holdMs gave their slots back (admission's own
   * check): work that never ends is a fault, its routes named.
   */
  held?(calls: number, routes: readonly string[]): void;
}

/** An admitted call: handed back to `leave` once its work is over. */
export class Ticket {
  /** The slot was given back (`leave` once only, whichever way the call ended first). */
  left = false;
  constructor(
    readonly client: ClientQueue,
    readonly route: string,
    readonly startedAt: number,
    /** Calls running when it started, itself included. */
    readonly runningAtStart: number,
  ) {}
}

/** A call waiting for a slot: settled with a ticket or a refusal; `cancel` when its client leaves. */
export class Waiter {
  settled = false;
  /** Told how the wait ended (set by whoever waits, before the wait can end). */
  settle: (outcome: Ticket | Refusal) => void = ignore;
  constructor(
    readonly client: ClientQueue,
    /** The client's label for the metrics (the queue's may be shared: shares off). */
    readonly label: string,
    readonly route: string,
    readonly arrivedAt: number,
    readonly expiresAt: number,
    /** Whether the expiry is the client's own deadline (then a refusal says so; else it is over capacity). */
    readonly deadlineFirst: boolean,
  ) {}
}

const ignore = () => undefined;

/** The growth test's marks: a queue's level at its last few marks, in a ring. */
class GrowthMarks {
  private readonly times = new Float64Array(GROWTH_MARKS);
  private readonly levels = new Float64Array(GROWTH_MARKS);
  /** Marks made, counted up; the newest is at (made - 1) % size. */
  private made = 0;
  /** When the newest mark was made (0: none yet). */
  get lastAt(): number {
    return this.made === 0 ? 0 : (this.times[(this.made - 1) % GROWTH_MARKS] as number);
  }
  add(at: number, level: number): void {
    const i = this.made % GROWTH_MARKS;
    this.times[i] = at;
    this.levels[i] = level;
    this.made++;
  }
  /** The newest mark made at or before `at`, or the oldest kept (-1: none). */
  atOrBefore(at: number): number {
    const oldest = Math.max(0, this.made - GROWTH_MARKS);
    for (let m = this.made - 1; m >= oldest; m--) {
      if ((this.times[m % GROWTH_MARKS] as number) <= at) return m;
    }
    return this.made > 0 ? oldest : -1;
  }
  timeAt(mark: number): number {
    return mark < 0 ? 0 : (this.times[mark % GROWTH_MARKS] as number);
  }
  levelAt(mark: number): number {
    return mark < 0 ? 0 : (this.levels[mark % GROWTH_MARKS] as number);
  }
}

/** Marks kept: 2 W over I (the peak's), and a few more for intervals longer than I. */
const GROWTH_MARKS = 16;

/** One client's calls: how many run, the ones waiting (oldest first), its round-robin state. */
class ClientQueue {
  running = 0;
  private waiting: Waiter[] = [];
  private head = 0;
  deficit = 0;
  readonly grants: RateMeter;
  /** Its calls arriving, per ms: what it asks for (its demand). */
  readonly arrivals: RateMeter;
  /** Its queue grows steadily and its wait passed the target: arrivals beyond the target are refused. */
  overloaded = false;
  /** When it was last found overloaded (0: never). */
  overloadedAt = 0;
  /** Its queue's level at the growth test's last marks. */
  readonly marks = new GrowthMarks();
  /** For how long, ms, its queue has grown without a pause. */
  streak = 0;
  /** The highest level at marks older than 2 W (0: none yet); forgotten with the client, when it has no call left. */
  peak = 0;
  /** Its calls refused because the queue was full, counted up: growth the queue had no room for. */
  overflowed = 0;
  constructor(
    readonly label: string,
    now: number,
  ) {
    this.grants = new RateMeter(250, now);
    this.arrivals = new RateMeter(ARRIVALS_TAU_MS, now);
  }
  get queued(): number {
    return this.waiting.length - this.head;
  }
  peek(): Waiter | undefined {
    return this.waiting[this.head];
  }
  push(waiter: Waiter): void {
    this.waiting.push(waiter);
  }
  shift(): Waiter | undefined {
    const next = this.waiting[this.head];
    if (next === undefined) return undefined;
    this.waiting[this.head] = undefined as unknown as Waiter;
    this.head++;
    if (this.head === this.waiting.length) {
      this.waiting = [];
      this.head = 0;
    }
    return next;
  }
  /** Takes out the waiters `drop` says (FIFO order kept); returns them. */
  remove(drop: (waiter: Waiter) => boolean): Waiter[] {
    const removed: Waiter[] = [];
    const kept: Waiter[] = [];
    for (let i = this.head; i < this.waiting.length; i++) {
      const w = this.waiting[i] as Waiter;
      (drop(w) ? removed : kept).push(w);
    }
    this.waiting = kept;
    this.head = 0;
    return removed;
  }
  /** The newest waiters beyond the first `keep`, taken out (the tail trimmed). */
  trim(keep: number): Waiter[] {
    const cut = this.head + Math.max(0, keep);
    const removed = this.waiting.slice(cut);
    this.waiting.length = Math.min(this.waiting.length, cut);
    return removed;
  }
}

export type { ClientQueue };

/**
 * The growth test: marks at least I ms apart, each above the level of W ms
 * before, in a row for G ms (watchGrowth). G is longer than a closed loop's
 * ramp: 256 connections opening at once were all waiting within 250 ms on
 * this 2-core VM (a G of 100 or 250 ms refused some of their calls, and
 * every refused call came back at once; 300 ms and more refused none), and
 * short enough that a spike's first admitted calls wait well under issue
 * 41's 500 ms (docs/decisions.md, "Admission").
 */
const GROWTH_INTERVAL_MS = 25;
/** Growth is measured over this long (W): longer than a loaded loop's turn. */
const GROWTH_WINDOW_MS = 100;
/** G: a ramp's growth is still seen W after it ends, so G is the 300 ms the ramps took, and W. */
const GROWTH_MS = 300 + GROWTH_WINDOW_MS;
/**
 * The growth that marks a queue whose wait passed a quarter of the call
 * deadline: no closed loop worth protecting waits that long, and a flood held
 * at the deadline's length left gRPC calls unanswered (docs/decisions.md).
 */
const SHORT_GROWTH_MS = 100;
/**
 * A young instance (fewer calls finished than YOUNG_CALLS, and busy for less
 * than YOUNG_BUSY_MS) reads its connections' first requests slowly: its code
 * and its database are cold, and a closed loop's ramp, as admission sees it,
 * lasts seconds, not the 300 ms measured warm. While young, growth must last
 * YOUNG_GROWTH_MS, also for a client found overloaded a moment ago
 * (docs/decisions.md, "A young instance waits 2 s of growth"). Busy time, not
 * age: an instance idle since its start is still cold.
 */
const YOUNG_CALLS = 5_000;
const YOUNG_BUSY_MS = 10_000;
const YOUNG_GROWTH_MS = 2_000;
/** A client stays overloaded at most this long before it must show growth again (a probe). */
const OVERLOADED_PROBE_MS = 2_000;
/** At most this many calls wait by default, all clients together (memory). */
const MAX_QUEUED = 4_096;
/** Calls finished before a predicted wait may refuse a call (wontRunBefore). */
const SURE_AFTER_CALLS = 200;
/** How long past the call deadline a call may hold its slot, by default. */
const HOLD_GRACE_MS = 1_000;
/** The queue's expiry timer, while calls wait. */
const EXPIRY_CHECK_MS = 10;
/** The time constant of a client's arrival rate (its demand), ms. */
const ARRIVALS_TAU_MS = 1_000;
/**
 * How long the instance's capacity is remembered (the best second of this
 * many, a max filter as TCP BBR keeps a path's bandwidth): far longer than a
 * spike, so that a flood whose refusals take the core does not shrink the
 * shares of the clients beside it. What is remembered is what was served:
 * at low load that is the demand, not the capacity; the capacity is seen at
 * the day's busy moments, and kept ten minutes. Too high a capacity (the
 * database slowed since) makes more clients modest, who are then served in
 * turn among themselves, as all clients are without it.
 */
const CAPACITY_SECONDS = 600;
/** A route's cost before any of its calls finished, ms. */
const DEFAULT_COST_MS = 1;
/** The cost estimate's time constant. */
const COST_TAU_MS = 10_000;

export class Admission {
  readonly limiter: GradientLimit;
  running = 0;
  queued = 0;
  private readonly clients = new Map<string, ClientQueue>();
  /** Clients with calls waiting, served in turn. */
  private readonly turns: ClientQueue[] = [];
  private turn = 0;
  private readonly completions = new BusyRate();
  private readonly best = new BestThroughput();
  /** What the instance has served at best lately (CAPACITY_SECONDS): the whole that shares divide. */
  private readonly capacity = new BestThroughput(CAPACITY_SECONDS);
  /** Where the next look for a modest client starts (they are served in turn too). */
  private modestTurn = 0;
  private readonly costs = new Map<string, { ms: number; at: number }>();
  /** Service time of calls that did their work, smoothed, ms (what the queue target leaves room for). */
  serviceMs = 0;
  /** The wait predicted for the last call that could not run at once, ms (the refusal summary's). */
  lastWaitMs = 0;
  private expiry: ReturnType<typeof setTimeout> | undefined;
  private readonly loopDelay = monitorEventLoopDelay({ resolution: 10 });
  private loopWatched = false;
  private readonly callDeadlineMs: number;
  private readonly maxQueued: number;
  private readonly holdMs: number;
  private readonly youngCalls: number;
  /** Admitted calls in the order they started (some already left): the oldest is checked against holdMs. */
  private tickets: Ticket[] = [];
  private ticketsHead = 0;

  constructor(
    private readonly settings: AdmissionSettings,
    private readonly observer?: AdmissionObserver,
    private readonly now: () => number = performance.now.bind(performance),
  ) {
    this.callDeadlineMs = settings.callDeadlineMs ?? 10_000;
    this.maxQueued = settings.maxQueued ?? MAX_QUEUED;
    this.holdMs = settings.holdMs ?? this.callDeadlineMs + HOLD_GRACE_MS;
    this.youngCalls = settings.youngCalls ?? YOUNG_CALLS;
    this.limiter = new GradientLimit(settings, () => this.best.perSecond(this.now()));
  }

  /** Nothing to start: every meter is lazy (kept for the front's life cycle). */
  start(): void {}

  stop(): void {
    clearTimeout(this.expiry);
    this.expiry = undefined;
    this.watchLoop(false);
  }

  /** A call arriving now runs at once (no deadline of its needs reading). */
  get free(): boolean {
    return this.running < this.limiter.limit && this.queued === 0;
  }

  /** The event loop's delay while calls wait, ms (0 otherwise): time a call has spent before admission saw it. */
  get loopDelayMs(): number {
    return this.loopDelayRead;
  }

  /**
   * The loop delay as last read, by the queue's check (every EXPIRY_CHECK_MS): a
   * histogram's percentile walks its buckets, and read on every arrival it cost 2 % of
   * the core under a flood (a CPU profile at 5x, docs/performance.md).
   */
  private loopDelayRead = 0;

  private readLoopDelay(): void {
    this.loopDelayRead =
      !this.loopWatched || this.loopDelay.count === 0
        ? 0
        : Math.max(0, this.loopDelay.percentile(50) / 1e6 - 10);
  }

  /** Whether the instance is young: its first calls, when it is cold (YOUNG_CALLS). */
  private get young(): boolean {
    return this.completions.completed < this.youngCalls && this.completions.busyMs < YOUNG_BUSY_MS;
  }

  /** Calls finished per second of busy time now, as the wait is predicted from (0: not known yet). */
  get servedPerS(): number {
    return 1000 * (this.completions.perMs(this.now()) ?? 0);
  }

  /** Calls finished per second lately, the best second of ten (0: not known yet). */
  get throughput(): number {
    return this.best.perSecond(this.now());
  }

  /** Clients with calls running or waiting. */
  get activeClients(): number {
    return this.clients.size;
  }

  /** Clients whose queue grows past the target (their arrivals are refused). */
  get overloadedClients(): number {
    let n = 0;
    for (const c of this.turns) if (c.overloaded) n++;
    return n;
  }

  /**
   * A call of `client` on `route` arrives: a ticket (it runs now), a refusal,
   * or a waiter (its `settle` is told how the wait ended). `deadlineAt` is
   * when the client stops waiting for the answer, if it said.
   */
  enter(client: string, route: string, deadlineAt?: number): Ticket | Refusal | Waiter {
    const now = this.now();
    this.reclaim(now);
    // Slots that came free without a call leaving (the limit rose) go to the waiting first.
    if (this.queued > 0 && this.running < this.limiter.limit) this.serveWaiting(now);
    const queue = this.queueOf(this.settings.fairShares ? client : "_all", now);
    queue.arrivals.tick(now);
    if (this.free) return this.admit(queue, route, now);
    const serviceDue = now + this.callDeadlineMs;
    const due = Math.min(deadlineAt ?? Number.POSITIVE_INFINITY, serviceDue);
    // Whose deadline binds: the client's own (a deadline it cannot meet: deadline_exceeded),
    // or the service's (more calls than it serves in that time: over capacity, 503 and
    // Retry-After, as any refusal of load; a legacy caller has no deadline of its own).
    const clientsDeadline = due < serviceDue;
    this.watchGrowth(queue, now);
    const wait = this.predictWait(queue, now);
    this.lastWaitMs = wait;
    const cost90 = 1.5 * this.costOf(route);
    if (this.wontRunBefore(queue, now, due - cost90 - this.loopDelayMs)) {
      return this.refuse(
        queue,
        client,
        clientsDeadline ? Refusal.Deadline : this.reasonFor(queue, now),
      );
    }
    if (queue.overloaded && wait > this.queueTarget()) {
      return this.refuse(queue, client, this.reasonFor(queue, now));
    }
    if (this.queued >= this.maxQueued && !this.makeRoom(queue, now)) {
      // Refused for want of room, it still shows arrivals outpacing service (the growth test).
      queue.overflowed++;
      return this.refuse(queue, client, this.reasonFor(queue, now));
    }
    const overloadedExpiry = queue.overloaded
      ? now + 2 * this.queueTarget()
      : Number.POSITIVE_INFINITY;
    const deadlineExpiry = due - cost90;
    const waiter = new Waiter(
      queue,
      client,
      route,
      now,
      Math.min(deadlineExpiry, overloadedExpiry),
      clientsDeadline && deadlineExpiry <= overloadedExpiry,
    );
    if (queue.queued === 0) this.turns.push(queue);
    queue.push(waiter);
    this.queued++;
    this.armExpiry();
    return waiter;
  }

  /**
   * The call of `ticket` is over (its work ended); `outcome` says whether its
   * time says anything. Once only: a ticket already given back (`left`) is ignored.
   */
  leave(ticket: Ticket, outcome: Outcome = Outcome.Work): void {
    if (ticket.left) return;
    ticket.left = true;
    const now = this.now();
    const { client } = ticket;
    this.running--;
    client.running--;
    this.completions.complete(now, this.running > 0);
    this.best.tick(now);
    this.capacity.tick(now);
    const ms = now - ticket.startedAt;
    if (outcome === Outcome.Work) {
      this.limiter.sample(ticket.route, ms, ticket.runningAtStart, now);
      this.learnCost(ticket.route, ms, now);
    } else if (outcome === Outcome.Overran && ms >= 0.9 * this.callDeadlineMs) {
      // The service's own deadline, not a client's shorter one.
      this.limiter.drop();
    }
    this.forget(client);
    this.serveWaiting(now);
  }

  /** A waiting call whose client went away: it leaves the queue, unanswered. */
  cancel(waiter: Waiter): void {
    if (waiter.settled) return;
    waiter.settled = true;
    const queue = waiter.client;
    const removed = queue.remove((w) => w === waiter);
    this.queued -= removed.length;
    this.afterRemoval(queue);
  }

  /**
   * Whether a call of `queue` arriving now surely cannot start by `latest`: a
   * refusal at once instead of a wait that ends in one. Sure means the rate
   * is known from enough calls: a cold instance's first calls are slow, and
   * a rate from them once predicted 11 s for 217 calls a closed loop then
   * had served in 0.8 s. A call it lets wait is still refused when its time
   * comes (its expiry), so "not sure" costs a wait, never a deadline. (The
   * best second of the last ten as the rate instead was tried: too hopeful
   * under a flood, it let gRPC's queue grow to its deadline, and calls went
   * unanswered at 10×.)
   */
  private wontRunBefore(queue: ClientQueue, now: number, latest: number): boolean {
    if (this.completions.completed < SURE_AFTER_CALLS) return false;
    return now + this.predictWait(queue, now) > latest;
  }

  /** How long a call of `queue` arriving now would wait, ms: its place in its queue over its rate. */
  private predictWait(queue: ClientQueue, now: number): number {
    const share = this.shareRate(queue, now);
    // No estimate yet (the first calls): admit; the hard bound still holds.
    return share > 0 ? (queue.queued + 1) / share : 0;
  }

  /**
   * Calls per ms `queue` is served at: its share of the completions, or more
   * if it gets more; all of them if it is modest, since it is served first (0: unknown).
   */
  private shareRate(queue: ClientQueue, now: number): number {
    const rate = this.completions.perMs(now);
    if (rate === undefined) return 0;
    if (this.modest(queue, now)) return rate;
    const wanting = this.turns.length + (queue.queued === 0 ? 1 : 0);
    return Math.max(queue.grants.perMs(now), rate / Math.max(1, wanting));
  }

  /**
   * Whether `queue`'s client asks for less than its share of the instance's
   * capacity (the best second of the last ten minutes, divided among the
   * clients with calls running or waiting): such a client is served before
   * the others, and not refused as over its share unless it holds its share
   * of the running calls (reasonFor). The share is of what the
   * instance can do, not of what it does now: a flood whose refusals take
   * the core (HTTP/1.1: Node parses and answers each one) lowers what is
   * served, and shares of that would make a quiet client pay for it
   * (docs/decisions.md, "Modest clients first").
   */
  private modest(queue: ClientQueue, now: number): boolean {
    if (!this.settings.fairShares || this.clients.size < 2) return false;
    const capacity = this.capacity.perSecond(now) / 1000;
    return capacity > 0 && queue.arrivals.perMs(now) * this.clients.size <= capacity;
  }

  /** The index in `turns` of the next modest client with calls waiting, or -1. */
  private nextModest(now: number): number {
    const n = this.turns.length;
    if (n < 2) return -1;
    for (let i = 0; i < n; i++) {
      const at = (this.modestTurn + i) % n;
      if (this.modest(this.turns[at] as ClientQueue, now)) {
        this.modestTurn = at + 1;
        return at;
      }
    }
    return -1;
  }

  /** The longest a call may wait: the SLO less the service time and the loop's delay, 10 ms to the target. */
  private queueTarget(): number {
    const room = this.settings.sloMs - 1.5 * this.serviceMs - this.loopDelayMs;
    return Math.min(this.settings.queueTargetMs, Math.max(10, room));
  }

  /**
   * Whether the client's queue grows steadily: at every mark (at least I ms
   * apart) for G ms in a row, its level (calls running, waiting, and refused
   * for want of room) is above its level W ms before by more than a
   * twentieth of what it is served in that time, and above its highest at
   * marks older than 2 W (unless it flooded lately). A flood, which refusing
   * helps; a closed loop's calls in the system stop growing once its clients
   * all wait, and never pass their connections. Growth is counted in time,
   * not in marks, and over W, not from one mark to the next: under load a
   * turn of the event loop may last longer than I, a turn's arrivals come in
   * together, and so do the completions of calls that started together, so
   * that a queue growing by a third of its service shrank in one interval of
   * three and was never found. A client found overloaded stays so until the
   * probe time (then it must show growth again, for the short G: it was
   * flooding two seconds ago), or until it asks no more than it is served
   * (the flood is over): its refusals keep its queue short, so the queue's
   * length says nothing of whether it still floods.
   */
  private watchGrowth(queue: ClientQueue, now: number): void {
    const { marks } = queue;
    if (now - marks.lastAt < GROWTH_INTERVAL_MS) return;
    const rate = this.shareRate(queue, now);
    const elapsed = now - marks.lastAt;
    // Its calls in the system: a falling limit moves calls from running to waiting, which
    // is no growth (a closed loop's queue grew 43 -> 146 in 150 ms that way, and was refused).
    const level = queue.running + queue.queued + queue.overflowed;
    const sinceAt = marks.atOrBefore(now - GROWTH_WINDOW_MS);
    // A closed loop's calls in the system never pass its connections: once it has had them
    // all in, a level back where it has been (the loop reads its connections in bursts) is
    // no growth; a flood's level makes new highs. Highs older than 2 W: a flood whose calls
    // finish together makes a new high only at the top of each turn's sawtooth.
    queue.peak = Math.max(queue.peak, marks.levelAt(marks.atOrBefore(now - 2 * GROWTH_WINDOW_MS)));
    // A client that flooded a moment ago is no closed loop: its growth alone is enough.
    const grew =
      (level > queue.peak || this.floodedLately(queue, now)) &&
      level - marks.levelAt(sinceAt) > Math.max(1, 0.05 * rate * (now - marks.timeAt(sinceAt)));
    queue.streak = grew ? queue.streak + elapsed : 0;
    marks.add(now, level);
    const target = this.queueTarget();
    if (!queue.overloaded) {
      const wait = this.predictWait(queue, now);
      if (queue.streak >= this.growthNeeded(queue, now, wait) && wait > target) {
        queue.overloaded = true;
        queue.overloadedAt = now;
        this.trimTail(queue, now, target);
      }
    } else if (
      now - queue.overloadedAt >= OVERLOADED_PROBE_MS ||
      queue.arrivals.perMs(now) <= queue.grants.perMs(now)
    ) {
      queue.overloaded = false;
      queue.streak = 0;
    }
  }

  /** How long `queue` must have grown (its streak, ms) to be marked, its wait predicted at `wait`. */
  private growthNeeded(queue: ClientQueue, now: number, wait: number): number {
    // A queue whose wait nears the call deadline is no closed loop's ramp worth waiting for.
    if (wait > this.callDeadlineMs / 4) return SHORT_GROWTH_MS;
    // A cold instance reads a closed loop's connections over seconds.
    if (this.young) return YOUNG_GROWTH_MS;
    // Nor is a queue whose client flooded a moment ago.
    return this.floodedLately(queue, now) ? SHORT_GROWTH_MS : GROWTH_MS;
  }

  /** Whether `queue`'s client was found overloaded within the last two probe times. */
  private floodedLately(queue: ClientQueue, now: number): boolean {
    return queue.overloadedAt > 0 && now - queue.overloadedAt < 2 * OVERLOADED_PROBE_MS;
  }

  /**
   * The queue is full (maxQueued, all clients together): room for a call of
   * `queue` is made by refusing the newest call of the client with the most
   * waiting, when that is another client with more than this one, so that a
   * flood that fills the queue never refuses a quiet client. False: no room.
   */
  private makeRoom(queue: ClientQueue, now: number): boolean {
    let longest: ClientQueue | undefined;
    for (const q of this.turns) if (!longest || q.queued > longest.queued) longest = q;
    if (!longest || longest === queue || longest.queued <= queue.queued + 1) return false;
    const removed = longest.trim(longest.queued - 1);
    this.queued -= removed.length;
    // Another client wants service and this one holds more of the queue: over its share.
    for (const w of removed) this.expire(w, now, Refusal.ClientShare);
    return true;
  }

  /** An overloaded client's calls beyond what it is served within the target are refused now. */
  private trimTail(queue: ClientQueue, now: number, target: number): void {
    const keep = Math.floor(this.shareRate(queue, now) * target);
    const removed = queue.trim(keep);
    this.queued -= removed.length;
    for (const w of removed) this.expire(w, now, this.reasonFor(queue, now));
    this.afterRemoval(queue);
  }

  /**
   * 429 for a client that takes its share or more (of the calls running, or,
   * unless it is modest, of the completions) while another client waits; 503
   * otherwise.
   */
  private reasonFor(queue: ClientQueue, now: number): Refusal {
    const others = this.turns.some((c) => c !== queue);
    if (!others) return Refusal.Overloaded;
    const clients = Math.max(2, this.clients.size);
    // Holding its share of the slots or more is over its share, whatever it asks.
    if (queue.running >= this.limiter.limit / clients) return Refusal.ClientShare;
    // Asking less than its share of the capacity is not, whatever it is served now.
    if (this.modest(queue, now)) return Refusal.Overloaded;
    const rate = this.completions.perMs(now) ?? 0;
    const served = rate > 0 && queue.grants.perMs(now) >= (0.9 * rate) / clients;
    return served ? Refusal.ClientShare : Refusal.Overloaded;
  }

  private costOf(route: string): number {
    return this.costs.get(route)?.ms ?? DEFAULT_COST_MS;
  }

  private learnCost(route: string, ms: number, now: number): void {
    const cost = this.costs.get(route);
    if (!cost) this.costs.set(route, { ms, at: now });
    else {
      cost.ms += (1 - Math.exp(-(now - cost.at) / COST_TAU_MS)) * (ms - cost.ms);
      cost.at = now;
    }
    this.serviceMs = this.serviceMs === 0 ? ms : this.serviceMs + 0.05 * (ms - this.serviceMs);
  }

  private queueOf(key: string, now: number): ClientQueue {
    let queue = this.clients.get(key);
    if (!queue) {
      queue = new ClientQueue(key, now);
      this.clients.set(key, queue);
    }
    return queue;
  }

  private admit(queue: ClientQueue, route: string, now: number): Ticket {
    this.completions.advance(now, true);
    this.running++;
    queue.running++;
    const ticket = new Ticket(queue, route, now, this.running);
    this.tickets.push(ticket);
    return ticket;
  }

  /**
   * Calls that held their slot past holdMs give it back (their work never
   * ended). Checked when a call arrives and while calls wait, never on a
   * timer of each call's own: the oldest ticket first, the ones that left
   * dropped on the way, so each ticket is looked at about once.
   */
  private reclaim(now: number): void {
    const tickets = this.tickets;
    let head = this.ticketsHead;
    let held: Set<string> | undefined;
    let calls = 0;
    while (head < tickets.length) {
      const oldest = tickets[head] as Ticket;
      if (!oldest.left) {
        if (now - oldest.startedAt < this.holdMs) break;
        this.leave(oldest, Outcome.Ignore);
        if (!held) held = new Set();
        held.add(oldest.route);
        calls++;
      }
      tickets[head] = undefined as unknown as Ticket;
      head++;
    }
    if (head === tickets.length) {
      this.tickets = [];
      this.ticketsHead = 0;
    } else if (head > 1024 && head * 2 > tickets.length) {
      this.tickets = tickets.slice(head);
      this.ticketsHead = 0;
    } else this.ticketsHead = head;
    if (held) this.observer?.held?.(calls, [...held]);
  }

  private refuse(queue: ClientQueue, label: string, reason: Refusal): Refusal {
    this.observer?.refused(reason, label);
    this.forget(queue);
    return reason;
  }

  /** A client with nothing running or waiting is no longer kept. */
  private forget(queue: ClientQueue): void {
    if (queue.running + queue.queued === 0) this.clients.delete(queue.label);
  }

  /**
   * Slots free (a call left): deficit round robin over the clients with
   * calls waiting, each call costing its route's service time, so that
   * every client gets an equal share of the service.
   */
  private serveWaiting(now: number): void {
    if (this.queued === 0) return;
    let quantum = 0;
    for (const { ms } of this.costs.values()) if (ms > quantum) quantum = ms;
    quantum = Math.max(quantum, DEFAULT_COST_MS);
    while (this.queued > 0 && this.running < this.limiter.limit) {
      const modest = this.nextModest(now);
      let queue: ClientQueue;
      let head: Waiter;
      if (modest >= 0) {
        // A modest client first, out of the round robin's turn (its deficit untouched).
        queue = this.turns[modest] as ClientQueue;
        head = queue.shift() as Waiter;
        this.queued--;
        if (queue.queued === 0) this.leaveTurns(modest);
      } else {
        if (this.turn >= this.turns.length) this.turn = 0;
        queue = this.turns[this.turn] as ClientQueue;
        head = queue.peek() as Waiter;
        const cost = this.costOf(head.route);
        if (queue.deficit < cost) queue.deficit += quantum;
        queue.shift();
        this.queued--;
        queue.deficit -= cost;
        const next = queue.peek();
        if (!next) {
          this.leaveTurns(this.turn);
        } else if (queue.deficit < this.costOf(next.route)) {
          this.turn++;
        }
      }
      if (now >= head.expiresAt) {
        this.expire(head, now, head.deadlineFirst ? Refusal.Deadline : Refusal.Overloaded);
        this.forget(queue);
        continue;
      }
      head.settled = true;
      queue.grants.tick(now);
      this.observer?.waited((now - head.arrivedAt) / 1000, true);
      head.settle(this.admit(queue, head.route, now));
    }
    this.armExpiry();
  }

  /** After waiters left `queue`: a client with nothing waiting leaves the turns. */
  private afterRemoval(queue: ClientQueue): void {
    if (queue.queued > 0) return;
    const at = this.turns.indexOf(queue);
    if (at >= 0) this.leaveTurns(at);
    queue.deficit = 0;
    this.forget(queue);
    this.armExpiry();
  }

  /** The client at `at` in the turns has nothing waiting: out of the round robin, its deficit dropped. */
  private leaveTurns(at: number): void {
    const [queue] = this.turns.splice(at, 1);
    if (queue) queue.deficit = 0;
    if (at < this.turn) this.turn--;
  }

  private expire(waiter: Waiter, now: number, reason: Refusal): void {
    waiter.settled = true;
    this.observer?.waited((now - waiter.arrivedAt) / 1000, false);
    this.observer?.refused(reason, waiter.label);
    waiter.settle(reason);
  }

  /**
   * While calls wait: the expiry check every 10 ms, and the loop-delay watch.
   * Both stop at the first check that finds no call waiting, not each time
   * the queue empties: at the limit under steady load the queue empties and
   * fills within a millisecond, and switching them on and off with every
   * call would cost more than running them. Idle, neither runs.
   */
  private armExpiry(): void {
    if (this.queued === 0 || this.expiry !== undefined) return;
    this.watchLoop(true);
    this.expiry = setTimeout(this.checkExpiry, EXPIRY_CHECK_MS);
    this.expiry.unref?.();
  }

  private readonly checkExpiry = (): void => {
    this.expiry = undefined;
    const now = this.now();
    this.reclaim(now);
    this.readLoopDelay();
    this.expireWaiting(now);
    if (this.queued > 0) this.armExpiry();
    else this.watchLoop(false);
  };

  private watchLoop(on: boolean): void {
    if (on === this.loopWatched) return;
    this.loopWatched = on;
    if (on) this.loopDelay.enable();
    else {
      this.loopDelay.disable();
      this.loopDelay.reset();
      this.loopDelayRead = 0;
    }
  }

  /** Refuses every waiting call whose time is up (its deadline, or an overloaded client's target). */
  private expireWaiting(now: number): void {
    for (const queue of [...this.turns]) {
      const removed = queue.remove((w) => now >= w.expiresAt);
      this.queued -= removed.length;
      for (const w of removed) {
        this.expire(w, now, w.deadlineFirst ? Refusal.Deadline : Refusal.Overloaded);
      }
      this.afterRemoval(queue);
    }
  }
}
