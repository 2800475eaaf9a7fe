/** The only place that reads the environment, listens and handles signals. */

import { bearerFromConfig } from "./auth/bearer-verifier";
import { ConfigError, loadConfig } from "./config";
import { createDeps } from "./deps";
import { demoCommands, demoCredentials, demoFixture } from "./fixtures/demo";
import { FixtureError } from "./fixtures/fixture";
import { loadFixture, loadFixtureFile } from "./fixtures/load";
import { createHttpServer } from "./http/server";
import { createLogger, describeError } from "./log";
import { createMetrics } from "./observability/metrics";
import { createObserver } from "./observability/observer";
import { startTracing, type Tracing } from "./observability/tracing";
import { openDatabase } from "./storage/database";
import { EmbeddedEngineMissing } from "./storage/embedded-server";

/** Two signals closer than this are one request to stop (see onSignal). */
const REPEATED_SIGNAL_MS = 1_000;
/** On shutdown, spans still queued are exported within this time. */
const TRACE_FLUSH_MS = 2_000;

async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  let tracing: Tracing | undefined;
  const log = createLogger(config.logLevel, undefined, () => tracing?.logFields());
  if (config.tracing) {
    tracing = await startTracing({ config: config.tracing, log });
  }
  log.info("starting", { node: process.version, pid: process.pid });

  // Signals are handled from the first line on. A signal sent to the whole
  // process group reaches us twice within milliseconds (from the kernel, and
  // forwarded by npm): a repeat within a second is the same request to stop.
  let stopRequested: { signal: string; at: number } | undefined;
  let stopNow: ((signal: string) => void) | undefined;
  const onSignal = (signal: string) => {
    const now = Date.now();
    if (stopRequested === undefined) {
      stopRequested = { signal, at: now };
      stopNow?.(signal);
    } else if (now - stopRequested.at > REPEATED_SIGNAL_MS) {
      log.warn("second signal: exiting now", { signal });
      process.exit(1);
    }
  };
  process.on("SIGTERM", () => onSignal("SIGTERM"));
  process.on("SIGINT", () => onSignal("SIGINT"));

  let database: Awaited<ReturnType<typeof openDatabase>>;
  try {
    database = await openDatabase({
      uri: config.mongodbUri,
      name: config.mongodbDatabase,
      operationTimeoutMs: config.timeouts.databaseMs,
      monitor: tracing ? (client) => tracing?.attach(client) : undefined,
    });
  } catch (error) {
    if (error instanceof EmbeddedEngineMissing) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  if (database.mode === "embedded") {
    log.warn("embedded, in-memory database: nothing is kept when the service stops", {
      database: database.address,
      embeddedPid: database.embeddedPid,
    });
  }
  try {
    if (config.seedFile) {
      await loadFixtureFile(database.db, config.seedFile);
      log.info("fixture loaded", { file: config.seedFile });
    } else if (database.mode === "embedded") {
      await loadFixture(database.db, demoFixture);
      log.info("demo fixture loaded");
    }
  } catch (error) {
    await database.close();
    if (error instanceof FixtureError) {
      process.stderr.write(`fixture rejected: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }

  if (config.bearer) {
    log.info("bearer tokens on", {
      issuer: config.bearer.issuer,
      audience: config.bearer.audience,
      jwks: config.bearer.jwksUrl ?? "file",
      algorithms: config.bearer.algorithms,
    });
  }
  const deps = createDeps(database, log, {
    bearer: config.bearer ? bearerFromConfig(config.bearer, log) : undefined,
    healthTimeoutMs: config.timeouts.healthMs,
    cache: { ttlMs: config.authCacheTtlMs, maxEntries: config.authCacheMaxEntries },
  });
  const server = createHttpServer(deps, config.timeouts, {
    corsAllowedOrigins: config.corsAllowedOrigins,
    publicUrl: config.publicUrl,
    demoCredentials: !config.seedFile && database.mode === "embedded" ? demoCredentials() : [],
    observer: createObserver(config.metricsEnabled ? createMetrics() : undefined, tracing?.tracer),
  });
  const stop = async (signal: string) => {
    log.info("shutting down", { signal, drainMs: config.timeouts.drainMs });
    await server.drain(config.timeouts.drainMs);
    await server.close();
    // After the in-flight calls, before the database: their spans are exported, within 2 s.
    await tracing?.shutdown(TRACE_FLUSH_MS);
    await database.close();
    log.info("stopped");
    process.exit(0);
  };
  stopNow = (signal) => void stop(signal);
  if (stopRequested !== undefined) {
    // A signal arrived during start-up: there is now something to close.
    await stop(stopRequested.signal);
    return;
  }
  const address = await server.listen(config.port, config.host);
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const baseUrl = `http://${host}:${address.port}`;
  log.info("listening", { url: baseUrl, database: database.mode, node: process.version });
  printBanner(baseUrl, database.mode, config.seedFile);
}

function printBanner(baseUrl: string, mode: string, seedFile: string | undefined): void {
  const lines = [
    "",
    `docflow-api is listening on ${baseUrl} (Node ${process.version})`,
    mode === "embedded"
      ? "database: embedded, in-memory: NOTHING IS KEPT when the service stops (set MONGODB_URI to keep data)"
      : "database: MongoDB at MONGODB_URI",
    `data: ${seedFile ? `fixture ${seedFile}` : mode === "embedded" ? "built-in demo fixture" : "as stored"}`,
    "",
  ];
  if (!seedFile && mode === "embedded") {
    lines.push("Try it:", ...demoCommands(baseUrl), "");
  }
  process.stderr.write(`${lines.join("\n")}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `docflow-api failed to start: ${JSON.stringify(describeError(error).errorMessage ?? error)}\n`,
  );
  process.exit(1);
});
