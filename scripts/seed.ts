/** `npm run seed -- <file.json>`: checks a fixture and writes it to the MongoDB at MONGODB_URI. */
import { loadConfig } from "../src/config";
import { FixtureError } from "../src/fixtures/fixture";
import { LOAD_ROUND_TRIP_MS, loadFixtureFile } from "../src/fixtures/load";
import { openDatabase } from "../src/storage/database";
import { commandLine } from "./cli";

const USAGE = `usage: npm run seed -- <fixture.json>

Checks a fixture file (the format of docs/configuration.md, "Fixtures") and
writes it to the MongoDB at MONGODB_URI (database MONGODB_DB, default
docflow). A fixture that breaks a rule changes nothing. To load a fixture
into the embedded database instead, start the service with SEED_FILE=<file>.`;

async function seed(): Promise<number> {
  const [file] = commandLine({ text: USAGE });
  if (!file) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const config = loadConfig();
  if (config.mongodbUri === undefined) {
    process.stderr.write(
      "MONGODB_URI must name the database to seed: the embedded database lives only inside `npm start` " +
        "(start it with SEED_FILE=<file> instead).\n",
    );
    return 2;
  }
  const database = await openDatabase({
    uri: config.mongodbUri,
    name: config.mongodbDatabase,
    operationTimeoutMs: config.timeouts.databaseMs,
  });
  try {
    await database.withLongOperations(LOAD_ROUND_TRIP_MS, (db) => loadFixtureFile(db, file));
    process.stdout.write(
      `loaded ${file} into ${database.address} (database ${config.mongodbDatabase})\n`,
    );
    return 0;
  } catch (error) {
    if (error instanceof FixtureError) {
      process.stderr.write(`fixture rejected, nothing written: ${error.message}\n`);
      return 1;
    }
    throw error;
  } finally {
    await database.close();
  }
}

seed().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(
      `seed failed: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(1);
  },
);
