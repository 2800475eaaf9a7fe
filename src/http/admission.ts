/**
 * Admission at the front door (docs/api.md §4.1, docs/operations.md
 * "Overload"): after the route table matched a request and before anything
 * of it is read or decoded, src/admission says whether it runs now, waits,
 * or is refused. The route writes a refusal in its protocol's words (legacy
 * 503/429 with Retry-After, gRPC's and Connect's unavailable or
 * resource_exhausted with grpc-retry-pushback-ms); health and /metrics never
 * come here. Who a call comes from is what its Authorization value proved
 * the last time it was seen (src/admission/clients.ts).
 */
import { Code, ConnectError } from "@connectrpc/connect";
import {
  Admission,
  type AdmissionConfig,
  type AdmissionObserver,
  Outcome,
  Refusal,
  Ticket,
  type Waiter,
} from "../admission/admission";
import { ClientDirectory } from "../admission/clients";
import { RefusalPacer } from "../admission/pacer";
import { callWorkKey } from "../call/context";
import { clientOverShare, overloaded } from "../domain/errors";
import { describeError, type Logger } from "../log";
import { callerKey } from "../rpc/context";
import { answerHeadersOf, connectToLegacyError, domainToConnectError } from "../wire/errors";
import { type NodeRequest, type NodeResponse, requestGone } from "../wire/http";
import { type PreparedError, prepareError } from "../wire/plain";
import type { FrontRequest } from "./front";

/** The errors each refusal is answered with, made once: a refusal costs no stack trace. */
function refusalErrors(retryAfterS: number): Record<Refusal, ConnectError> {
  return {
    [Refusal.Overloaded]: domainToConnectError(overloaded(retryAfterS)),
    [Refusal.ClientShare]: domainToConnectError(clientOverShare(retryAfterS)),
    [Refusal.Deadline]: new ConnectError(
      "the call's deadline passed before it could run",
      Code.DeadlineExceeded,
    ),
  };
}

/** Refusals' plain answers, by their (constant) error. */
const prepared = new WeakMap<ConnectError, PreparedError>();

/** The legacy answer of an error, made once per error object (admission's are constants). */
function preparedOf(error: ConnectError): PreparedError {
  let answer = prepared.get(error);
  if (!answer) {
    answer = prepareError(connectToLegacyError(error), answerHeadersOf(error));
    prepared.set(error, answer);
  }
  return answer;
}

/** A route of the front that runs under admission: how it serves a request, and refuses one. */
export interface GatedRoute {
  serve(req: NodeRequest, res: NodeResponse, front: FrontRequest): Promise<void> | void;
  refuse(
    req: NodeRequest,
    res: NodeResponse,
    front: FrontRequest,
    error: ConnectError,
  ): Promise<void> | void;
  /** When the client stops waiting (its protocol's timeout header), in ms from now. */
  clientTimeoutMs?(req: NodeRequest, front: FrontRequest): number | undefined;
}

export interface AdmissionGate {
  readonly admission: Admission | undefined;
  /**
   * At the door, before the front (docs/operations.md, "Admission control"):
   * while calls wait, a call of `route` from `req` asks admission first. True:
   * it was refused, `refuse` wrote the answer, and nothing else of the
   * request runs (no request id, no observation, no route scan). False: it
   * runs or waits, which `pass` then takes as decided.
   */
  atTheDoor(
    req: NodeRequest,
    route: string,
    clientTimeoutMs: number | undefined,
    refuse: (error: ConnectError) => void,
  ): boolean;
  /** A refusal's answer on a plain HTTP route (legacy paths, docs), made once per reason. */
  plainRefusal(error: ConnectError): PreparedError;
  /** A request the door let in that the front serves without admission after all: its decision is undone. */
  dismiss(req: NodeRequest): void;
  /** Serves the request with `route` now, once admitted, or refuses it. */
  pass(
    front: FrontRequest,
    req: NodeRequest,
    res: NodeResponse,
    route: GatedRoute,
  ): Promise<void> | void;
  /** Writes every refusal held now (shutdown: no hold outlasts the instance). */
  answerHeld(): void;
  stop(): void;
}

export function createAdmissionGate(
  config: AdmissionConfig,
  log: Logger,
  observer?: AdmissionObserver,
  callDeadlineMs?: number,
): AdmissionGate {
  if (!config.enabled) {
    return {
      admission: undefined,
      atTheDoor: () => false,
      answerHeld() {},
      dismiss() {},
      plainRefusal: preparedOf,
      pass: (front, req, res, route) => route.serve(req, res, front),
      stop() {},
    };
  }
  const errors = refusalErrors(config.retryAfterS);
  const directory = new ClientDirectory();
  const admission = new Admission(
    { ...config, callDeadlineMs },
    {
      refused: (reason, client) => observer?.refused(reason, client),
      waited: (seconds, admitted) => observer?.waited(seconds, admitted),
      // Work that never ends is a fault to find: the slots are back, the routes named.
      held: (calls, routes) =>
        log.warn("admission gave back slots held past the call deadline by work that never ended", {
          calls,
          routes,
        }),
    },
  );
  const pacer = new RefusalPacer(
    {
      aboveShare: config.paceAboveShare ?? DEFAULT_PACE_ABOVE_SHARE,
      maxHoldMs: config.retryAfterS * 1000,
    },
    performance.now(),
  );
  const held = new HeldRefusals(log);
  const summary = new RefusalSummary(log, admission, () => {
    const now = performance.now();
    return {
      refusalShare: Math.round(pacer.share(now) * 100) / 100,
      holdMs: Math.round(pacer.currentHoldMs),
      held: held.size,
    };
  });

  const release = (
    front: FrontRequest,
    res: NodeResponse,
    ticket: Ticket,
    authorization: string | undefined,
  ) => {
    if (ticket.left) return; // given back already: admission reclaimed a slot held too long
    admission.leave(ticket, outcomeOf(front, res));
    // What the call proved of its client, for the next call with the same credentials.
    const caller = front.values?.get(callerKey);
    if (authorization !== undefined && caller?.client !== undefined) {
      directory.learn(authorization, caller.client);
    }
  };
  const run = (
    front: FrontRequest,
    req: NodeRequest,
    res: NodeResponse,
    route: GatedRoute,
    ticket: Ticket,
  ) => {
    const authorization = req.headers.authorization;
    // The room is given back once the call's work has ended and its answer is handed to
    // Node, not when the client has read it: a client that never reads (an HTTP/2 window
    // left at 0) must not hold room (docs/security.md). A call whose client left keeps
    // its room until its work ends. Work that outlives its call's deadline by a second (a
    // promise that never settles) loses its room to admission's own check (holdMs).
    let ended = false;
    const done = () => {
      if (ended) return;
      ended = true;
      const work = front.values?.get(callWorkKey);
      if (!work) release(front, res, ticket, authorization);
      else {
        const afterWork = () => release(front, res, ticket, authorization);
        void work.then(afterWork, afterWork);
      }
    };
    front.finally = done;
    let served: Promise<void> | void;
    try {
      served = route.serve(req, res, front);
    } catch (error) {
      done();
      throw error;
    }
    if (!served) done();
    // One reaction, not `finally`'s three promises: the caller still gets the route's own.
    else served.then(done, done);
    return served;
  };
  const refuse = (
    front: FrontRequest,
    req: NodeRequest,
    res: NodeResponse,
    route: GatedRoute,
    reason: Refusal,
  ) => {
    summary.count(reason);
    front.refused = true;
    return route.refuse(req, res, front, errors[reason]);
  };

  /** What the door decided for requests it let in, for `pass` (the same turn of the loop). */
  const decided = new WeakMap<NodeRequest, Ticket | Waiter>();
  /** Decisions of the door not yet taken (none while no call waits: `pass` looks nothing up). */
  let undecided = 0;
  const takeDecided = (req: NodeRequest): Ticket | Waiter | undefined => {
    if (undecided === 0) return undefined;
    const entered = decided.get(req);
    if (entered) {
      decided.delete(req);
      undecided--;
    }
    return entered;
  };

  return {
    admission,
    atTheDoor(req, route, clientTimeoutMs, write) {
      const started = performance.now();
      const entered = admission.enter(
        directory.clientOf(req.headers.authorization),
        route,
        clientTimeoutMs === undefined ? undefined : performance.now() + clientTimeoutMs,
      );
      if (typeof entered !== "string") {
        decided.set(req, entered);
        undecided++;
        return false;
      }
      summary.count(entered);
      const error = errors[entered];
      const decidedAt = performance.now();
      const hold = pacer.holdMs(decidedAt);
      if (hold > 0 && held.size < MAX_HELD) {
        // Answered later: a client with a bound on its calls out then sends fewer (pacer.ts).
        held.add(decidedAt + hold, () => {
          if (requestGone(req)) return;
          const writing = performance.now();
          write(error);
          pacer.refused(performance.now() - writing, writing);
        });
      } else {
        write(error);
      }
      pacer.refused(performance.now() - started, decidedAt);
      return true;
    },
    plainRefusal: preparedOf,
    dismiss(req) {
      const entered = takeDecided(req);
      if (!entered) return;
      if (entered instanceof Ticket) admission.leave(entered, Outcome.Ignore);
      else admission.cancel(entered);
    },
    pass(front, req, res, route) {
      let entered: Ticket | Waiter | Refusal | undefined = takeDecided(req);
      if (!entered) {
        const client = directory.clientOf(req.headers.authorization);
        const timeoutMs = admission.free ? undefined : route.clientTimeoutMs?.(req, front);
        entered = admission.enter(
          client,
          front.route ?? "",
          timeoutMs === undefined ? undefined : performance.now() + timeoutMs,
        );
      }
      if (entered instanceof Ticket) {
        front.admission = "admitted";
        return run(front, req, res, route, entered);
      }
      if (typeof entered === "string") {
        front.admission = entered;
        return refuse(front, req, res, route, entered);
      }
      const waiter = entered;
      front.finally = () => admission.cancel(waiter);
      return new Promise<void>((resolve, reject) => {
        waiter.settle = (outcome) => {
          try {
            if (outcome instanceof Ticket) {
              front.waitedMs = performance.now() - waiter.arrivedAt;
              front.admission = "queued";
              resolve(run(front, req, res, route, outcome));
            } else {
              front.finally = undefined;
              front.waitedMs = performance.now() - waiter.arrivedAt;
              front.admission = outcome;
              resolve(refuse(front, req, res, route, outcome));
            }
          } catch (error) {
            reject(error);
          }
        };
      });
    },
    answerHeld() {
      held.flush();
    },
    stop() {
      admission.stop();
      held.flush();
      summary.stop();
    },
  };
}

/** Codes of calls that did their work before they failed: the database was asked. */
const WORK_DONE: ReadonlySet<Code> = new Set([
  Code.NotFound,
  Code.AlreadyExists,
  Code.FailedPrecondition,
  Code.Aborted,
]);

/**
 * What a call's end says to the limit: its time is a sample when it did its
 * work (an answer, or a refusal the database was asked for); an overrun of
 * the service's own deadline is a drop; anything else (the pipeline's fast
 * refusals, a client that left, an outage, the client's own deadline) says
 * nothing of queueing.
 */
function outcomeOf(front: FrontRequest, res: NodeResponse): Outcome {
  if (!res.writableEnded) return Outcome.Ignore;
  const { code } = front.observed.outcome;
  if (code === null) return Outcome.Work;
  if (code === undefined) return res.statusCode < 400 ? Outcome.Work : Outcome.Ignore;
  if (WORK_DONE.has(code)) return Outcome.Work;
  // Whether it was the service's own deadline, admission tells by the time taken.
  if (code === Code.DeadlineExceeded) return Outcome.Overran;
  return Outcome.Ignore;
}

/** Refusals are counted in warn lines, not one line each: at once, while they last, when they end. */
const SUMMARY_MS = 10_000;
/** A burst has ended when no call was refused for this long. */
const QUIET_MS = 1_000;

/** Refusals are held while they take more than this share of the core, by default. */
const DEFAULT_PACE_ABOVE_SHARE = 0.6;
/** At most this many refusals are held at once (memory); beyond, they are written at once. */
const MAX_HELD = 4_096;

/**
 * Refusals held before they are written (pacer.ts): written in the order
 * they were refused, each once its time comes; one timer, only while some
 * are held; all written at once when the gate stops.
 */
class HeldRefusals {
  private due: number[] = [];
  private writes: (() => void)[] = [];
  private head = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly log: Logger) {}

  get size(): number {
    return this.writes.length - this.head;
  }

  add(at: number, write: () => void): void {
    this.due.push(at);
    this.writes.push(write);
    if (!this.timer) this.arm(at);
  }

  /** Writes every refusal still held, now. */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.writeUntil(Number.POSITIVE_INFINITY);
  }

  private arm(at: number): void {
    this.timer = setTimeout(this.tick, Math.max(1, at - performance.now()));
    this.timer.unref();
  }

  private readonly tick = () => {
    this.timer = undefined;
    this.writeUntil(performance.now());
  };

  private writeUntil(now: number): void {
    while (this.head < this.writes.length && (this.due[this.head] as number) <= now) {
      const write = this.writes[this.head] as () => void;
      this.writes[this.head] = ignore;
      this.head++;
      try {
        write();
      } catch (error) {
        // Its request alone: the others held are still written.
        this.log.error("a held refusal could not be written", describeError(error));
      }
    }
    if (this.head === this.writes.length) {
      this.due = [];
      this.writes = [];
      this.head = 0;
    } else if (!this.timer) {
      this.arm(this.due[this.head] as number);
    }
  }
}

const ignore = () => undefined;

/**
 * The warn lines of refusals: the first refusal of a burst at once, then at
 * most one line every 10 s while it lasts, and the rest about a second
 * after it ends, so that the lines' counts add up to every refusal, a burst
 * shorter than 10 s included. A timer exists only during a burst.
 */
class RefusalSummary {
  private counts: Record<Refusal, number> = { overloaded: 0, client_share: 0, deadline: 0 };
  private pending = 0;
  private lastAt = 0;
  private lastLogAt = Number.NEGATIVE_INFINITY;
  private inBurst = false;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly log: Logger,
    private readonly admission: Admission,
    /** The pacing of refusals now (pacer.ts): their share of the core, the hold, how many are held. */
    private readonly pacing: () => { refusalShare: number; holdMs: number; held: number },
  ) {}

  count(reason: Refusal): void {
    const now = Date.now();
    this.counts[reason]++;
    this.pending++;
    this.lastAt = now;
    if (!this.inBurst) {
      this.inBurst = true;
      this.flush(now, "started");
    } else if (now - this.lastLogAt >= SUMMARY_MS) {
      this.flush(now, "ongoing");
    }
    if (!this.timer) {
      this.timer = setTimeout(this.check, QUIET_MS);
      this.timer.unref();
    }
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending > 0) this.flush(Date.now(), "ended");
  }

  private readonly check = (): void => {
    this.timer = undefined;
    const now = Date.now();
    const quiet = now - this.lastAt;
    if (quiet < QUIET_MS) {
      this.timer = setTimeout(this.check, QUIET_MS - quiet);
      this.timer.unref();
      return;
    }
    this.inBurst = false;
    if (this.pending > 0) this.flush(now, "ended");
  };

  private flush(now: number, burst: "started" | "ongoing" | "ended"): void {
    const { admission } = this;
    this.log.warn("admission refused calls", {
      burst,
      ...this.counts,
      limit: Math.floor(admission.limiter.limit),
      running: admission.running,
      queued: admission.queued,
      overloadedClients: admission.overloadedClients,
      throughput: admission.throughput,
      servedPerS: Math.round(admission.servedPerS),
      lastWaitMs: Math.round(admission.lastWaitMs),
      serviceMs: Math.round(admission.serviceMs * 10) / 10,
      loopDelayMs: Math.round(admission.loopDelayMs),
      ...this.pacing(),
    });
    this.counts = { overloaded: 0, client_share: 0, deadline: 0 };
    this.pending = 0;
    this.lastLogAt = now;
  }
}
