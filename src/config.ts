/** Configuration, from environment variables only, checked once at start-up. */
import { existsSync } from "node:fs";
import { LOG_LEVELS, type LogLevel } from "./log";

export interface Config {
  readonly port: number;
  readonly host: string;
  /** undefined: start the embedded, in-memory database. */
  readonly mongodbUri: string | undefined;
  readonly mongodbDatabase: string;
  readonly seedFile: string | undefined;
  readonly logLevel: LogLevel;
  readonly shutdownTimeoutMs: number;
}

export class ConfigError extends Error {
  override readonly name = "ConfigError";
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
  }
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const problems: string[] = [];
  const value = (name: string) => {
    const v = env[name];
    return v === undefined || v.trim() === "" ? undefined : v.trim();
  };
  const integer = (name: string, fallback: number, min: number, max: number) => {
    const raw = value(name);
    if (raw === undefined) return fallback;
    const n = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      problems.push(`${name} must be an integer from ${min} to ${max} (got "${raw}")`);
      return fallback;
    }
    return n;
  };

  const port = integer("PORT", 8080, 0, 65535);
  const host = value("HOST") ?? "127.0.0.1";
  const mongodbUri = value("MONGODB_URI");
  if (mongodbUri !== undefined && !/^mongodb(\+srv)?:\/\/\S+$/.test(mongodbUri)) {
    problems.push("MONGODB_URI must be a mongodb:// or mongodb+srv:// connection string");
  }
  const mongodbDatabase = value("MONGODB_DB") ?? "docflow";
  if (!/^[A-Za-z0-9_-]{1,63}$/.test(mongodbDatabase)) {
    problems.push("MONGODB_DB must be 1 to 63 letters, digits, '_' or '-'");
  }
  const seedFile = value("SEED_FILE");
  if (seedFile !== undefined && !existsSync(seedFile)) {
    problems.push(`SEED_FILE names a file that does not exist: ${seedFile}`);
  }
  const logLevel = (value("LOG_LEVEL") ?? "info") as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}`);
  }
  const shutdownTimeoutMs = integer("SHUTDOWN_TIMEOUT_MS", 10_000, 0, 600_000);
  if (problems.length > 0) {
    throw new ConfigError(problems);
  }
  return Object.freeze({
    port,
    host,
    mongodbUri,
    mongodbDatabase,
    seedFile,
    logLevel,
    shutdownTimeoutMs,
  });
}
