/**
 * A service on an embedded database of its own that a test may pause with
 * SIGSTOP (a database that stops answering), the call such tests send, and
 * how long a call took.
 */
import { readFileSync } from "node:fs";
import { create } from "@bufbuild/protobuf";
import { SubscriptionService } from "../../gen/docflow/api/v1/subscriptions_pb";
import type { Timeouts } from "../../src/config";
import { type EmbeddedServer, startEmbeddedServer } from "../../src/storage/embedded-server";
import { BOX, baseFixture, USERS } from "./fixture";
import {
  type Harness,
  type HarnessOptions,
  startHarness,
  TEST_CACHE,
  TEST_TIMEOUTS,
} from "./harness";

export interface PausableService {
  readonly h: Harness;
  /** The embedded engine the service uses, this file's own. */
  readonly engine: EmbeddedServer;
  /** Resumes the engine if paused, then stops the service and the engine. */
  close(): Promise<void>;
}

/** The service with `timeouts` (over TEST_TIMEOUTS) on an embedded engine of its own. */
export async function startOnPausableEngine(
  name: string,
  timeouts: Partial<Timeouts>,
  /** Connection-string options for the service's client, e.g. "maxPoolSize=4". */
  uriOptions = "",
  /** The harness's other options (admission, log level). */
  options: HarnessOptions = {},
): Promise<PausableService> {
  const engine = await startEmbeddedServer(name);
  const uri = uriOptions
    ? `${engine.uri}${engine.uri.includes("?") ? "&" : "?"}${uriOptions}`
    : engine.uri;
  const h = await startHarness(baseFixture(), { ...TEST_TIMEOUTS, ...timeouts }, TEST_CACHE, {
    ...options,
    database: { uri, name, close: async () => undefined },
  });
  return {
    h,
    engine,
    async close() {
      process.kill(engine.pid, "SIGCONT");
      await h.close();
      await engine.stop();
    },
  };
}

/** UpdateSubscriptions of the clerk's "News", the write these tests send. */
export const updateMethod = SubscriptionService.method.updateSubscriptions;
export const clerkNewsUpdate = () =>
  create(updateMethod.input, {
    boxId: BOX,
    userId: USERS.clerk.userId,
    subscriptions: { Subscriptions: [{ Id: "News", IsSubscribed: true }] },
  });

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
