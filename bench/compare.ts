/**
 * The summary of a comparison of the service with itself under another
 * environment (`--variant NAME=value`, `--closed`): per scenario and
 * connection count, each side's CPU per call and goodput as the median of
 * its rounds with their min–max, the refusals admission counted, and the
 * ratios of the first side to each other one — of the medians, and of each
 * interleaved round's pair (rounds run A, B, A, B…, so a pair shares the
 * machine's weather; their median and spread say more on a noisy VM than
 * one pair of runs).
 */
import { median } from "./measure";

/** What the summary reads of one round. */
export interface RoundFigures {
  readonly cpuMsPerReq: number;
  /** 2xx (gRPC OK) per second. */
  readonly okPerS: number;
  /** Calls admission refused (its counter on /metrics); NaN if it cannot tell. */
  readonly refused: number;
  /** Non-2xx answers and failed calls, as the load generator counted them. */
  readonly failed: number;
}

export interface ComparedRow {
  readonly scenario: string;
  readonly connections: number;
  readonly side: string;
  readonly rounds: readonly RoundFigures[];
}

interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

export interface SideFigures {
  readonly side: string;
  readonly cpuUsPerCall: Spread;
  readonly okPerS: Spread;
  readonly refused: number;
  readonly failed: number;
}

export interface Comparison {
  readonly scenario: string;
  readonly connections: number;
  readonly rounds: number;
  readonly sides: readonly SideFigures[];
  /** The first side against each other one. */
  readonly ratios: readonly {
    readonly of: string;
    readonly to: string;
    /** Ratio of the medians. */
    readonly cpu: number;
    /** Each round's pair: median, min, max. */
    readonly cpuPaired: Spread;
    readonly goodput: number;
    readonly goodputPaired: Spread;
  }[];
}

const spreadOf = (values: readonly number[]): Spread => {
  const finite = values.filter(Number.isFinite);
  return {
    median: median(finite),
    min: finite.length > 0 ? Math.min(...finite) : Number.NaN,
    max: finite.length > 0 ? Math.max(...finite) : Number.NaN,
  };
};

const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);

export function compare(rows: readonly ComparedRow[]): Comparison[] {
  const out: Comparison[] = [];
  const keys = [...new Set(rows.map((r) => `${r.scenario}\u0000${r.connections}`))];
  for (const key of keys) {
    const [scenario = "", connections = "0"] = key.split("\u0000");
    const group = rows.filter(
      (r) => r.scenario === scenario && r.connections === Number(connections),
    );
    const sides = group.map((r) => ({
      side: r.side,
      cpuUsPerCall: spreadOf(r.rounds.map((x) => x.cpuMsPerReq * 1000)),
      okPerS: spreadOf(r.rounds.map((x) => x.okPerS)),
      refused: sum(r.rounds.map((x) => x.refused)),
      failed: sum(r.rounds.map((x) => x.failed)),
    }));
    const [first, ...others] = group;
    const ratios = others.map((other) => {
      const pairs = (f: (x: RoundFigures) => number) =>
        (first?.rounds ?? []).map((a, i) => {
          const b = other.rounds[i];
          return b ? f(a) / f(b) : Number.NaN;
        });
      const a = sides[0];
      const b = sides.find((s) => s.side === other.side);
      return {
        of: first?.side ?? "",
        to: other.side,
        cpu: (a?.cpuUsPerCall.median ?? Number.NaN) / (b?.cpuUsPerCall.median ?? Number.NaN),
        cpuPaired: spreadOf(pairs((x) => x.cpuMsPerReq)),
        goodput: (a?.okPerS.median ?? Number.NaN) / (b?.okPerS.median ?? Number.NaN),
        goodputPaired: spreadOf(pairs((x) => x.okPerS)),
      };
    });
    out.push({
      scenario,
      connections: Number(connections),
      rounds: Math.min(...group.map((r) => r.rounds.length)),
      sides,
      ratios,
    });
  }
  return out;
}

const fmt = (n: number, digits: number) => (Number.isFinite(n) ? n.toFixed(digits) : "-");
const spread = (s: Spread, digits: number) =>
  `${fmt(s.median, digits)} (${fmt(s.min, digits)}–${fmt(s.max, digits)})`;
const times = (s: Spread) => `x${fmt(s.median, 3)} (x${fmt(s.min, 2)}–x${fmt(s.max, 2)})`;

export function printComparisons(comparisons: readonly Comparison[]): void {
  const rounds = Math.min(...comparisons.map((c) => c.rounds));
  console.log(
    `\nper scenario: CPU per call (µs, all of the server process's CPU ÷ answers) and goodput (2xx or OK per second), median (min–max) of ${rounds} interleaved rounds; refused: admission's counter, all rounds; non-2xx: the load generator's count`,
  );
  const line = (cells: string[]) =>
    console.log(
      `  ${(cells[0] ?? "").padEnd(28)} ${(cells[1] ?? "").padEnd(36)} ${(cells[2] ?? "").padStart(20)} ${(cells[3] ?? "").padStart(24)} ${(cells[4] ?? "").padStart(8)} ${(cells[5] ?? "").padStart(8)}`,
    );
  line(["scenario @connections", "side", "CPU µs/call", "goodput/s", "refused", "non-2xx"]);
  for (const c of comparisons) {
    c.sides.forEach((s, i) => {
      line([
        i === 0 ? `${c.scenario} @${c.connections}` : "",
        s.side,
        spread(s.cpuUsPerCall, 0),
        spread(s.okPerS, 0),
        fmt(s.refused, 0),
        String(s.failed),
      ]);
    });
    for (const r of c.ratios) {
      console.log(
        `  ${"".padEnd(28)} ${r.of} ÷ ${r.to}: CPU/call x${fmt(r.cpu, 3)} (paired rounds ${times(r.cpuPaired)}); goodput x${fmt(r.goodput, 3)} (paired rounds ${times(r.goodputPaired)})`,
      );
    }
  }
}

/**
 * --closed's goals (issue 41): with admission on, nothing refused, and
 * goodput at least that of admission off, on every scenario at every
 * connection count.
 */
export function closedGoals(comparisons: readonly Comparison[]): string[] {
  const mark = (ok: boolean) => (ok ? "met   " : "MISSED");
  return comparisons.flatMap((c) => {
    const on = c.sides[0];
    const ratio = c.ratios[0];
    if (!on || !ratio) return [];
    const at = `${c.scenario} @${c.connections}`.padEnd(28);
    return [
      `${mark(on.refused === 0)} ${at} nothing refused (${fmt(on.refused, 0)} refused in ${c.rounds} rounds)`,
      `${mark(ratio.goodput >= 1)} ${at} goodput on ÷ off >= 1.0 (x${fmt(ratio.goodput, 3)}; paired rounds ${times(ratio.goodputPaired)})`,
    ];
  });
}

/** --variant's check: the service's CPU per call within 3 % of each variant's (issue 41). */
export function costGoals(comparisons: readonly Comparison[]): string[] {
  const mark = (ok: boolean) => (ok ? "met   " : "MISSED");
  return comparisons.flatMap((c) =>
    c.ratios.map(
      (r) =>
        `${mark(r.cpu <= 1.03)} ${`${c.scenario} @${c.connections}`.padEnd(28)} CPU/call ${r.of} ÷ ${r.to} <= 1.03 (x${fmt(r.cpu, 3)} of the medians; paired rounds ${times(r.cpuPaired)})`,
    ),
  );
}
