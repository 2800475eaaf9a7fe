/**
 * Admission control without a server (src/admission, docs/operations.md
 * "Overload", docs/decisions.md "Admission"), on a clock of the test's: the
 * limit learns from admitted calls' service time and never falls below its
 * floor; the queues are served in turn, so a quiet client keeps its share
 * beside a flood; a queue that is long but stable (a closed loop) is served,
 * one that grows (a flood) is refused; deadlines are kept.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  Admission,
  type AdmissionSettings,
  Outcome,
  Refusal,
  Ticket,
  Waiter,
} from "../../src/admission/admission";
import { GradientLimit, type LimitSettings } from "../../src/admission/limit";
import { BestThroughput, BusyRate, RateMeter } from "../../src/admission/meters";

const LIMIT: LimitSettings = { floor: 8, max: 200, sloMs: 250, queueTargetMs: 100 };

describe("the limit: a gradient on admitted calls' service time, never below the floor", () => {
  /** A limit on a given best throughput; `window` feeds one window of `n` samples of `ms` with `running` at their start. */
  function limit(settings: Partial<LimitSettings> = {}, throughput = 0) {
    const l = new GradientLimit({ ...LIMIT, ...settings }, () => throughput);
    let now = 0;
    const window = (ms: number, running: number, route = "r", n = 20) => {
      for (let i = 0; i < n; i++) l.sample(route, ms, running, now);
      now += 300;
      l.sample(route, ms, running, now);
    };
    return { l, window };
  }

  it("starts at the floor and keeps it until a window of samples closes", () => {
    const { l } = limit();
    expect(l.limit).toBe(8);
    l.sample("r", 5, 8, 0);
    expect(l.limit).toBe(8);
  });

  it("calls as fast as their baseline, the limit full: it grows by a little each window", () => {
    const { l, window } = limit();
    window(5, 8);
    const first = l.limit;
    expect(first).toBeGreaterThan(8);
    window(5, 9);
    expect(l.limit).toBeGreaterThan(first);
    expect(l.limit).toBeLessThan(first + 2);
  });

  it("calls slower than their baseline by more than half: it shrinks, to the floor at most", () => {
    const { l, window } = limit({ floor: 8 });
    for (let i = 0; i < 30; i++) window(5, Math.ceil(l.limit));
    const grown = l.limit;
    expect(grown).toBeGreaterThan(20);
    window(20, Math.ceil(l.limit));
    expect(l.limit).toBeLessThan(grown);
    for (let i = 0; i < 50; i++) window(40, Math.ceil(l.limit));
    // Gradient2's headroom keeps it a little above the floor where the gradient is at its least.
    expect(l.limit).toBeGreaterThanOrEqual(8);
    expect(l.limit).toBeLessThan(9);
  });

  it("calls far below the limit say what demand was: it neither grows nor shrinks", () => {
    const { l, window } = limit({ floor: 8 });
    window(5, 2);
    window(50, 2);
    expect(l.limit).toBe(8);
  });

  it("routes are compared with their own baselines: a slow route beside a fast one is no queueing", () => {
    const { l, window } = limit();
    window(1, 8, "fast");
    window(100, 9, "slow");
    const before = l.limit;
    window(1, 10, "fast", 10);
    window(100, 10, "slow", 10);
    expect(l.limit).toBeGreaterThanOrEqual(before);
    expect(l.ratio).toBeCloseTo(1, 1);
  });

  it("Little's law caps it at the best throughput times the SLO's running share (250 − 100 ms)", () => {
    const { l, window } = limit({ floor: 8 }, 100);
    for (let i = 0; i < 60; i++) window(5, Math.ceil(l.limit));
    expect(l.limit).toBe(15);
  });

  it("the floor holds whatever the throughput: slow calls (a slow database) need more at once, not fewer", () => {
    const slow = limit({ floor: 32 }, 20);
    for (let i = 0; i < 20; i++) slow.window(500, 32);
    expect(slow.l.limit).toBe(32);
  });

  it("a call that overran the service's deadline is a drop: a tenth off, not below the floor", () => {
    const { l, window } = limit();
    for (let i = 0; i < 30; i++) window(5, Math.ceil(l.limit));
    const before = l.limit;
    l.drop();
    expect(l.limit).toBeCloseTo(before * 0.9);
    for (let i = 0; i < 100; i++) l.drop();
    expect(l.limit).toBe(8);
  });

  it("samples under 0.1 ms say nothing; fewer than ten keep the window open", () => {
    const { l } = limit();
    for (let i = 0; i < 50; i++) l.sample("r", 0.05, 8, i * 300);
    expect(l.limit).toBe(8);
    for (let i = 0; i < 9; i++) l.sample("r", 5, 8, 1_000_000 + i * 300);
    expect(l.limit).toBe(8);
  });
});

describe("the meters move on events only", () => {
  it("a rate meter: events per ms, smoothed", () => {
    const m = new RateMeter(100, 0);
    for (let t = 0; t < 1_000; t += 10) m.tick(t);
    expect(m.perMs(1_000)).toBeCloseTo(0.1, 2);
  });

  it("busy rate: unknown for the first calls, then completions per ms of busy time; idle time does not decay it", () => {
    const b = new BusyRate();
    let t = 0;
    b.advance(t, true);
    const complete = (busy: boolean) => {
      t += 2;
      b.complete(t, busy);
    };
    for (let i = 0; i < 4; i++) complete(true);
    expect(b.perMs(t)).toBeUndefined();
    for (let i = 0; i < 200; i++) complete(true);
    complete(false);
    expect(b.perMs(t)).toBeCloseTo(0.5, 1);
    // A minute idle: the rate is what it was.
    expect(b.perMs(t + 60_000)).toBeCloseTo(0.5, 1);
  });

  it("best throughput: the best second of the last ten", () => {
    const best = new BestThroughput();
    for (let t = 0; t < 1_000; t += 10) best.tick(t);
    for (let t = 1_000; t < 2_000; t += 100) best.tick(t);
    expect(best.perSecond(2_500)).toBe(100);
    expect(best.perSecond(12_500)).toBe(0);
  });
});

/** The 99th percentile of `xs` (undefined: none). */
function p99(xs: readonly number[]): number | undefined {
  return [...xs].sort((x, y) => x - y)[Math.floor(xs.length * 0.99)];
}

/** A gate on a clock of the test's, its refusals recorded. */
function gate(settings: Partial<AdmissionSettings> = {}) {
  let now = 0;
  const refused: [Refusal, string][] = [];
  const held: [number, readonly string[]][] = [];
  const a = new Admission(
    // A warm instance, unless a test says otherwise ("a young instance", below).
    { ...LIMIT, fairShares: true, callDeadlineMs: 10_000, youngCalls: 0, ...settings },
    {
      refused: (reason, client) => refused.push([reason, client]),
      waited: () => undefined,
      held: (calls, routes) => held.push([calls, routes]),
    },
    () => now,
  );
  gates.push(a);
  return {
    a,
    refused,
    held,
    at: (t: number) => {
      now = t;
    },
    get now() {
      return now;
    },
  };
}
const gates: Admission[] = [];
afterEach(() => {
  for (const a of gates.splice(0)) a.stop();
});

describe("calls run while fewer than the limit run; beyond it they wait their turn", () => {
  it("admits up to the floor, then the next waits; a call that ends lets it run", () => {
    const { a } = gate();
    const tickets = Array.from({ length: 8 }, () => a.enter("c", "r"));
    expect(tickets.every((t) => t instanceof Ticket)).toBe(true);
    const waiting = a.enter("c", "r");
    expect(waiting).toBeInstanceOf(Waiter);
    let settled: unknown;
    (waiting as Waiter).settle = (o) => {
      settled = o;
    };
    a.leave(tickets[0] as Ticket);
    expect(settled).toBeInstanceOf(Ticket);
    expect(a.running).toBe(8);
    expect(a.queued).toBe(0);
  });

  it("a client's calls run in the order they came", () => {
    const { a } = gate({ floor: 1, max: 1 });
    const first = a.enter("c", "r") as Ticket;
    const order: number[] = [];
    for (let i = 0; i < 3; i++) {
      (a.enter("c", "r") as Waiter).settle = () => order.push(i);
    }
    a.leave(first);
    for (let i = 0; i < 2; i++) a.leave(new Ticket(first.client, "r", 0, 1));
    expect(order).toEqual([0, 1, 2]);
  });

  it("a waiting call whose client leaves is taken out; the slot goes to the next", () => {
    const { a } = gate({ floor: 1, max: 1 });
    const first = a.enter("c", "r") as Ticket;
    const gone = a.enter("c", "r") as Waiter;
    let next: unknown;
    (a.enter("c", "r") as Waiter).settle = (o) => {
      next = o;
    };
    a.cancel(gone);
    a.leave(first);
    expect(next).toBeInstanceOf(Ticket);
    expect(a.queued).toBe(0);
  });

  it("at most maxQueued wait; the next is refused at once as overloaded", () => {
    const { a, refused } = gate({ floor: 1, max: 1, maxQueued: 2 });
    a.enter("c", "r");
    a.enter("c", "r");
    a.enter("c", "r");
    expect(a.enter("c", "r")).toBe(Refusal.Overloaded);
    expect(refused).toEqual([[Refusal.Overloaded, "c"]]);
  });

  it("slots that came free without a call leaving (the limit rose) go to the waiting before a newcomer", () => {
    const { a } = gate({ floor: 1, max: 4 });
    a.enter("c", "r") as Ticket;
    let waited: unknown;
    (a.enter("c", "r") as Waiter).settle = (o) => {
      waited = o;
    };
    a.limiter.limit = 2;
    // Before: the waiting call stayed behind a free slot until some call left, and the
    // newcomer queued behind it: a closed loop at the limit could starve that way.
    const newcomer = a.enter("c", "r");
    expect(waited).toBeInstanceOf(Ticket);
    expect(newcomer).toBeInstanceOf(Waiter);
    expect(a.running).toBe(2);
  });

  it("a full queue makes room for a quieter client: the flood's newest call is refused, not the quiet one's", () => {
    const { a, refused } = gate({ floor: 1, max: 1, maxQueued: 3 });
    a.enter("flood", "r");
    const waiting = [a.enter("flood", "r"), a.enter("flood", "r"), a.enter("flood", "r")];
    let newest: unknown;
    (waiting[2] as Waiter).settle = (o) => {
      newest = o;
    };
    const quiet = a.enter("quiet", "r");
    expect(quiet).toBeInstanceOf(Waiter);
    expect(newest).toBe(Refusal.ClientShare);
    expect(refused).toEqual([[Refusal.ClientShare, "flood"]]);
    expect(a.queued).toBe(3);
    // The flood itself, at the full queue, is refused as before.
    expect(a.enter("flood", "r")).not.toBeInstanceOf(Waiter);
  });

  it("a call whose work never ends holds its slot at most holdMs, and is told of: the next arrival then runs, and its late end changes nothing", () => {
    const g = gate({ floor: 1, max: 1, holdMs: 11_000 });
    const stuck = g.a.enter("c", "r") as Ticket;
    g.at(10_999);
    expect(g.a.enter("c", "r")).toBeInstanceOf(Waiter);
    g.at(11_000);
    // The stuck call is given back; the waiting call takes the slot, the newcomer waits.
    expect(g.a.enter("c", "r")).toBeInstanceOf(Waiter);
    expect(stuck.left).toBe(true);
    expect(g.a.running).toBe(1);
    expect(g.a.queued).toBe(1);
    // Said once, with the route: work that never ends is a fault to find.
    expect(g.held).toEqual([[1, ["r"]]]);
    g.a.leave(stuck);
    expect(g.a.running).toBe(1);
    expect(g.a.queued).toBe(1);
  });

  it("with calls waiting and none arriving, the queue's own check gives a stuck slot back", async () => {
    vi.useFakeTimers();
    try {
      const g = gate({ floor: 1, max: 1, holdMs: 1_000 });
      g.a.enter("c", "r");
      let waited: unknown;
      const waiter = g.a.enter("c", "r") as Waiter;
      waiter.settle = (o) => {
        waited = o;
      };
      g.at(1_000);
      await vi.advanceTimersByTimeAsync(20);
      expect(waited).toBeInstanceOf(Ticket);
      expect(g.a.running).toBe(1);
    } finally {
      vi.useRealTimers();
    }
  });
});

/**
 * Runs a gate with calls of `serviceMs` each, on one core (`slots` run at a
 * time), for `durationMs`: `clients` say when each client sends (open loop:
 * every `everyMs`; closed loop: `connections` that send again as soon as
 * answered). Returns, per client, the calls answered 200 and refused.
 */
function simulate(
  settings: Partial<AdmissionSettings>,
  clients: {
    name: string;
    everyMs?: number;
    connections?: number;
    rampMs?: number;
    /** Closed loop: from an answer to the next call read, at a time (default 0). */
    pauseMs?: (t: number) => number;
    /** When it starts sending (default 0), and stops (default: the end). */
    fromMs?: number;
    untilMs?: number;
  }[],
  durationMs: number,
  /** Each call's service time, or what it is at a time (a core taken by something else). */
  serviceMs: number | ((t: number) => number) = 1,
  /** Arrivals come in batches, one every `turnMs` (a busy event loop's long turns). */
  turnMs = 0,
  /** Completions come in those turns too (a loaded loop reads the database's answers in its turns). */
  completionsInTurns = false,
  /** The limit at a time, set before each event (what the gradient learned, played back). */
  limitAt?: (t: number) => number,
) {
  const g = gate({ floor: 4, max: 4, ...settings });
  const outcome = new Map(
    clients.map((c) => [
      c.name,
      { ok: 0, refused: 0, waits: [] as number[], refusalWaits: [] as number[] },
    ]),
  );
  // Events by time: a binary heap (the floods schedule tens of thousands).
  type Event = [number, "arrive" | "done", string, Ticket?];
  const heap: Event[] = [];
  const schedule = (t: number, kind: "arrive" | "done", client: string, ticket?: Ticket) => {
    heap.push([t, kind, client, ticket]);
    for (let i = heap.length - 1; i > 0; ) {
      const parent = (i - 1) >> 1;
      if ((heap[parent] as Event)[0] <= (heap[i] as Event)[0]) break;
      [heap[parent], heap[i]] = [heap[i] as Event, heap[parent] as Event];
      i = parent;
    }
  };
  const next = (): Event => {
    const top = heap[0] as Event;
    const last = heap.pop() as Event;
    if (heap.length > 0) {
      heap[0] = last;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && (heap[l] as Event)[0] < (heap[m] as Event)[0]) m = l;
        if (r < heap.length && (heap[r] as Event)[0] < (heap[m] as Event)[0]) m = r;
        if (m === i) break;
        [heap[m], heap[i]] = [heap[i] as Event, heap[m] as Event];
        i = m;
      }
    }
    return top;
  };
  const serviceAt = typeof serviceMs === "number" ? () => serviceMs : serviceMs;
  const inTurn = (t: number) => (turnMs > 0 ? Math.ceil(t / turnMs) * turnMs : t);
  const start = (client: string, ticket: Ticket, t: number) => {
    const done = t + serviceAt(t);
    schedule(completionsInTurns ? inTurn(done) : done, "done", client, ticket);
  };
  for (const c of clients) {
    if (c.everyMs) {
      for (let t = c.fromMs ?? 0; t < (c.untilMs ?? durationMs); t += c.everyMs) {
        schedule(inTurn(t), "arrive", c.name);
      }
    }
    const connections = c.connections ?? 0;
    for (let i = 0; i < connections; i++) {
      // Connections open across `rampMs` (default: at once), their first calls read in turns.
      const t = (c.fromMs ?? 0) + (c.rampMs ? (i * c.rampMs) / connections : i * 0.01);
      schedule(inTurn(t), "arrive", c.name);
    }
  }
  const closed = new Set(clients.filter((c) => c.connections).map((c) => c.name));
  const pauses = new Map(clients.map((c) => [c.name, c.pauseMs ?? (() => 0)]));
  const until = new Map(clients.map((c) => [c.name, c.untilMs ?? durationMs]));
  const sending = (client: string, t: number) => t < (until.get(client) ?? durationMs);
  while (heap.length > 0) {
    const [t, kind, client, ticket] = next();
    if (t > durationMs + 20_000) break;
    g.at(t);
    if (limitAt) g.a.limiter.limit = limitAt(t);
    const o = outcome.get(client) as {
      ok: number;
      refused: number;
      waits: number[];
      refusalWaits: number[];
    };
    if (kind === "done") {
      o.ok++;
      g.a.leave(ticket as Ticket);
      const pause = (pauses.get(client) as (t: number) => number)(t);
      if (closed.has(client) && sending(client, t)) schedule(t + pause, "arrive", client);
      continue;
    }
    const entered = g.a.enter(client, "r");
    if (entered instanceof Ticket) start(client, entered, t);
    else if (entered instanceof Waiter) {
      entered.settle = (result) => {
        if (result instanceof Ticket) {
          o.waits.push(g.now - t);
          start(client, result, g.now);
        } else {
          o.refused++;
          o.refusalWaits.push(g.now - t);
          if (closed.has(client) && sending(client, g.now)) schedule(g.now, "arrive", client);
        }
      };
    } else {
      o.refused++;
      o.refusalWaits.push(0);
      if (closed.has(client) && sending(client, t)) schedule(t + 1, "arrive", client);
    }
  }
  return Object.assign(outcome, {
    reasons: g.refused.map(([reason, client]) => `${client}:${reason}`),
  });
}

/**
 * A flood at five times capacity (four slots of 1 ms: 4 calls/ms; it sends 20) for 2 s,
 * its arrivals in turns of `turnMs`: most refused, the rest served; returns the p99 wait
 * of what was served.
 */
function floodAtFiveTimes(turnMs: number): number | undefined {
  const flood = simulate({}, [{ name: "flood", everyMs: 0.05 }], 2_000, 1, turnMs).get("flood");
  expect(flood?.refused).toBeGreaterThan(10_000);
  expect(flood?.ok).toBeGreaterThan(7_000);
  const waits = [...(flood?.waits ?? [])].sort((x, y) => x - y);
  return waits[Math.floor(waits.length * 0.99)];
}

describe("refused only what cannot be served in time", () => {
  it("a closed loop of 256 connections (a long but stable queue): nothing refused, every call served", () => {
    const result = simulate({}, [{ name: "loop", connections: 256 }], 3_000);
    const loop = result.get("loop");
    expect(loop?.refused).toBe(0);
    expect(loop?.ok).toBeGreaterThan(10_000);
  });

  it("a closed loop of 256 connections opening over 250 ms, read in turns of 20 ms, its stable wait past the queue target: nothing refused", () => {
    // Four calls of 4 ms at a time: 1 a ms, so the 252 waiting wait about 250 ms, past the
    // 100 ms target, and the queue grows for as long as the connections open. A growth test
    // of 100 ms took the ramp for a flood and refused thousands of calls (each sent again at
    // once); the bench's legacy pages at 256 connections did the same on the service.
    const result = simulate({}, [{ name: "loop", connections: 256, rampMs: 250 }], 3_000, 4, 20);
    const loop = result.get("loop");
    expect(loop?.refused).toBe(0);
    expect(loop?.ok).toBeGreaterThan(2_500);
  });

  it("a closed loop of 256 connections whose limit falls from 90 to 40 over a second: calls move from running to waiting, which is no growth, so nothing is refused", () => {
    // Slow calls on one core (0.3 calls/ms, like the bench's gRPC pages): each call takes
    // limit / 0.3 ms. Counting only the waiting, the queue grew 166 -> 216 (5 every 100 ms,
    // past a twentieth of 30) and the loop was refused; on the service, gRPC pages' queue
    // grew 43 -> 146 in 150 ms as the limit fell below the 64 calls running.
    const limitAt = (t: number) => Math.max(40, 90 - (50 * Math.max(0, t - 2_000)) / 1_000);
    const result = simulate(
      { floor: 40, max: 90 },
      [{ name: "loop", connections: 256 }],
      5_000,
      (t) => limitAt(t) / 0.3,
      0,
      false,
      limitAt,
    );
    const loop = result.get("loop");
    expect(loop?.refused).toBe(0);
    expect(loop?.ok).toBeGreaterThan(1_200);
  });

  it("a closed loop of 256 connections whose calls are read in waves (0-200 ms from answer to next call, a period of 2 s): its level returns where it has been, which is no growth, so nothing is refused", () => {
    // One call a ms; up to 256 of its calls in the system, fewer as more are between calls.
    // Each rise lasts a second: compared only with 100 ms before, it was growth, and the
    // loop was refused (228,263 calls, each sent again at once). On the
    // service, a cold legacy closed loop's calls in the system went 189 -> 252 in 300 ms
    // (the rest unread in the kernel's buffers) and 7,079 of its calls were refused.
    const pauseMs = (t: number) => 100 + 100 * Math.sin((2 * Math.PI * t) / 2_000);
    const result = simulate({}, [{ name: "loop", connections: 256, pauseMs }], 5_000, 4);
    const loop = result.get("loop");
    expect(loop?.refused).toBe(0);
    expect(loop?.ok).toBeGreaterThan(4_500);
  });

  it("an open loop at five times capacity (a growing queue): refused, and what is served waits 400 ms at most (the growth test's 400 ms, and the queue target, overlap)", () => {
    expect(floodAtFiveTimes(0)).toBeLessThanOrEqual(400);
  });

  it("a flood that fills the queue is growth too: the calls refused for want of room count, so it is found and trimmed", () => {
    // Before: once 4,096 waited, every newcomer was refused for room, the queue stopped
    // growing, the flood was never found, and what was served waited as long as the whole queue.
    const flood = simulate({ maxQueued: 2_000 }, [{ name: "flood", everyMs: 0.05 }], 2_000).get(
      "flood",
    );
    expect(flood?.refused).toBeGreaterThan(10_000);
    const waits = [...(flood?.waits ?? [])].sort((x, y) => x - y);
    // Without: 500 ms, the whole queue.
    expect(waits[Math.floor(waits.length * 0.99)]).toBeLessThanOrEqual(400);
  });
});

describe("a young instance (its first 5,000 calls or 10 s busy) reads a closed loop's ramp for seconds: growth must last 2 s", () => {
  // Four calls of 4 ms at a time (1 a ms), 256 connections opening over 1.5 s, their calls
  // read in turns of 20 ms: the queue grows for as long as they open, well past the queue
  // target. A cold instance on the service: its legacy pages' closed loop at 256 connections
  // opened over more than a second, and 8,800-24,000 calls of two 5 s rounds were refused.
  const slowRamp = { name: "loop", connections: 256, rampMs: 1_500 };

  it("a closed loop whose connections open over 1.5 s: nothing refused while young; warm, the same ramp is taken for a flood", () => {
    const young = simulate({ youngCalls: 5_000 }, [slowRamp], 3_000, 4, 20).get("loop");
    expect(young?.refused).toBe(0);
    expect(young?.ok).toBeGreaterThan(2_500);
    const warm = simulate({}, [slowRamp], 3_000, 4, 20).get("loop");
    expect(warm?.refused).toBeGreaterThan(100);
  });

  it("a flood at 1.25 times capacity on a young instance: found after its 2 s of growth, so what is served waits about 400 ms at p99 (warm: 130 ms; a young test of 60 s: 1 s)", () => {
    // Four slots of 4 ms: 1 call a ms; the flood sends 1.25. Its queue grows by a quarter of a
    // call a ms: 500 calls (500 ms of wait) after 2 s, under a quarter of the call deadline, so
    // only the young instance's 2 s test marks it until 5,000 calls have finished.
    const flood = simulate({ youngCalls: 5_000 }, [{ name: "flood", everyMs: 0.8 }], 6_000, 4).get(
      "flood",
    );
    expect(flood?.refused).toBeGreaterThan(1_000);
    expect(flood?.ok).toBeGreaterThan(5_500);
    expect(p99(flood?.waits ?? [])).toBeLessThanOrEqual(600);
  });

  it("busy for 10 s, an instance is grown up however few calls it served: the same ramp is then taken for a flood", () => {
    // One call at a time, each taking a second, for 10.5 s (10 calls); then 4 ms calls.
    const serviceAt = (t: number) => (t < 10_500 ? 1_000 : 4);
    const result = simulate(
      { youngCalls: 5_000 },
      [
        { name: "trickle", connections: 1, untilMs: 10_000 },
        { ...slowRamp, fromMs: 11_000 },
      ],
      14_000,
      serviceAt,
      20,
    );
    expect(result.get("trickle")?.ok).toBeLessThanOrEqual(11);
    expect(result.get("loop")?.refused).toBeGreaterThan(100);
  });
});

describe("a queue whose wait nears the deadline is marked sooner", () => {
  it("slow calls at five times capacity: the wait passes a quarter of the 1 s deadline within 100 ms, so 100 ms of growth marks it, and what is served waits 140 ms at p99 (900 ms with the 300 ms test)", () => {
    // Four slots of 50 ms: 80 calls a second; the flood sends 400.
    const flood = simulate(
      { callDeadlineMs: 1_000 },
      [{ name: "flood", everyMs: 2.5 }],
      3_000,
      50,
    ).get("flood");
    expect(flood?.refused).toBeGreaterThan(500);
    const waits = [...(flood?.waits ?? [])].sort((x, y) => x - y);
    expect(waits[Math.floor(waits.length * 0.99)]).toBeLessThanOrEqual(250);
  });
});

describe("growth is seen in long turns of the event loop too", () => {
  it("an open loop at five times capacity whose arrivals come in turns of 80 ms: refused, and what is served waits well under the 500 ms of issue 41's p99", () => {
    // Before: growth had to show in intervals under 50 ms, and turns of 80 ms never did:
    // every call queued until its deadline.
    expect(floodAtFiveTimes(80)).toBeLessThanOrEqual(480);
  });
});

describe("growth is seen when calls finish together too, and a flood found stays found", () => {
  it("an open loop at twice capacity whose calls start and finish together (32 slots of 100 ms): found within the growth test, and refused at arrival from then on", () => {
    // 32 calls finish at once every 100 ms while arrivals come steadily: the queue grows by
    // 35 calls in every 100 ms, and shrinks in the 25 ms that hold the completions. Before:
    // growth had to show from each mark to the next, so the flood was never found; every
    // call waited, up to its deadline (p99 9.7 s). And a client found overloaded stopped
    // being so whenever its refusals left its queue short, and had to grow for 300 ms again.
    const flood = simulate(
      { floor: 32, max: 32 },
      [{ name: "flood", everyMs: 1.5 }],
      10_000,
      100,
    ).get("flood");
    // Capacity: 32 calls every 100 ms, 3,200 in 10 s; all of it served.
    expect(flood?.ok).toBeGreaterThanOrEqual(3_100);
    expect(flood?.refused).toBeGreaterThan(3_000);
    expect(p99(flood?.waits ?? [])).toBeLessThanOrEqual(250);
    // Refused at arrival, or after a short wait: the growth test's 100 ms after each probe.
    expect(p99(flood?.refusalWaits ?? [])).toBeLessThanOrEqual(150);
  });
});

describe("a client under its share is never refused because another floods", () => {
  it("a quiet client at a fifth of capacity beside a flood at ten times: every call served, quickly", () => {
    const result = simulate(
      {},
      [
        { name: "quiet", everyMs: 1.25 },
        { name: "flood", everyMs: 0.025 },
      ],
      2_000,
    );
    const quiet = result.get("quiet");
    expect(quiet?.refused).toBe(0);
    expect(quiet?.ok).toBe(1_600);
    const waits = [...(quiet?.waits ?? [])].sort((x, y) => x - y);
    expect(waits[Math.floor(waits.length * 0.99)] ?? 0).toBeLessThan(10);
    expect(result.get("flood")?.refused).toBeGreaterThan(0);
  });

  it("a flood whose refusals take the core (the service five times slower) leaves a quiet client asking a fifth of capacity all of its calls: its share is of what the instance can do, not of what it does now", () => {
    // Four slots of 1 ms: 4 calls a ms, seen in the first second (a busy moment: a closed
    // loop). The quiet client sends 0.8 a ms from 1 s on; at 3 s a flood at ten times
    // capacity starts, and every call then takes 5 ms (0.8 a ms: all the quiet client asks).
    // Equal shares of what is served gave it two thirds here, and half in the HTTP bench's
    // (beside 10x: 50.7 %, 4,199 of its calls 429 client_share).
    const result = simulate(
      {},
      [
        { name: "busy", connections: 64, untilMs: 1_000 },
        { name: "quiet", everyMs: 1.25, fromMs: 1_000 },
        { name: "flood", everyMs: 0.025, fromMs: 3_000 },
      ],
      7_000,
      (t) => (t < 3_000 ? 1 : 5),
    );
    const quiet = result.get("quiet");
    expect(quiet?.ok).toBeGreaterThanOrEqual(0.95 * 4_800);
    expect(result.reasons.filter((r) => r === "quiet:client_share")).toEqual([]);
    expect(result.get("flood")?.refused).toBeGreaterThan(100_000);
  });

  it("the flood's refusals are 429 client_share while the quiet client wants service, not 503", () => {
    const g = simulate(
      {},
      [
        { name: "quiet", everyMs: 1.25 },
        { name: "flood", everyMs: 0.025 },
      ],
      500,
    );
    const reasons = new Set(g.reasons);
    expect(reasons.has("flood:client_share")).toBe(true);
    expect([...reasons].filter((r) => r.startsWith("quiet"))).toEqual([]);
  });
});

/**
 * `calls` calls of `ms` each, one after the other (the rate becomes known),
 * then one running and five waiting: six ahead of the next call. Returns the time.
 */
function sixAhead(g: ReturnType<typeof gate>, calls: number, ms: number): number {
  let t = 0;
  for (let i = 0; i < calls; i++) {
    const ticket = g.a.enter("c", "r") as Ticket;
    t += ms;
    g.at(t);
    g.a.leave(ticket);
  }
  for (let i = 0; i < 6; i++) g.a.enter("c", "r");
  return t;
}

describe("deadlines: no call waits past its own", () => {
  it("a call whose deadline cannot be met is refused at once, once the service's rate is known", () => {
    const g = gate({ floor: 1, max: 1 });
    const { a } = g;
    // 200 calls of 10 ms each: the rate is known, and sure (0.1 calls per ms).
    const t = sixAhead(g, 200, 10);
    // Six ahead at 10 ms each: a deadline 20 ms away cannot be met.
    expect(a.enter("c", "r", t + 20)).toBe(Refusal.Deadline);
    expect(a.enter("c", "r", t + 5_000)).toBeInstanceOf(Waiter);
  });

  it("a cold instance (fewer than 200 calls finished, slow as first calls are) refuses no call on a predicted wait: it waits, and is refused only when its deadline comes", async () => {
    vi.useFakeTimers();
    const g = gate({ floor: 1, max: 1 });
    const { a } = g;
    // Ten first calls of 100 ms each: a rate of 0.01 calls per ms, which would predict
    // 600 ms for the six waiting; before, a deadline 500 ms away was refused at once (the
    // bench's closed loops were refused at start that way, 11 s predicted for 0.8 s).
    const t = sixAhead(g, 10, 100);
    const waiter = a.enter("c", "r", t + 500);
    expect(waiter).toBeInstanceOf(Waiter);
    let outcome: unknown;
    (waiter as Waiter).settle = (o) => {
      outcome = o;
    };
    g.at(t + 500);
    try {
      await vi.advanceTimersByTimeAsync(20);
    } finally {
      vi.useRealTimers();
    }
    expect(outcome).toBe(Refusal.Deadline);
  });

  it("a call with no deadline of its own, whose wait passes the service's: over capacity (503), not a deadline (a legacy 500)", () => {
    const g = gate({ floor: 1, max: 1, callDeadlineMs: 50 });
    const { a } = g;
    const t = sixAhead(g, 200, 10);
    // Six ahead at 10 ms each: 60 ms, past the service's 50 ms.
    expect(a.enter("c", "r")).toBe(Refusal.Overloaded);
    // The same wait with a client's deadline shorter than the service's: its deadline.
    expect(a.enter("c", "r", t + 40)).toBe(Refusal.Deadline);
  });

  it("a waiting call with no deadline of its own, when the service's passes: over capacity", () => {
    const { a, at } = gate({ floor: 1, max: 1, callDeadlineMs: 50 });
    const first = a.enter("c", "r") as Ticket;
    let outcome: unknown;
    (a.enter("c", "r") as Waiter).settle = (o) => {
      outcome = o;
    };
    at(100);
    a.leave(first);
    expect(outcome).toBe(Refusal.Overloaded);
  });

  it("a waiting call whose deadline passes before a slot frees is refused then, as a deadline", () => {
    const { a, at } = gate({ floor: 1, max: 1 });
    const first = a.enter("c", "r") as Ticket;
    let outcome: unknown;
    (a.enter("c", "r", 50) as Waiter).settle = (o) => {
      outcome = o;
    };
    at(100);
    a.leave(first);
    expect(outcome).toBe(Refusal.Deadline);
  });
});

describe("what a call's end tells the limit", () => {
  it("only calls that did their work are samples: fast refusals and clients that left are not", () => {
    const { a, at } = gate();
    let t = 0;
    for (let i = 0; i < 200; i++) {
      const ticket = a.enter("c", "r") as Ticket;
      t += 0.5;
      at(t);
      a.leave(ticket, Outcome.Ignore);
    }
    expect(a.limiter.limit).toBe(8);
    expect(a.serviceMs).toBe(0);
  });

  it("an overrun of the service's own deadline shrinks the limit; a client's shorter deadline does not", () => {
    const { a, at } = gate({ callDeadlineMs: 1_000, floor: 1 });
    a.limiter.limit = 10;
    const short = a.enter("c", "r") as Ticket;
    at(100);
    a.leave(short, Outcome.Overran);
    expect(a.limiter.limit).toBe(10);
    const long = a.enter("c", "r") as Ticket;
    at(1_200);
    a.leave(long, Outcome.Overran);
    expect(a.limiter.limit).toBe(9);
  });
});
