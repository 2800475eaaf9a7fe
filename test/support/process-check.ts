/** After the whole run: no embedded database server started by the tests may still be running. */
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

/** This checkout's engine binary: servers of other checkouts on the machine are not ours to judge. */
const BINARY = fileURLToPath(
  new URL(
    "../../node_modules/@jongodb/memory-server-bin-linux-x64-gnu/bin/jongodb",
    import.meta.url,
  ),
);

function embeddedServers(): Set<string> {
  try {
    const out = execFileSync("pgrep", ["-f", BINARY], { encoding: "utf8" });
    return new Set(out.split("\n").filter(Boolean));
  } catch {
    return new Set();
  }
}

let before = new Set<string>();

export function setup(): void {
  before = embeddedServers();
}

export async function teardown(): Promise<void> {
  let left: string[] = [];
  for (let i = 0; i < 100; i++) {
    left = [...embeddedServers()].filter((pid) => !before.has(pid));
    if (left.length === 0) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`embedded database processes left running after the tests: ${left.join(", ")}`);
}
