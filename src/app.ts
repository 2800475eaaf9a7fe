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
import { createMessageStore } from "./storage/message-store";

export interface App extends DeletionMarkDeps, CounteragentDeps {
  readonly credentials: CredentialStore;
  readonly log: Logger;
  /** True when the database answers. */
  readonly healthy: () => Promise<boolean>;
}

export function createApp(database: Database, log: Logger, now: Clock = () => new Date()): App {
  return {
    credentials: createCredentialStore(database.db),
    boxes: createBoxStore(database.db),
    employees: createEmployeeStore(database.db),
    messages: createMessageStore(database.db),
    counteragents: createCounteragentStore(database.db),
    now,
    log,
    healthy: () => database.ping(),
  };
}
