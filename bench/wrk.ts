/**
 * wrk (https://github.com/wg/wrk), the HTTP/1.1 load generator the bench uses
 * instead of autocannon with BENCH_HTTP_GENERATOR=wrk: a Lua script per call
 * (method, headers, the body read from a file so binary bodies stay intact)
 * whose `done` hook prints one LoadResult JSON line, and the command line of
 * one run. wrk's latencies are microseconds; one thread, since the bench pins
 * the generator to one core.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { HttpCall } from "./fixture";

/** Writes the Lua script (and the body file) of one call into `dir`; returns the script's path. */
export function prepareWrk(dir: string, name: string, call: HttpCall): string {
  const lua = (text: string) => JSON.stringify(text); // a JSON string is a valid Lua string here
  const lines = [`wrk.method = ${lua(call.method)}`];
  for (const [header, value] of Object.entries(call.headers)) {
    lines.push(`wrk.headers[${lua(header)}] = ${lua(value)}`);
  }
  if (call.bodyBase64 !== undefined) {
    const bodyFile = join(dir, `${name}.body`);
    writeFileSync(bodyFile, Buffer.from(call.bodyBase64, "base64"));
    lines.push(
      `local file = assert(io.open(${lua(bodyFile)}, "rb"))`,
      "wrk.body = file:read('*a')",
      "file:close()",
    );
  }
  lines.push(
    "function done(summary, latency, requests)",
    "  local e = summary.errors",
    "  io.write(string.format(",
    `    '{"generator":"wrk","requests":%d,"failed":%d,"ok":%d,"durationS":%.6f,"p50Ms":%.3f,"p99Ms":%.3f}\\n',`,
    "    summary.requests, e.connect + e.read + e.write + e.status + e.timeout, summary.requests - e.status,",
    "    summary.duration / 1e6, latency:percentile(50) / 1e3, latency:percentile(99) / 1e3))",
    "end",
  );
  const script = join(dir, `${name}.lua`);
  writeFileSync(script, `${lines.join("\n")}\n`);
  return script;
}

export function wrkArgs(
  wrk: string,
  script: string,
  url: string,
  connections: number,
  seconds: number,
): string[] {
  return [
    wrk,
    "-t1",
    `-c${connections}`,
    `-d${seconds}s`,
    "--timeout=30s",
    `--script=${script}`,
    url,
  ];
}
