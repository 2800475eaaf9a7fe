/**
 * ghz (https://ghz.sh), the gRPC load generator the bench uses when it is on
 * PATH: the command line for one run, and its JSON report read into a
 * LoadResult. ghz's own proto parser rejects proto3 `optional`, so it gets the
 * contract as a descriptor set built with buf.
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { LoadResult } from "./measure";

export interface GhzFiles {
  readonly protoset: string;
  readonly request: string;
}

/** Writes the descriptor set and the binary request ghz needs into `dir`. */
export function prepareGhz(root: string, dir: string, request: Uint8Array): GhzFiles {
  const protoset = join(dir, "docflow.protoset");
  execFileSync(join(root, "node_modules", ".bin", "buf"), ["build", "-o", protoset], {
    cwd: root,
    stdio: ["ignore", "ignore", "inherit"],
  });
  const requestFile = join(dir, "request.bin");
  writeFileSync(requestFile, request);
  return { protoset, request: requestFile };
}

export function ghzArgs(
  ghz: string,
  files: GhzFiles,
  target: string,
  method: string,
  authorization: string,
  connections: number,
  seconds: number,
): string[] {
  return [
    ghz,
    "--insecure",
    `--protoset=${files.protoset}`,
    `--call=${method}`,
    `--binary-file=${files.request}`,
    `--metadata=${JSON.stringify({ authorization })}`,
    `--concurrency=${connections}`,
    `--connections=${connections}`,
    `--duration=${seconds}s`,
    // The calls in flight at the deadline are waited for and counted.
    "--duration-stop=wait",
    "--format=json",
    target,
  ];
}

interface GhzReport {
  count: number;
  total: number;
  statusCodeDistribution?: Record<string, number>;
  latencyDistribution?: { percentage: number; latency: number }[] | null;
}

export function parseGhz(stdout: string): LoadResult {
  const report = JSON.parse(stdout) as GhzReport;
  const at = (p: number) =>
    (report.latencyDistribution?.find((d) => d.percentage === p)?.latency ?? Number.NaN) / 1e6;
  return {
    generator: "ghz",
    requests: report.count,
    failed: report.count - (report.statusCodeDistribution?.OK ?? 0),
    ok: report.statusCodeDistribution?.OK ?? 0,
    durationS: report.total / 1e9,
    p50Ms: at(50),
    p99Ms: at(99),
  };
}
