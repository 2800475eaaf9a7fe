/** The dependencies the handlers reach through the `appKey` context value. */
import type { CounteragentDeps } from "./domain/counteragents";
import type { DeletionMarkDeps } from "./domain/deletion-marks";
import type { Clock, CredentialStore } from "./domain/ports";
import type { Logger } from "./log";
import { createBoxStore } from "./storage/box-store";
import { createCounteragentStore } from "./storage/counteragent-store";
import { createCredentialStore } from "./storage/credential-store";
import type { Database } from "./storage/database";
import { createEmployeeStore } from "./storage/employee-store";
import { guardStore } from "./storage/errors";
import { createMessageStore } from "./storage/message-store";

export interface App extends DeletionMarkDeps, CounteragentDeps {
  readonly credentials: CredentialStore;
  readonly log: Logger;
  /** True when the database answers within the health timeout. */
  readonly healthy: () => Promise<boolean>;
}

export interface AppOptions {
  /** How long a health check waits for the database. */
  readonly healthTimeoutMs: number;
  readonly now?: Clock;
}

export function createApp(database: Database, log: Logger, options: AppOptions): App {
  const { db } = database;
  return {
    credentials: guardStore(createCredentialStore(db)),
    boxes: guardStore(createBoxStore(db)),
    employees: guardStore(createEmployeeStore(db)),
    messages: guardStore(createMessageStore(db)),
    counteragents: guardStore(createCounteragentStore(db)),
    now: options.now ?? (() => new Date()),
    log,
    healthy: () => database.ping(options.healthTimeoutMs),
  };
}
