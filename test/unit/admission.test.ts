/**
 * Admission control's rules (docs/operations.md, "Overload"), on a clock of
 * the test's own: the limit learnt by Little's law, calls run, wait or are
 * refused, the queues served quietest client first, deadlines and expiry,
 * and who a call comes from.
 */
import { describe, expect, it } from "vitest";
import {
  Admission,
  type AdmissionSettings,
  Refusal,
  Ticket,
  Waiter,
} from "../../src/admission/admission";
import { ClientDirectory, OTHER_CLIENT, UNVERIFIED_CLIENT } from "../../src/admission/clients";
import { AdaptiveLimit } from "../../src/admission/limit";

const SETTINGS: AdmissionSettings = {
  initial: 2,
  min: 1,
  max: 100,
  latencyTargetMs: 250,
  loopDelayTargetMs: 20,
  queueTargetMs: 100,
  fairShares: true,
};

/** An admission on a clock the test moves. */
function admissionAt(settings: Partial<AdmissionSettings> = {}) {
  let now = 1_000;
  const refused: [Refusal, string][] = [];
  const waited: [number, boolean][] = [];
  const admission = new Admission(
    { ...SETTINGS, ...settings },
    {
      refused: (reason, client) => refused.push([reason, client]),
      waited: (seconds, admitted) => waited.push([seconds, admitted]),
    },
    () => now,
  );
  return {
    admission,
    refused,
    waited,
    advance(ms: number) {
      now += ms;
    },
    /** Moves the clock in ticks of 10 ms, as `start` would. */
    run(ms: number) {
      for (let t = 0; t < ms; t += 10) {
        now += 10;
        admission.tick(10);
      }
    },
  };
}

/** Enters a call that waits, and records how its wait ends. */
function waitFor(admission: Admission, client: string, deadlineAt?: number) {
  const entered = admission.enter(client, deadlineAt);
  expect(entered).toBeInstanceOf(Waiter);
  const waiter = entered as Waiter;
  const outcome: { value: Ticket | Refusal | undefined } = { value: undefined };
  waiter.settle = (o) => {
    outcome.value = o;
  };
  return { waiter, outcome };
}

describe("the limit: grows while the event loop is punctual, shrinks when it runs late", () => {
  const limit = (settings: Partial<ConstructorParameters<typeof AdaptiveLimit>[0]> = {}) =>
    new AdaptiveLimit({
      initial: 10,
      min: 2,
      max: 500,
      latencyTargetMs: 250,
      loopDelayTargetMs: 20,
      ...settings,
    });
  /**
   * One window of 100 ms: `calls` finished after `latencyMs` each, the limit
   * full, the loop late by `loopMs`, calls waiting (excess demand) when it was.
   */
  const window = (l: AdaptiveLimit, calls: number, latencyMs: number, loopMs = 0) => {
    for (let i = 0; i < calls; i++) l.sample(latencyMs);
    l.adjust(100, l.limit, loopMs, loopMs > 0 ? 1 : 0);
  };

  it("starts at its initial value and keeps it until anything is measured", () => {
    const l = limit();
    l.adjust(100, 0, 0);
    expect(l.limit).toBe(10);
  });

  it("grows by a tenth (and one) a window while the calls fill it and the loop is punctual", () => {
    const l = limit();
    window(l, 100, 5);
    expect(l.limit).toBeCloseTo(12, 5);
    window(l, 100, 5);
    expect(l.limit).toBeCloseTo(14.2, 5);
  });

  it("with calls waiting it grows by as many as wait, up to doubling", () => {
    const l = limit({ initial: 16 });
    for (let c = 0; c < 100; c++) l.sample(5);
    l.adjust(100, 16, 0, 12);
    expect(l.limit).toBe(28);
    for (let c = 0; c < 100; c++) l.sample(5);
    l.adjust(100, 28, 0, 200);
    expect(l.limit).toBe(56);
  });

  it("a late loop shrinks it by a tenth, by a fifth when twice the target", () => {
    const l = limit({ initial: 100 });
    window(l, 100, 5, 25);
    expect(l.limit).toBeCloseTo(90, 5);
    window(l, 100, 5, 50);
    expect(l.limit).toBeCloseTo(72, 5);
  });

  it("a late loop with nobody waiting or refused leaves it: a smaller limit would only queue", () => {
    const l = limit({ initial: 40 });
    for (let c = 0; c < 100; c++) l.sample(5);
    l.adjust(100, 40, 60, 0, 0);
    expect(l.limit).toBe(40);
    for (let c = 0; c < 100; c++) l.sample(5);
    l.adjust(100, 40, 60, 0, 3);
    expect(l.limit).toBe(32);
  });

  it("calls far below the limit neither raise nor lower it (demand, not capacity)", () => {
    const l = limit({ initial: 64 });
    for (let i = 0; i < 20; i++) {
      for (let c = 0; c < 10; c++) l.sample(5);
      l.adjust(100, 3, 0);
    }
    expect(l.limit).toBe(64);
  });

  it("Little's law caps it: no more calls than finish in the latency target", () => {
    const l = limit({ initial: 100 });
    // 200 calls/s, fast at first (5 ms: the no-load latency), then 500 ms each (a
    // slower database): 250 ms allows 50.
    window(l, 20, 5);
    for (let i = 0; i < 5; i++) window(l, 20, 500);
    expect(l.throughput).toBe(200);
    expect(l.limit).toBeCloseTo(50, 5);
  });

  it("calls slow by nature get twice their no-load latency instead of the target", () => {
    const l = limit({ initial: 100 });
    // 100 calls/s that each take 400 ms alone: the target of 250 ms would allow 25.
    for (let i = 0; i < 30; i++) window(l, 10, 400);
    expect(l.noLoadMs).toBe(400);
    expect(l.limit).toBeCloseTo(80, 5);
  });

  it("the cap follows the best window of the last second, so a dip does not shrink it", () => {
    const l = limit({ initial: 100, latencyTargetMs: 50 });
    for (let i = 0; i < 20; i++) window(l, 200, 5);
    expect(l.limit).toBeCloseTo(100, 5);
    for (let i = 0; i < 5; i++) window(l, 50, 5);
    expect(l.limit).toBeCloseTo(100, 5);
    // A lower rate for longer than a second is the instance's rate now: 500 calls/s × 50 ms.
    for (let i = 0; i < 20; i++) window(l, 50, 5);
    expect(l.limit).toBeCloseTo(25, 5);
  });

  it("stays within its bounds", () => {
    const high = limit({ max: 30 });
    for (let i = 0; i < 40; i++) window(high, 1_000, 5);
    expect(high.limit).toBe(30);
    const low = limit({ min: 8 });
    for (let i = 0; i < 40; i++) window(low, 100, 5, 100);
    expect(low.limit).toBe(8);
  });

  it("smooths the latency a queued call should expect", () => {
    const l = limit();
    window(l, 10, 10);
    expect(l.latencyMs).toBe(10);
    window(l, 10, 20);
    expect(l.latencyMs).toBeCloseTo(13, 5);
  });
});

describe("calls run while fewer than the limit run", () => {
  it("admits up to the limit, then the next one waits", () => {
    const { admission } = admissionAt();
    expect(admission.enter("a", undefined)).toBeInstanceOf(Ticket);
    expect(admission.enter("a", undefined)).toBeInstanceOf(Ticket);
    expect(admission.running).toBe(2);
    waitFor(admission, "a");
    expect(admission.queued).toBe(1);
  });

  it("a call that ends lets the one waiting run", () => {
    const { admission, waited, advance } = admissionAt();
    const first = admission.enter("a", undefined) as Ticket;
    admission.enter("a", undefined);
    const { outcome } = waitFor(admission, "a");
    advance(5);
    admission.leave(first);
    expect(outcome.value).toBeInstanceOf(Ticket);
    expect(admission.running).toBe(2);
    expect(admission.queued).toBe(0);
    expect(waited).toEqual([[0.005, true]]);
  });

  it("a client's calls run in the order they came", () => {
    const { admission } = admissionAt({ initial: 1 });
    const running = admission.enter("a", undefined) as Ticket;
    const one = waitFor(admission, "a");
    const two = waitFor(admission, "a");
    admission.leave(running);
    expect(one.outcome.value).toBeInstanceOf(Ticket);
    expect(two.outcome.value).toBeUndefined();
    admission.leave(one.outcome.value as Ticket);
    expect(two.outcome.value).toBeInstanceOf(Ticket);
  });

  it("forgets a client once nothing of it runs or waits", () => {
    const { admission } = admissionAt();
    const ticket = admission.enter("a", undefined) as Ticket;
    expect(admission.activeClients).toBe(1);
    admission.leave(ticket);
    expect(admission.activeClients).toBe(0);
  });
});

describe("a call is refused at once when its wait would exceed the queue target", () => {
  it("predicts the wait from the calls ahead, the latency and the limit", () => {
    const { admission, refused, run } = admissionAt({ initial: 1, min: 1, max: 1 });
    // Teach it that a call takes 40 ms.
    for (let i = 0; i < 3; i++) {
      const t = admission.enter("a", undefined) as Ticket;
      run(40);
      admission.leave(t);
    }
    run(100);
    expect(admission.limiter.latencyMs).toBeGreaterThan(35);
    admission.enter("a", undefined);
    // 1 ahead: about 40 ms; 2 ahead: about 80 ms; 3 ahead: over 100 ms.
    waitFor(admission, "a");
    waitFor(admission, "a");
    expect(admission.enter("a", undefined)).toBe(Refusal.Overloaded);
    expect(refused).toEqual([[Refusal.Overloaded, "a"]]);
  });

  it("a call that waits past the target after all is refused then", () => {
    const { admission, waited, run } = admissionAt({ initial: 1, max: 1 });
    admission.enter("a", undefined);
    const { outcome } = waitFor(admission, "a");
    run(90);
    expect(outcome.value).toBeUndefined();
    run(20);
    expect(outcome.value).toBe(Refusal.Overloaded);
    expect(admission.queued).toBe(0);
    expect(waited[0]?.[1]).toBe(false);
  });
});

describe("deadlines: no call waits past its own", () => {
  it("a deadline already past is refused at once", () => {
    const { admission } = admissionAt({ initial: 1 });
    admission.enter("a", undefined);
    expect(admission.enter("a", 500)).toBe(Refusal.Deadline);
  });

  it("a deadline that comes while it waits refuses it then, as a deadline", () => {
    const { admission, run } = admissionAt({ initial: 1 });
    admission.enter("a", undefined);
    const { outcome } = waitFor(admission, "a", 1_030);
    run(20);
    expect(outcome.value).toBeUndefined();
    run(20);
    expect(outcome.value).toBe(Refusal.Deadline);
  });

  it("a call whose deadline passed is refused when a slot frees, not run", () => {
    const { admission, advance } = admissionAt({ initial: 1 });
    const running = admission.enter("a", undefined) as Ticket;
    const { outcome } = waitFor(admission, "a", 1_020);
    advance(50);
    admission.leave(running);
    expect(outcome.value).toBe(Refusal.Deadline);
    expect(admission.running).toBe(0);
  });
});

describe("a client that leaves while it waits leaves the queue", () => {
  it("cancel removes it; the slot goes to the next", () => {
    const { admission } = admissionAt({ initial: 1 });
    const running = admission.enter("a", undefined) as Ticket;
    const gone = waitFor(admission, "b");
    const next = waitFor(admission, "c");
    admission.cancel(gone.waiter);
    expect(admission.queued).toBe(1);
    admission.leave(running);
    expect(gone.outcome.value).toBeUndefined();
    expect(next.outcome.value).toBeInstanceOf(Ticket);
  });
});

describe("fairness: each client has a share while others wait", () => {
  it("a client over its share while another waits is refused as such", () => {
    const { admission, refused } = admissionAt({ initial: 4, max: 4 });
    for (let i = 0; i < 4; i++) admission.enter("flood", undefined);
    waitFor(admission, "quiet");
    // Two clients: a share is 2; the flood runs 4.
    expect(admission.enter("flood", undefined)).toBe(Refusal.ClientShare);
    expect(refused).toEqual([[Refusal.ClientShare, "flood"]]);
  });

  it("alone, a client is never over its share: it waits (or the instance is full)", () => {
    const { admission } = admissionAt({ initial: 2, max: 2 });
    admission.enter("flood", undefined);
    admission.enter("flood", undefined);
    waitFor(admission, "flood");
    expect(admission.enter("flood", undefined)).toBeInstanceOf(Waiter);
  });

  it("without shares, nobody is refused as over its share", () => {
    const { admission } = admissionAt({ initial: 4, max: 4, fairShares: false });
    for (let i = 0; i < 4; i++) admission.enter("flood", undefined);
    waitFor(admission, "quiet");
    expect(admission.enter("flood", undefined)).toBeInstanceOf(Waiter);
  });

  it("a freed slot goes to the client with the fewest calls running", () => {
    const { admission } = admissionAt({ initial: 3, max: 3 });
    const flood = [0, 1, 2].map(() => admission.enter("flood", undefined) as Ticket);
    // The flood queued first; the quiet client after it.
    const floodWaiting = waitFor(admission, "flood");
    const quiet = waitFor(admission, "quiet");
    admission.leave(flood[0] as Ticket);
    expect(quiet.outcome.value).toBeInstanceOf(Ticket);
    expect(floodWaiting.outcome.value).toBeUndefined();
  });
});

describe("who a call comes from", () => {
  it("credentials not seen to authenticate are one client, unverified", () => {
    const d = new ClientDirectory();
    expect(d.clientOf(undefined)).toBe(UNVERIFIED_CLIENT);
    expect(d.clientOf("ServiceAuth a=1")).toBe(UNVERIFIED_CLIENT);
    expect(d.clientOf("ServiceAuth a=2")).toBe(UNVERIFIED_CLIENT);
  });

  it("credentials that authenticated are the client they proved", () => {
    const d = new ClientDirectory();
    d.learn("ServiceAuth a=1", "Partner ERP");
    d.learn("Bearer x.y.z", "erp-client");
    expect(d.clientOf("ServiceAuth a=1")).toBe("Partner ERP");
    expect(d.clientOf("Bearer x.y.z")).toBe("erp-client");
    // The first proof stands.
    d.learn("ServiceAuth a=1", "Someone else");
    expect(d.clientOf("ServiceAuth a=1")).toBe("Partner ERP");
  });

  it("labels are bounded: safe characters, 64 at most, 100 clients, then _other", () => {
    const d = new ClientDirectory();
    d.learn("v0", 'a"b\nc{}');
    expect(d.clientOf("v0")).toBe("a_b_c__");
    d.learn("long", "x".repeat(100));
    expect(d.clientOf("long")).toBe("x".repeat(64));
    for (let i = 0; i < 200; i++) d.learn(`k${i}`, `client ${i}`);
    expect(d.clientOf("k97")).toBe("client 97");
    expect(d.clientOf("k98")).toBe(OTHER_CLIENT);
  });

  it("remembers at most 10,000 credentials, forgetting the oldest", () => {
    const d = new ClientDirectory();
    for (let i = 0; i <= 10_000; i++) d.learn(`k${i}`, "c");
    expect(d.clientOf("k0")).toBe(UNVERIFIED_CLIENT);
    expect(d.clientOf("k1")).toBe("c");
    expect(d.clientOf("k10000")).toBe("c");
  });
});
