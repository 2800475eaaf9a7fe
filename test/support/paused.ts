/** A process paused with SIGSTOP (the embedded database that stops answering), and how long a call took. */
import { readFileSync } from "node:fs";

/** Pauses the process and waits until the kernel reports it stopped (state T). */
export async function freeze(pid: number): Promise<void> {
  process.kill(pid, "SIGSTOP");
  for (let i = 0; i < 100; i++) {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    if (/^\d+ \(.*\) [Tt] /.test(stat)) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error("the database process did not stop");
}

/** What `work` gave, and the milliseconds it took. */
export async function timed<T>(work: Promise<T>): Promise<[T, number]> {
  const started = Date.now();
  const value = await work;
  return [value, Date.now() - started];
}
