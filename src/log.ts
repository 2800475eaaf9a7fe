/** Structured JSON logs, one object per line. Never pass secrets in fields. */
export const LOG_LEVELS = ["debug", "info", "warn", "error", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

export function createLogger(
  level: LogLevel,
  write: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
): Logger {
  const threshold = LOG_LEVELS.indexOf(level);
  const emit = (at: Exclude<LogLevel, "silent">, message: string, fields?: LogFields) => {
    if (LOG_LEVELS.indexOf(at) < threshold) {
      return;
    }
    write(JSON.stringify({ time: new Date().toISOString(), level: at, msg: message, ...fields }));
  };
  return {
    debug: (message, fields) => emit("debug", message, fields),
    info: (message, fields) => emit("info", message, fields),
    warn: (message, fields) => emit("warn", message, fields),
    error: (message, fields) => emit("error", message, fields),
  };
}

/** What may be logged of an unexpected error: its name and message, never the request. */
export function describeError(error: unknown): LogFields {
  if (error instanceof Error) {
    return { error: error.name, errorMessage: error.message, stack: error.stack };
  }
  return { error: String(error) };
}
