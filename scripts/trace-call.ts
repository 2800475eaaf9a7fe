/**
 * Which files of src/ one call runs, for docs/architecture.md's traced
 * calls: the service in process (the test harness with metrics on, as
 * `npm start` has them), one warm-up call, then V8's precise coverage of a
 * second, identical call — every src/ file with a function that ran, by
 * room. `npx tsx scripts/trace-call.ts [--help]`.
 */
import { Session } from "node:inspector/promises";
import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import { create } from "@bufbuild/protobuf";
import { SubscriptionService } from "../gen/docflow/api/v1/subscriptions_pb";
import { createMetrics } from "../src/observability/metrics";
import { createObserver } from "../src/observability/observer";
import { authHeader, BOX, baseFixture, USERS } from "../test/support/fixture";
import { callRpc, type Harness, legacy, startHarness } from "../test/support/harness";

const USAGE = `usage: npx tsx scripts/trace-call.ts

Serves the test fixture in process, makes each traced call of
docs/architecture.md twice (a warm-up, then the one measured) and prints
the src/ files whose functions ran during the second, grouped by folder.
Takes no arguments.`;

const SRC = fileURLToPath(new URL("../src/", import.meta.url));

/** The src/ files with a function that ran since the last take (taking resets the counts). */
async function filesRun(session: Session): Promise<string[]> {
  const { result } = await session.post("Profiler.takePreciseCoverage");
  const files = new Set<string>();
  for (const script of result) {
    if (!script.url.startsWith("file://")) continue;
    const path = fileURLToPath(script.url);
    if (!path.startsWith(SRC)) continue;
    if (script.functions.some((f) => f.ranges.some((r) => r.count > 0))) {
      files.add(relative(SRC, path));
    }
  }
  return [...files].sort();
}

async function traced(session: Session, name: string, call: () => Promise<unknown>) {
  await call();
  await filesRun(session);
  await call();
  const files = await filesRun(session);
  const rooms = new Map<string, string[]>();
  for (const file of files) {
    const room = file.includes("/") ? (file.split("/")[0] as string) : file.replace(/\.ts$/, "");
    rooms.set(room, [...(rooms.get(room) ?? []), file]);
  }
  console.log(`\n${name}: ${files.length} files in ${rooms.size} folders`);
  for (const [room, inRoom] of rooms) console.log(`  ${room}: ${inRoom.join(", ")}`);
}

async function main(): Promise<void> {
  if (process.argv.length > 2) {
    console.log(USAGE);
    process.exit(process.argv.includes("--help") || process.argv.includes("-h") ? 0 : 2);
  }
  const h: Harness = await startHarness(baseFixture(), undefined, undefined, {
    observer: createObserver(createMetrics(), undefined),
  });
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.startPreciseCoverage", { callCount: true, detailed: true });
  try {
    await traced(session, "legacy GET /GetSubscriptions (protobuf, no Accept)", async () => {
      const res = await legacy(h, {
        method: "GET",
        path: `/GetSubscriptions?boxId=${BOX}&userId=${USERS.clerk.userId}`,
        headers: { authorization: authHeader("admin") },
      });
      if (res.status !== 200) throw new Error(`legacy: ${res.status}`);
    });
    const method = SubscriptionService.method.getSubscriptions;
    await traced(session, "gRPC docflow.api.v1.SubscriptionService/GetSubscriptions", async () => {
      const res = await callRpc(
        h,
        "grpc",
        method,
        create(method.input, { boxId: BOX, userId: USERS.clerk.userId }),
        authHeader("admin"),
      );
      if (!res.ok) throw new Error(`grpc: ${res.code}`);
    });
  } finally {
    session.disconnect();
    await h.close();
  }
}

await main();
