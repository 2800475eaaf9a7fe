/**
 * gRPC load generator of `npm run bench` when ghz is not on PATH: @grpc/grpc-js
 * clients over h2c, one HTTP/2 connection per in-flight call (as autocannon
 * uses one connection per in-flight request), each keeping one unary call in
 * flight for the duration, then letting the last calls finish. Argument: one
 * JSON object (target, connections, seconds, path, requestBase64,
 * authorization). Prints START_LINE when the load begins, then one LoadResult
 * JSON line. Requests and answers stay bytes: the generator decodes nothing.
 */
import * as grpc from "@grpc/grpc-js";
import { Latencies, type LoadResult, START_LINE } from "./measure";

interface GrpcLoadSpec {
  readonly target: string;
  readonly connections: number;
  readonly seconds: number;
  readonly path: string;
  readonly requestBase64: string;
  readonly authorization: string;
}

const identity = (b: Buffer) => b;

async function main(): Promise<void> {
  const spec = JSON.parse(process.argv[2] ?? "{}") as GrpcLoadSpec;
  const request = Buffer.from(spec.requestBase64, "base64");
  const metadata = new grpc.Metadata();
  metadata.set("authorization", spec.authorization);
  // A local subchannel pool per client: a connection of its own, not a shared one.
  const clients = Array.from(
    { length: spec.connections },
    () =>
      new grpc.Client(spec.target, grpc.credentials.createInsecure(), {
        "grpc.use_local_subchannel_pool": 1,
      }),
  );
  await Promise.all(
    clients.map(
      (client) =>
        new Promise<void>((resolve, reject) =>
          client.waitForReady(Date.now() + 10_000, (error) => (error ? reject(error) : resolve())),
        ),
    ),
  );

  const latencies = new Latencies();
  let failed = 0;
  let firstError: string | undefined;
  process.stdout.write(`${START_LINE}\n`);
  const started = process.hrtime.bigint();
  const deadline = Date.now() + spec.seconds * 1000;
  const worker = (client: grpc.Client) =>
    new Promise<void>((resolve) => {
      const next = () => {
        if (Date.now() >= deadline) {
          resolve();
          return;
        }
        const t0 = process.hrtime.bigint();
        client.makeUnaryRequest(
          spec.path,
          identity,
          identity,
          request,
          metadata,
          (error: grpc.ServiceError | null) => {
            latencies.record(Number(process.hrtime.bigint() - t0) / 1e6);
            if (error) {
              failed++;
              firstError ??= error.message;
            }
            next();
          },
        );
      };
      next();
    });
  await Promise.all(clients.map(worker));
  const durationS = Number(process.hrtime.bigint() - started) / 1e9;
  for (const client of clients) client.close();
  if (firstError) process.stderr.write(`load-grpc: first error: ${firstError}\n`);
  const answer: LoadResult = {
    generator: "grpc-js (load-grpc.ts)",
    requests: latencies.count,
    failed,
    ok: latencies.count - failed,
    durationS,
    ...latencies.percentiles(),
  };
  process.stdout.write(`${JSON.stringify(answer)}\n`);
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(`load-grpc failed: ${error instanceof Error ? error.message : error}\n`);
  process.exit(1);
});
