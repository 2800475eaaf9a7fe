/**
 * `npm run backfill:listing-keys`: gives a listing key to every counteragent
 * of the MongoDB at MONGODB_URI that lacks one (written by an earlier version
 * of the service, or by another part of the platform). Optional: the first
 * page of a walk does the same for its own group. Idempotent; safe while the
 * service runs (each write is conditional on the member not having moved).
 */
import { loadConfig } from "../src/config";
import { Collections } from "../src/storage/collections";
import { type CounteragentDocument, giveListingKeys } from "../src/storage/counteragent-store";
import { openDatabase } from "../src/storage/database";
import { commandLine } from "./cli";

const USAGE = `usage: npm run backfill:listing-keys

Gives a listing key to every counteragent of the MongoDB at MONGODB_URI
(database MONGODB_DB) that lacks one. Optional (the first page of a walk does
the same for its own group), idempotent, safe while the service runs.`;

async function backfill(): Promise<number> {
  commandLine({ text: USAGE });
  const config = loadConfig();
  if (config.mongodbUri === undefined) {
    process.stderr.write("MONGODB_URI must name the database to backfill.\n");
    return 2;
  }
  const database = await openDatabase({
    uri: config.mongodbUri,
    name: config.mongodbDatabase,
    operationTimeoutMs: config.timeouts.databaseMs,
  });
  try {
    const given = await giveListingKeys(
      database.db.collection<CounteragentDocument>(Collections.counteragents),
    );
    process.stdout.write(
      `gave a listing key to ${given} counteragents in ${database.address} (database ${config.mongodbDatabase})\n`,
    );
    return 0;
  } finally {
    await database.close();
  }
}

backfill().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
