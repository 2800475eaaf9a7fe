/** The only place that reads the environment, listens and handles signals. */

import { ConfigError, loadConfig } from "./config";
import { createDeps } from "./deps";
import { demoCommands, demoFixture } from "./fixtures/demo";
import { FixtureError } from "./fixtures/fixture";
import { loadFixture, loadFixtureFile } from "./fixtures/load";
import { createHttpServer } from "./http/server";
import { createLogger, describeError } from "./log";
import { openDatabase } from "./storage/database";

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
  const log = createLogger(config.logLevel);
  // A signal during start-up (the embedded database may be starting) is kept
  // and acted on once there is something to close, so no child process is left.
  let early: string | undefined;
  const remember = (signal: string) => {
    early = signal;
  };
  process.once("SIGTERM", remember);
  process.once("SIGINT", remember);
  const database = await openDatabase({
    uri: config.mongodbUri,
    name: config.mongodbDatabase,
    operationTimeoutMs: config.timeouts.databaseMs,
  });
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

  const deps = createDeps(database, log, {
    healthTimeoutMs: config.timeouts.healthMs,
    cache: { ttlMs: config.authCacheTtlMs, maxEntries: config.authCacheMaxEntries },
  });
  const server = createHttpServer(deps, config.timeouts);
  // Signals are handled from before the first connection can arrive.
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) {
      log.warn("second signal: exiting now", { signal });
      process.exit(1);
    }
    stopping = true;
    log.info("shutting down", { signal });
    await server.close();
    await database.close();
    log.info("stopped");
    process.exit(0);
  };
  process.removeListener("SIGTERM", remember);
  process.removeListener("SIGINT", remember);
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
  if (early !== undefined) {
    await stop(early);
    return;
  }
  const address = await server.listen(config.port, config.host);
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const baseUrl = `http://${host}:${address.port}`;
  log.info("listening", { url: baseUrl, database: database.mode });
  printBanner(baseUrl, database.mode, config.seedFile);
}

function printBanner(baseUrl: string, mode: string, seedFile: string | undefined): void {
  const lines = [
    "",
    `docflow-api is listening on ${baseUrl}`,
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
