/**
 * The log line: one JSON object, time (ISO 8601, milliseconds, UTC), level
 * and msg first, then the fields; a field named time, level or msg replaces
 * ours with one key each; warn and error lines get the context's fields.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { createLogger, createStdoutWriter } from "../../src/log";

afterEach(() => {
  vi.useRealTimers();
});

function capture(context?: () => Record<string, unknown> | undefined) {
  const lines: string[] = [];
  const log = createLogger("debug", (line) => lines.push(line), context);
  return { lines, log };
}

describe("log lines", () => {
  it("carry the time as toISOString gives it, across seconds and with padded milliseconds", () => {
    vi.useFakeTimers();
    const { lines, log } = capture();
    for (const at of [
      "2026-01-02T03:04:05.007Z",
      "2026-01-02T03:04:05.999Z",
      "2026-01-02T03:04:06.000Z",
      "2026-12-31T23:59:59.090Z",
      "2027-01-01T00:00:00.100Z",
    ]) {
      vi.setSystemTime(new Date(at));
      log.info("tick");
      expect(JSON.parse(lines.at(-1) ?? "").time).toBe(at);
    }
  });

  it("are one JSON object: time, level, msg, then the fields in order; undefined fields left out", () => {
    const { lines, log } = capture();
    log.info('a "quoted" message\n', { requestId: "r-1", status: 200, route: undefined, n: 1.5 });
    expect(lines).toHaveLength(1);
    const line = lines[0] ?? "";
    expect(Object.keys(JSON.parse(line))).toEqual([
      "time",
      "level",
      "msg",
      "requestId",
      "status",
      "n",
    ]);
    expect(JSON.parse(line)).toMatchObject({
      level: "info",
      msg: 'a "quoted" message\n',
      status: 200,
    });
    log.debug("bare");
    expect(Object.keys(JSON.parse(lines[1] ?? ""))).toEqual(["time", "level", "msg"]);
    log.debug("empty", {});
    expect(lines[2]).toMatch(/^\{"time":"[^"]+","level":"debug","msg":"empty"\}$/);
  });

  it("let a field named like ours replace it, leaving one key of each name", () => {
    const { lines, log } = capture();
    log.info("ours", { msg: "theirs", level: "custom", extra: true });
    const line = lines[0] ?? "";
    expect(line.match(/"msg"/g)).toHaveLength(1);
    expect(line.match(/"level"/g)).toHaveLength(1);
    expect(JSON.parse(line)).toMatchObject({ msg: "theirs", level: "custom", extra: true });
  });

  it("add the context's fields to warn and error lines only, the call's fields winning", () => {
    const { lines, log } = capture(() => ({ traceId: "t", spanId: "s" }));
    log.info("i", { a: 1 });
    log.warn("w", { spanId: "mine" });
    log.error("e");
    expect(JSON.parse(lines[0] ?? "")).not.toHaveProperty("traceId");
    expect(JSON.parse(lines[1] ?? "")).toMatchObject({ traceId: "t", spanId: "mine" });
    expect(JSON.parse(lines[2] ?? "")).toMatchObject({ traceId: "t", spanId: "s" });
  });

  it("below the threshold, are not written", () => {
    const lines: string[] = [];
    const log = createLogger("warn", (line) => lines.push(line));
    log.debug("d");
    log.info("i");
    log.warn("w");
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual(["w"]);
  });
});

describe("the stdout writer", () => {
  it("gathers lines for its interval and writes them in one piece, in order", () => {
    vi.useFakeTimers();
    const writes: string[] = [];
    const write = createStdoutWriter((text) => writes.push(text), 10, 1000);
    write("a");
    write("b");
    expect(writes).toEqual([]);
    vi.advanceTimersByTime(9);
    expect(writes).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(writes).toEqual(["a\nb\n"]);
    write("c");
    vi.advanceTimersByTime(10);
    expect(writes).toEqual(["a\nb\n", "c\n"]);
  });

  it("writes at once when the gathered lines reach its size, without waiting", () => {
    vi.useFakeTimers();
    const writes: string[] = [];
    const write = createStdoutWriter((text) => writes.push(text), 10, 8);
    write("1234");
    expect(writes).toEqual([]);
    write("5678");
    expect(writes).toEqual(["1234\n5678\n"]);
    vi.advanceTimersByTime(20);
    expect(writes).toEqual(["1234\n5678\n"]);
  });

  it("writes what is pending when the process exits", () => {
    vi.useFakeTimers();
    const writes: string[] = [];
    const write = createStdoutWriter((text) => writes.push(text), 10_000, 1000);
    write("last words");
    process.emit("exit", 0);
    expect(writes).toEqual(["last words\n"]);
  });
});
