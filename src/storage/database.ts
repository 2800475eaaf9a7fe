/** Opens the database: the server MONGODB_URI names, or the embedded one. */
import {
  type Db,
  MongoClient,
  MongoNetworkError,
  MongoNotConnectedError,
  MongoServerSelectionError,
  MongoTopologyClosedError,
} from "mongodb";
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
  /** Quick round trip to the server. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  readonly uri: string | undefined;
  readonly name: string;
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  const embedded = options.uri === undefined ? await startEmbeddedServer(options.name) : undefined;
  const uri = options.uri ?? embedded?.uri ?? "";
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 5_000, appName: "docflow-api" });
  try {
    await client.connect();
    const db = client.db(options.name);
    await ensureIndexes(db);
    return {
      db,
      mode: embedded ? "embedded" : "external",
      address: redactUri(uri),
      embeddedPid: embedded?.pid,
      async ping() {
        try {
          await db.command({ ping: 1 });
          return true;
        } catch {
          return false;
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
export function redactUri(uri: string): string {
  return uri.replace(/\/\/[^@/]*@/, "//***@");
}

/** True for driver errors that mean the database cannot be reached. */
export function isDatabaseUnavailable(error: unknown): boolean {
  return (
    error instanceof MongoNetworkError ||
    error instanceof MongoServerSelectionError ||
    error instanceof MongoNotConnectedError ||
    error instanceof MongoTopologyClosedError
  );
}
