/** Opens the database: the server MONGODB_URI names, or the embedded one. */
import { type CommandStartedEvent, type Db, MongoClient } from "mongodb";
import { ensureIndexes } from "./collections";
import { startEmbeddedServer } from "./embedded-server";

export interface Database {
  readonly db: Db;
  /** "embedded" when the service started its own in-memory server. */
  readonly mode: "embedded" | "external";
  /** The server address without credentials, for logs. */
  readonly address: string;
  /** PID of the embedded server, if any. */
  readonly embeddedPid: number | undefined;
  /** A round trip to the server: false when it fails or takes longer than `timeoutMs`. */
  ping(timeoutMs: number): Promise<boolean>;
  /**
   * Runs `work` on a client of its own whose round trips may each take up to
   * `timeoutMs`: bulk work (a fixture load) that one call's limit,
   * `operationTimeoutMs`, must not cut short. The client is closed after.
   */
  withLongOperations<T>(timeoutMs: number, work: (db: Db) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  readonly uri: string | undefined;
  readonly name: string;
  /**
   * Longest wait for one step of an operation: server selection, the pool's
   * checkout, a new connection, and every socket read. A stalled server gives
   * an error after this time (a retried read after about three), never a hang.
   */
  readonly operationTimeoutMs: number;
  /** Called with every command the driver sends (command monitoring); tests count round trips with it. */
  readonly onCommand?: (event: CommandStartedEvent) => void;
  /** Tracing: watches the client's commands (command monitoring is on only then). */
  readonly monitor?: (client: MongoClient) => void;
}

/**
 * The driver's timeouts, each MONGODB_TIMEOUT_MS (`wait`) unless the URI
 * sets it: an operator's explicit `serverSelectionTimeoutMS=…` (or
 * `connectTimeoutMS`, `socketTimeoutMS`, `waitQueueTimeoutMS`) in
 * MONGODB_URI is honoured, as the driver's documentation promises. Options
 * given to the client would override the URI's; these are given only when
 * the URI is silent.
 */
export function timeoutOptions(
  uri: string,
  wait: number,
  socketTimeoutMS: number,
): Partial<
  Record<
    "serverSelectionTimeoutMS" | "connectTimeoutMS" | "socketTimeoutMS" | "waitQueueTimeoutMS",
    number
  >
> {
  const query = uri.includes("?") ? uri.slice(uri.indexOf("?") + 1) : "";
  const inUri = new Set([...new URLSearchParams(query).keys()].map((k) => k.toLowerCase()));
  const ours = {
    serverSelectionTimeoutMS: wait,
    connectTimeoutMS: wait,
    socketTimeoutMS,
    // The pool's checkout too: with the server stalled, new connections hang in their
    // handshake two at a time (maxConnecting), and every other call would wait its turn.
    waitQueueTimeoutMS: wait,
  };
  return Object.fromEntries(
    Object.entries(ours).filter(([name]) => !inUri.has(name.toLowerCase())),
  );
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  const embedded = options.uri === undefined ? await startEmbeddedServer(options.name) : undefined;
  const uri = options.uri ?? embedded?.uri ?? "";
  const wait = options.operationTimeoutMs;
  const clientFor = (socketTimeoutMS: number) =>
    new MongoClient(uri, {
      ...timeoutOptions(uri, wait, socketTimeoutMS),
      appName: "docflow-api",
      monitorCommands: options.onCommand !== undefined || options.monitor !== undefined,
    });
  const client = clientFor(wait);
  if (options.onCommand) client.on("commandStarted", options.onCommand);
  options.monitor?.(client);
  try {
    await client.connect();
    const db = client.db(options.name);
    await ensureIndexes(db);
    return {
      db,
      mode: embedded ? "embedded" : "external",
      address: redactUri(uri),
      embeddedPid: embedded?.pid,
      async ping(timeoutMs) {
        try {
          await db.command({ ping: 1 }, { signal: AbortSignal.timeout(timeoutMs) });
          return true;
        } catch {
          return false;
        }
      },
      async withLongOperations(timeoutMs, work) {
        const long = clientFor(timeoutMs);
        if (options.onCommand) long.on("commandStarted", options.onCommand);
        try {
          await long.connect();
          return await work(long.db(options.name));
        } finally {
          await long.close();
        }
      },
      async close() {
        await client.close();
        await embedded?.stop();
      },
    };
  } catch (error) {
    await client.close().catch(() => undefined);
    await embedded?.stop();
    throw error;
  }
}

/** Drops user name and password from a connection string. */
function redactUri(uri: string): string {
  return uri.replace(/\/\/[^@/]*@/, "//***@");
}
