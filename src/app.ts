/** The dependencies the handlers reach through the `appKey` context value. */
import type { BoxAccessDeps } from "./domain/box-access";
import type { Clock, CredentialStore } from "./domain/ports";
import type { Logger } from "./log";
import { createBoxStore } from "./storage/box-store";
import { createCredentialStore } from "./storage/credential-store";
import type { Database } from "./storage/database";
import { createEmployeeStore } from "./storage/employee-store";

export interface App extends BoxAccessDeps {
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
    now,
    log,
    healthy: () => database.ping(),
  };
}
