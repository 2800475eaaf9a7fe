/** The only place that reads the environment, listens and handles signals. */

import { X509Certificate } from "node:crypto";
import { bearerFromConfig } from "./auth/bearer-verifier";
import { ConfigError, loadConfig } from "./config";
import { createDeps } from "./deps";
import { shown } from "./env";
import { type DemoTls, demoCommands, demoCredentials, demoFixture } from "./fixtures/demo";
import { FixtureError } from "./fixtures/fixture";
import { LOAD_ROUND_TRIP_MS, loadFixture, loadFixtureFile } from "./fixtures/load";
import { createHttpServer } from "./http/server";
import { readTlsMaterial, TlsFilesError, type TlsMaterial } from "./http/tls";
import { createLogger, describeError } from "./log";
import { createMetrics } from "./observability/metrics";
import { createObserver } from "./observability/observer";
import { startTracing, type Tracing } from "./observability/tracing";
import { openDatabase } from "./storage/database";
import { EmbeddedEngineMissing } from "./storage/embedded-server";
import { nodeVersionProblem } from "./version";

/** Two signals closer than this are one request to stop (see onSignal). */
const REPEATED_SIGNAL_MS = 1_000;
/** On shutdown, spans still queued are exported within this time. */
const TRACE_FLUSH_MS = 2_000;
/** A fixture load says how far it got at most this often. */
const PROGRESS_EVERY_MS = 2_000;

/**
 * Start-up failed for a reason the operator can fix: names the component and
 * the variable to change. Printed on stderr and logged (JSON) before exit 1.
 */
class StartupFailure extends Error {
  override readonly name = "StartupFailure";
  constructor(
    readonly component: string,
    readonly variable: string,
    message: string,
  ) {
    super(message);
  }
}

/** The reason an error gives, without the stack: for start-up messages only. */
const reasonOf = (error: unknown) =>
  error instanceof Error ? error.message : String(describeError(error).errorMessage ?? error);

/** What a failed listen means, and what to change. */
function listenFailure(
  error: unknown,
  host: string,
  port: number,
  variable = "PORT",
): StartupFailure | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (code === "EADDRINUSE") {
    return new StartupFailure(
      "http",
      variable,
      `port ${port} on ${host} is in use: stop what listens there, or set ${variable} to a free port (${variable}=0 picks one)`,
    );
  }
  if (code === "EACCES") {
    return new StartupFailure(
      "http",
      variable,
      `not allowed to listen on port ${port}: set ${variable} to 1024 or above (or grant the capability)`,
    );
  }
  if (code === "EADDRNOTAVAIL" || code === "ENOTFOUND" || code === "EAI_AGAIN") {
    return new StartupFailure(
      "http",
      variable === "PORT" ? "HOST" : "OPS_HOST",
      `cannot listen on ${variable === "PORT" ? "HOST" : "OPS_HOST"}=${host}: not an address of this machine (127.0.0.1 or 0.0.0.0 work)`,
    );
  }
  return undefined;
}

const USAGE = `usage: npm start   (the image runs node dist/main.js)

Runs docflow-api: gRPC, gRPC-Web, Connect and the legacy HTTP paths on one
port. It takes no arguments: every setting is an environment variable,
checked at start-up (docs/configuration.md lists them all). The usual ones:

  PORT, HOST            where it listens (default 8080 on 127.0.0.1)
  MONGODB_URI           the MongoDB to use (unset: an embedded, in-memory one
                        with demo data, for trying it out)
  SEED_FILE             a fixture loaded at start (docs/api.md §8)
  TLS_CERT_FILE, TLS_KEY_FILE   TLS on the port
  LOG_LEVEL             debug, info, warn, error or silent

Example: PORT=9000 LOG_LEVEL=debug npm start
`;

async function main(): Promise<void> {
  const tooOld = nodeVersionProblem(process.versions.node);
  if (tooOld) {
    process.stderr.write(`${tooOld}\n`);
    process.exit(2);
  }
  const args = process.argv.slice(2);
  if (args.includes("--help") || args.includes("-h")) {
    process.stdout.write(USAGE);
    return;
  }
  if (args.length > 0) {
    process.stderr.write(
      `docflow-api takes no arguments (got ${args.map((a) => shown(a)).join(" ")}): settings are environment variables; npm start -- --help says which\n`,
    );
    process.exit(2);
  }
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
  // The TLS files, read and checked before anything starts: a bad one is a configuration error.
  let tlsMaterial: TlsMaterial | undefined;
  if (config.tls) {
    try {
      tlsMaterial = readTlsMaterial(config.tls);
    } catch (error) {
      if (!(error instanceof TlsFilesError)) throw error;
      process.stderr.write(
        `invalid configuration:\n${error.problems.map((p) => `  - ${p}\n`).join("")}`,
      );
      process.exit(2);
    }
  }
  let tracing: Tracing | undefined;
  const log = createLogger(config.logLevel, undefined, () => tracing?.logFields());
  if (config.tracing) {
    tracing = await startTracing({ config: config.tracing, log });
  }
  log.info("starting", { node: process.version, pid: process.pid });
  const metrics = config.metricsEnabled ? createMetrics() : undefined;

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

  // Start-up failures the operator can fix: one line on stderr, one in the log, exit 1.
  const fail = (failure: StartupFailure): never => {
    log.error("start-up failed", {
      component: failure.component,
      variable: failure.variable,
      reason: failure.message,
    });
    process.stderr.write(`docflow-api failed to start: ${failure.message}\n`);
    process.exit(1);
  };

  let database: Awaited<ReturnType<typeof openDatabase>>;
  try {
    database = await openDatabase({
      uri: config.mongodbUri,
      name: config.mongodbDatabase,
      operationTimeoutMs: config.timeouts.databaseMs,
      // Command monitoring only when something reads it (it costs per command).
      monitor:
        tracing || metrics
          ? (client) => {
              tracing?.attach(client);
              metrics?.attachDatabase(client);
            }
          : undefined,
    });
  } catch (error) {
    if (error instanceof EmbeddedEngineMissing) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    if (config.mongodbUri === undefined) throw error;
    return fail(
      new StartupFailure(
        "mongodb",
        "MONGODB_URI",
        `MongoDB unreachable at MONGODB_URI=${shown(config.mongodbUri)} within ${config.timeouts.databaseMs} ms (MONGODB_TIMEOUT_MS): ${reasonOf(error)}. Check that the server runs and the URI, or unset MONGODB_URI to use the embedded database.`,
      ),
    );
  }
  if (database.mode === "embedded") {
    log.warn("embedded, in-memory database: nothing is kept when the service stops", {
      database: database.address,
      embeddedPid: database.embeddedPid,
    });
  }
  try {
    const started = Date.now();
    let said = started;
    // A long load says how far it got (a fixture of 100,000 counteragents takes a while).
    const progress = (collection: string, written: number, total: number) => {
      const now = Date.now();
      if (now - said < PROGRESS_EVERY_MS) return;
      said = now;
      log.info("loading fixture", { collection, written, total });
    };
    if (config.seedFile) {
      // Not bound by MONGODB_TIMEOUT_MS (one call's round trip): a batch may take longer.
      await database.withLongOperations(LOAD_ROUND_TRIP_MS, (db) =>
        loadFixtureFile(db, config.seedFile as string, progress),
      );
      log.info("fixture loaded", { file: config.seedFile, ms: Date.now() - started });
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
    if (!config.seedFile) throw error;
    return fail(
      new StartupFailure(
        "fixture",
        "SEED_FILE",
        `the fixture could not be written to the database: ${reasonOf(error)}`,
      ),
    );
  }

  if (config.bearer) {
    log.info("bearer tokens on", {
      issuer: config.bearer.issuer,
      audience: config.bearer.audience,
      jwks: config.bearer.jwksUrl ?? "file",
      algorithms: config.bearer.algorithms,
    });
  }
  if (config.serviceAuthAliases.length > 0) {
    log.info("ServiceAuth aliases on", {
      schemes: config.serviceAuthAliases.map((a) => a.scheme),
    });
  }
  const deps = createDeps(database, log, {
    bearer: config.bearer ? bearerFromConfig(config.bearer, log) : undefined,
    serviceAuthAliases: config.serviceAuthAliases,
    authFailures: config.authFailures,
    healthTimeoutMs: config.timeouts.healthMs,
    cache: { ttlMs: config.authCacheTtlMs, maxEntries: config.authCacheMaxEntries },
  });
  const server = createHttpServer(deps, config.timeouts, {
    corsAllowedOrigins: config.corsAllowedOrigins,
    publicUrl: config.publicUrl,
    tls:
      config.tls && tlsMaterial
        ? { files: config.tls, material: tlsMaterial, reloadIntervalMs: config.tlsReloadIntervalMs }
        : undefined,
    demoCredentials: !config.seedFile && database.mode === "embedded" ? demoCredentials() : [],
    observer: createObserver(metrics, tracing?.tracer),
    admission: config.admission,
    connections: config.connections,
    trustedProxies: config.trustedProxies,
    opsPort: config.ops !== undefined,
  });
  const stop = async (signal: string) => {
    // SIGTERM is an orchestrator: drain so that load balancers stop sending.
    // SIGINT is a person at a terminal (Ctrl-C): no balancer to wait for.
    const drainMs = signal === "SIGINT" ? 0 : config.timeouts.drainMs;
    log.info("shutting down", { signal, drainMs });
    await server.drain(drainMs);
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
  let address: Awaited<ReturnType<typeof server.listen>>;
  try {
    address = await server.listen(config.port, config.host);
  } catch (error) {
    const failure = listenFailure(error, config.host, config.port);
    if (!failure) throw error;
    await database.close();
    return fail(failure);
  }
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const baseUrl = `${config.tls ? "https" : "http"}://${host}:${address.port}`;
  let opsUrl: string | undefined;
  if (config.ops) {
    try {
      const ops = await server.listenOps(config.ops.port, config.ops.host);
      opsUrl = `http://${ops.family === "IPv6" ? `[${ops.address}]` : ops.address}:${ops.port}`;
    } catch (error) {
      const failure = listenFailure(error, config.ops.host, config.ops.port, "OPS_PORT");
      if (!failure) throw error;
      await server.close();
      await database.close();
      return fail(failure);
    }
  }
  log.info("listening", {
    url: baseUrl,
    ...(opsUrl ? { opsUrl } : {}),
    database: database.mode,
    node: process.version,
  });
  printBanner(
    baseUrl,
    database.mode,
    config.seedFile,
    tlsMaterial && demoTls(tlsMaterial, config.tls?.certFile),
  );
}

/** The banner's CA for curl: the certificate file itself when it is self-signed; else the operator knows it. */
function demoTls(material: TlsMaterial, certFile: string | undefined): DemoTls {
  const certificate = new X509Certificate(material.cert);
  return { caFile: certificate.checkIssued(certificate) ? certFile : undefined };
}

function printBanner(
  baseUrl: string,
  mode: string,
  seedFile: string | undefined,
  tls: DemoTls | undefined,
): void {
  const lines = [
    "",
    `docflow-api is listening on ${baseUrl} (Node ${process.version})`,
    mode === "embedded"
      ? "database: embedded, in-memory: NOTHING IS KEPT when the service stops (set MONGODB_URI to keep data)"
      : "database: MongoDB at MONGODB_URI",
    `data: ${seedFile ? `fixture ${seedFile}` : mode === "embedded" ? "built-in demo fixture" : "as stored"}`,
    `API page: ${baseUrl}/docs   OpenAPI document: ${baseUrl}/openapi.json   health: ${baseUrl}/readyz`,
    "",
  ];
  if (!seedFile && mode === "embedded") {
    lines.push("Try it:", ...demoCommands(baseUrl, tls), "");
  }
  process.stderr.write(`${lines.join("\n")}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `docflow-api failed to start: ${JSON.stringify(describeError(error).errorMessage ?? error)}\n`,
  );
  process.exit(1);
});
