/**
 * A database for one test file: the server MONGODB_URI names (a fresh,
 * uniquely named database on it), or an embedded server of its own.
 */
import { randomBytes } from "node:crypto";
import { MongoClient } from "mongodb";
import { startEmbeddedServer } from "../../src/storage/embedded-server";

export interface TestDatabase {
  readonly uri: string;
  readonly name: string;
  close(): Promise<void>;
}

export async function startTestDatabase(): Promise<TestDatabase> {
  const name = `docflow_test_${randomBytes(6).toString("hex")}`;
  const external = process.env.MONGODB_URI;
  if (external) {
    return {
      uri: external,
      name,
      async close() {
        const client = new MongoClient(external);
        try {
          await client.db(name).dropDatabase();
        } finally {
          await client.close();
        }
      },
    };
  }
  const server = await startEmbeddedServer(name);
  return { uri: server.uri, name, close: () => server.stop() };
}
