/**
 * Admission control (docs/api.md §4.1, docs/operations.md "Overload"): which
 * calls run now, which wait a moment, and which are refused before any work
 * is done. Calls run while fewer than the adaptive limit (limit.ts) are
 * running. Beyond it a call waits in its client's queue, and the queues are
 * served in turn, one call each, so that a client that floods waits behind
 * its own calls, not in front of everybody's. A call is refused at once when
 * the wait it would have exceeds the queue target ("overloaded"), when its
 * client already holds its share while others wait ("client_share"), or
 * when its deadline comes first ("deadline"); a queued call that waits past
 * the target after all is refused then. Nothing here knows HTTP: the front
 * (src/http/admission.ts) asks and writes the answer.
 */
import { AdaptiveLimit, type LimitSettings } from "./limit";

export interface AdmissionSettings extends LimitSettings {
  /** The longest a call waits for a slot (predicted at arrival, and enforced). */
  readonly queueTargetMs: number;
  /** Each client has a share of the limit while others wait (off: one queue, first come first served). */
  readonly fairShares: boolean;
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
  initial: 64,
  min: 16,
  max: 1000,
  latencyTargetMs: 250,
  loopDelayTargetMs: 20,
  queueTargetMs: 100,
  fairShares: true,
  retryAfterS: 1,
});

/** Why a call was refused. */
export const Refusal = {
  /** The instance is over its capacity: retry later, or elsewhere. */
  Overloaded: "overloaded",
  /** This client holds more than its share while others wait. */
  ClientShare: "client_share",
  /** The call's own deadline would pass before it could run. */
  Deadline: "deadline",
} as const;
export type Refusal = (typeof Refusal)[keyof typeof Refusal];

/** What admission tells the metrics (src/observability) as it happens. */
export interface AdmissionObserver {
  refused(reason: Refusal, client: string): void;
  /** A call that waited was admitted (or refused) after `seconds` in its queue. */
  waited(seconds: number, admitted: boolean): void;
}

/** An admitted call: handed back to `leave` once its answer is out. */
export class Ticket {
  /** The slot was given back (`leave` once only, whichever way the call ended first). */
  left = false;
  constructor(
    readonly client: ClientQueue,
    readonly startedAt: number,
  ) {}
}

/** A call waiting for a slot: settled with a ticket or a refusal; `cancel` when its client leaves. */
export class Waiter {
  settled = false;
  /** Told how the wait ended (set by whoever waits, before the wait can end). */
  settle: (outcome: Ticket | Refusal) => void = ignore;
  constructor(
    readonly client: ClientQueue,
    readonly arrivedAt: number,
    readonly expiresAt: number,
    /** Whether the expiry is the call's own deadline (then a refusal says so). */
    readonly deadlineFirst: boolean,
  ) {}
}

const ignore = () => undefined;

/** One client's calls: how many run, and the ones waiting, oldest first. */
class ClientQueue {
  running = 0;
  readonly waiting: Waiter[] = [];
  head = 0;
  constructor(readonly label: string) {}
  get queued(): number {
    return this.waiting.length - this.head;
  }
  shift(): Waiter | undefined {
    const next = this.waiting[this.head];
    if (next === undefined) return undefined;
    this.waiting[this.head] = undefined as unknown as Waiter;
    this.head++;
    if (this.head === this.waiting.length) {
      this.waiting.length = 0;
      this.head = 0;
    }
    return next;
  }
}

export type { ClientQueue };

/** A queue holds at most this many calls per unit of the limit, whatever the prediction says. */
const QUEUE_PER_SLOT = 64;

export class Admission {
  readonly limiter: AdaptiveLimit;
  running = 0;
  queued = 0;
  private readonly clients = new Map<string, ClientQueue>();
  /** Clients with calls waiting, served in turn. */
  private readonly turns: ClientQueue[] = [];
  private turn = 0;
  private tickAt = 0;
  private windowAt = 0;
  /** The event loop's mean delay in the last window, in ms (the ticks' lateness). */
  loopDelayMs = 0;
  private lateness = 0;
  private ticks = 0;
  /** The most calls that ran at once in the current window. */
  private peakRunning = 0;
  /** Calls refused in the current window. */
  private refusedInWindow = 0;
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly settings: AdmissionSettings,
    private readonly observer?: AdmissionObserver,
    private readonly now: () => number = performance.now.bind(performance),
  ) {
    this.limiter = new AdaptiveLimit(settings);
    this.tickAt = this.now();
    this.windowAt = this.tickAt;
  }

  /** Starts the clock: the limit's windows, the event loop's delay, expired waits. */
  start(tickMs = 10): void {
    if (this.timer) return;
    this.tickAt = this.now();
    this.windowAt = this.tickAt;
    this.timer = setInterval(() => this.tick(tickMs), tickMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** A call arriving now runs at once (no deadline of its needs reading). */
  get free(): boolean {
    return this.running < this.limiter.limit && this.queued === 0;
  }

  /**
   * A call of `client` arrives: a ticket (it runs now), a refusal, or a
   * waiter (it waits; its `settle` is told how the wait ended). `deadlineAt` is when the
   * client stops waiting for the answer, if it said.
   */
  enter(client: string, deadlineAt: number | undefined): Ticket | Refusal | Waiter {
    const queue = this.queueOf(client);
    if (this.free) return this.admit(queue);
    const now = this.now();
    if (deadlineAt !== undefined && deadlineAt <= now) return this.refuse(queue, Refusal.Deadline);
    if (this.settings.fairShares && this.queued > queue.queued && this.overShare(queue)) {
      return this.refuse(queue, Refusal.ClientShare);
    }
    const limit = Math.max(1, this.limiter.limit);
    // Queues are served in turn: ahead of this call are its client's own, and as many of
    // every other client's; the loop's delay comes on top (a late loop answers late).
    const ahead = Math.min(this.queued, (queue.queued + 1) * Math.max(1, this.turns.length));
    // A client with nothing waiting yet goes first when a slot frees: the loop's delay
    // is the flood's, not its own (a quiet client keeps its share beside a flood).
    const loopDelayMs = queue.queued > 0 || this.turns.length === 0 ? this.loopDelayMs : 0;
    const expectedWaitMs = loopDelayMs + ((ahead + 1) * this.limiter.latencyMs) / limit;
    if (
      expectedWaitMs > this.settings.queueTargetMs ||
      this.queued >= QUEUE_PER_SLOT * Math.ceil(limit)
    ) {
      return this.refuse(queue, Refusal.Overloaded);
    }
    let expiresAt = now + this.settings.queueTargetMs;
    const deadlineFirst = deadlineAt !== undefined && deadlineAt < expiresAt;
    if (deadlineFirst) expiresAt = deadlineAt;
    const waiter = new Waiter(queue, now, expiresAt, deadlineFirst);
    if (queue.queued === 0) this.turns.push(queue);
    queue.waiting.push(waiter);
    this.queued++;
    return waiter;
  }

  /** The call of `ticket` is over (answered, failed, or its client left). */
  leave(ticket: Ticket): void {
    const { client } = ticket;
    this.limiter.sample(this.now() - ticket.startedAt);
    this.running--;
    client.running--;
    this.forget(client);
    this.serveWaiting();
  }

  /** A waiting call whose client went away: it leaves the queue, unanswered. */
  cancel(waiter: Waiter): void {
    if (waiter.settled) return;
    waiter.settled = true;
    const queue = waiter.client;
    const at = queue.waiting.indexOf(waiter, queue.head);
    if (at < 0) return;
    queue.waiting.splice(at, 1);
    this.queued--;
    this.afterRemoval(queue);
  }

  /**
   * Whether `queue` holds its share of the limit or more: the limit split
   * evenly between the clients with calls running or waiting (`clients`
   * holds exactly those, `queue` included).
   */
  private overShare(queue: ClientQueue): boolean {
    const share = Math.max(1, Math.floor(this.limiter.limit / this.clients.size));
    return queue.running + queue.queued >= share;
  }

  private queueOf(client: string): ClientQueue {
    let queue = this.clients.get(client);
    if (!queue) {
      queue = new ClientQueue(client);
      this.clients.set(client, queue);
    }
    return queue;
  }

  private admit(queue: ClientQueue): Ticket {
    this.running++;
    if (this.running > this.peakRunning) this.peakRunning = this.running;
    queue.running++;
    return new Ticket(queue, this.now());
  }

  private refuse(queue: ClientQueue, reason: Refusal): Refusal {
    this.refusedInWindow++;
    this.observer?.refused(reason, queue.label);
    this.forget(queue);
    return reason;
  }

  /** A client with nothing running or waiting is no longer kept. */
  private forget(queue: ClientQueue): void {
    if (queue.running + queue.queued === 0) this.clients.delete(queue.label);
  }

  private serveWaiting(): void {
    while (this.queued > 0 && this.running < this.limiter.limit) {
      const queue = this.nextTurn();
      const waiter = queue.shift() as Waiter;
      this.queued--;
      const now = this.now();
      if (now >= waiter.expiresAt) {
        this.expire(waiter, now);
        this.afterRemoval(queue);
        continue;
      }
      waiter.settled = true;
      this.observer?.waited((now - waiter.arrivedAt) / 1000, true);
      const ticket = this.admit(queue);
      this.afterRemoval(queue);
      waiter.settle(ticket);
    }
  }

  /**
   * The client served next: of those with calls waiting, the one with the
   * fewest running (a quiet client goes before a flooding one), in turn
   * among equals.
   */
  private nextTurn(): ClientQueue {
    if (this.turn >= this.turns.length) this.turn = 0;
    let best = this.turn;
    for (let i = 1; i < this.turns.length; i++) {
      const at = (this.turn + i) % this.turns.length;
      if ((this.turns[at] as ClientQueue).running < (this.turns[best] as ClientQueue).running) {
        best = at;
      }
    }
    this.turn = best + 1;
    return this.turns[best] as ClientQueue;
  }

  /** Clients with calls running or waiting (what a share is computed over). */
  get activeClients(): number {
    return this.clients.size;
  }

  /** After a waiter left `queue`: a client with nothing waiting leaves the turns. */
  private afterRemoval(queue: ClientQueue): void {
    if (queue.queued > 0) return;
    const at = this.turns.indexOf(queue);
    if (at >= 0) {
      this.turns.splice(at, 1);
      if (at < this.turn) this.turn--;
    }
    this.forget(queue);
  }

  private expire(waiter: Waiter, now: number): void {
    this.refusedInWindow++;
    waiter.settled = true;
    const reason = waiter.deadlineFirst ? Refusal.Deadline : Refusal.Overloaded;
    this.observer?.waited((now - waiter.arrivedAt) / 1000, false);
    this.observer?.refused(reason, waiter.client.label);
    waiter.settle(reason);
  }

  /** One tick of the clock `start` runs (tests call it themselves, with their own clock). */
  tick(tickMs = 10): void {
    const now = this.now();
    const late = Math.max(0, now - this.tickAt - tickMs);
    this.tickAt = now;
    this.lateness += late;
    this.ticks++;
    if (now - this.windowAt >= WINDOW_MS) {
      this.loopDelayMs = this.lateness / this.ticks;
      this.lateness = 0;
      this.ticks = 0;
      this.limiter.adjust(
        now - this.windowAt,
        this.peakRunning,
        this.loopDelayMs,
        this.queued,
        this.refusedInWindow,
      );
      this.refusedInWindow = 0;
      this.peakRunning = this.running;
      this.windowAt = now;
      this.serveWaiting();
    }
    if (this.queued > 0) this.expireWaiting(now);
  }

  /** Refuses every waiting call whose wait is over (no slot freed in time). */
  private expireWaiting(now: number): void {
    for (let i = this.turns.length - 1; i >= 0; i--) {
      const queue = this.turns[i] as ClientQueue;
      // One pass, keeping the others in order (an expiry is its deadline or the target).
      let kept = queue.head;
      for (let w = queue.head; w < queue.waiting.length; w++) {
        const waiter = queue.waiting[w] as Waiter;
        if (now < waiter.expiresAt) queue.waiting[kept++] = waiter;
        else {
          this.queued--;
          this.expire(waiter, now);
        }
      }
      queue.waiting.length = kept;
      if (kept === queue.head) {
        queue.waiting.length = 0;
        queue.head = 0;
      }
      this.afterRemoval(queue);
    }
  }
}

/** How often the limit moves. */
const WINDOW_MS = 100;
