/**
 * HTTP/1.1 load generator of `npm run bench`: autocannon, run in its own
 * process (pinned to the load generator's core by the bench). Argument: one
 * JSON object (url, connections, seconds, method, headers, bodyBase64).
 * Prints START_LINE when the load begins, then one LoadResult JSON line.
 * Latencies are taken from every response, at sub-millisecond resolution.
 */
import autocannon from "autocannon";
import { Latencies, type LoadResult, START_LINE } from "./measure";

interface HttpLoadSpec {
  readonly url: string;
  readonly connections: number;
  readonly seconds: number;
  readonly method: "GET" | "POST";
  readonly headers: Record<string, string>;
  readonly bodyBase64?: string;
}

async function main(): Promise<void> {
  const spec = JSON.parse(process.argv[2] ?? "{}") as HttpLoadSpec;
  const latencies = new Latencies();
  process.stdout.write(`${START_LINE}\n`);
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: spec.url,
        connections: spec.connections,
        duration: spec.seconds,
        method: spec.method,
        headers: spec.headers,
        ...(spec.bodyBase64 === undefined ? {} : { body: Buffer.from(spec.bodyBase64, "base64") }),
        timeout: 30,
      },
      (error: unknown, done: autocannon.Result) => (error ? reject(error) : resolve(done)),
    );
    instance.on("response", (_client, _status, _bytes, responseTime) => {
      latencies.record(responseTime);
    });
  });
  const { p50Ms, p99Ms } = latencies.percentiles();
  const answer: LoadResult = {
    generator: "autocannon",
    requests: result["2xx"] + result.non2xx,
    failed: result.non2xx + result.errors + result.timeouts,
    ok: result["2xx"],
    durationS: result.duration,
    p50Ms,
    p99Ms,
  };
  process.stdout.write(`${JSON.stringify(answer)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`load-http failed: ${error instanceof Error ? error.message : error}\n`);
  process.exit(1);
});
