/** Structured JSON logs, one object per line. Never pass secrets in fields. */
export const LOG_LEVELS = ["debug", "info", "warn", "error", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export type LogFields = Record<string, unknown>;

export interface Logger {
  /** Whether debug lines are written: a caller skips building their fields when not. */
  readonly debugging: boolean;
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

export function createLogger(
  level: LogLevel,
  write: (line: string) => void = createStdoutWriter(),
  /** Fields of the moment (the active span's traceId and spanId), added to warn and error lines. */
  context?: () => LogFields | undefined,
): Logger {
  const threshold = LOG_LEVELS.indexOf(level);
  let second = -1;
  let secondIso = "";
  /** The time as ISO 8601 with milliseconds; the part up to the second made once a second. */
  const time = () => {
    const now = Date.now();
    const s = Math.floor(now / 1000);
    if (s !== second) {
      second = s;
      secondIso = new Date(s * 1000).toISOString().slice(0, 19);
    }
    return `${secondIso}.${String(now % 1000).padStart(3, "0")}Z`;
  };
  const emit = (at: Exclude<LogLevel, "silent">, message: string, fields?: LogFields) => {
    if (LOG_LEVELS.indexOf(at) < threshold) {
      return;
    }
    const extra = context && (at === "error" || at === "warn") ? context() : undefined;
    const merged = extra ? { ...extra, ...fields } : fields;
    if (merged && ("time" in merged || "level" in merged || "msg" in merged)) {
      // A field named like one of ours replaces it, in its place: one key each.
      write(JSON.stringify({ time: time(), level: at, msg: message, ...merged }));
      return;
    }
    // The common case, without copying the fields: ours first, then theirs.
    const rest = merged ? JSON.stringify(merged) : "{}";
    write(
      `{"time":"${time()}","level":"${at}","msg":${JSON.stringify(message)}${rest.length > 2 ? `,${rest.slice(1)}` : "}"}`,
    );
  };
  return {
    debugging: threshold === 0,
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

/**
 * Lines to stdout, gathered for up to `intervalMs` (or `maxBytes`) and
 * written together: stdout is a synchronous pipe or file on Linux, and under
 * load a write per request line, or per turn of the event loop, costs a
 * system call and a wake-up of the reader each. Whatever is pending is
 * written before the process exits (also on process.exit and on a fatal
 * error; only a SIGKILL can lose the last `intervalMs` of lines).
 */
export function createStdoutWriter(
  out: (text: string) => void = (t) => process.stdout.write(t),
  intervalMs = 10,
  maxBytes = 64 * 1024,
) {
  let pending: string[] = [];
  let bytes = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    if (pending.length === 0) return;
    const text = `${pending.join("\n")}\n`;
    pending = [];
    bytes = 0;
    out(text);
  };
  process.on("exit", flush);
  return (line: string) => {
    pending.push(line);
    bytes += line.length;
    if (bytes >= maxBytes) flush();
    else if (timer === undefined) {
      timer = setTimeout(flush, intervalMs);
      // Pending lines never keep the process alive: the exit handler writes them.
      timer.unref();
    }
  };
}
