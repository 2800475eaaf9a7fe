/** The dependencies of the handlers (stores, clock, log, health), reached through the `depsKey` context value. */
import type { BearerAuthenticator } from "./auth/bearer-verifier";
import { throwIfCallOver } from "./call-scope";
import type { ServiceAuthAlias } from "./domain/auth";
import type { CounteragentGroupDeps, CounteragentGroupHooks } from "./domain/counteragent-groups";
import type { CounteragentDeps } from "./domain/counteragents";
import type { DeletionMarkDeps, DeletionMarkHooks } from "./domain/deletion-marks";
import { FailureBudget, type FailureBudgetConfig } from "./domain/failure-budget";
import type {
  Clock,
  CounteragentMembershipStore,
  CounteragentStore,
  CredentialStore,
} from "./domain/ports";
import type { Logger } from "./log";
import { createBoxStore } from "./storage/box-store";
import { createCounteragentGroupStore } from "./storage/counteragent-group-store";
import { createCounteragentStore } from "./storage/counteragent-store";
import { createCredentialStore } from "./storage/credential-store";
import type { Database } from "./storage/database";
import { createEmployeeStore } from "./storage/employee-store";
import { guardStore } from "./storage/errors";
import { createMessageStore } from "./storage/message-store";
import { createReadCache, type ReadCacheOptions } from "./storage/read-cache";

export interface Deps extends DeletionMarkDeps, CounteragentDeps, CounteragentGroupDeps {
  readonly counteragents: CounteragentStore & CounteragentMembershipStore;
  readonly credentials: CredentialStore;
  readonly log: Logger;
  /**
   * True when the database answered a call's work within the health timeout
   * just past, or else answers a ping within it (docs/api.md §9).
   */
  readonly healthy: () => Promise<boolean>;
  /** Bearer tokens (docs/api.md §5.1); undefined: off, and a Bearer header is simply not ServiceAuth. */
  readonly bearer?: BearerAuthenticator;
  /** Other spellings of the ServiceAuth header (SERVICE_AUTH_ALIASES, docs/api.md §5); none by default. */
  readonly serviceAuthAliases?: readonly ServiceAuthAlias[];
  /** The failure budget of authentication (docs/security.md); undefined: none. */
  readonly authFailures?: FailureBudget;
}

export interface DepsOptions {
  /** How long a health check waits for the database. */
  readonly healthTimeoutMs: number;
  /** The cache of credentials, employee rights and boxes (docs/operations.md, "Caching"). */
  readonly cache: ReadCacheOptions;
  readonly now?: Clock;
  /** Test hooks of the counteragent-group operations; none in production. */
  readonly groupHooks?: CounteragentGroupHooks;
  /** Test hooks of Delete and Restore; none in production. */
  readonly markHooks?: DeletionMarkHooks;
  /** Bearer tokens; none unless configured. */
  readonly bearer?: BearerAuthenticator;
  /** Other spellings of the ServiceAuth header; none unless configured. */
  readonly serviceAuthAliases?: readonly ServiceAuthAlias[];
  /** The failure budget of authentication; none unless configured. */
  readonly authFailures?: FailureBudgetConfig;
}

export function createDeps(database: Database, log: Logger, options: DepsOptions): Deps {
  const { db } = database;
  // When the database last answered a call's work: readiness asks no ping while that is
  // recent (under load a ping waits behind the calls, in the pool and the server's queue).
  let answeredAt = Number.NEGATIVE_INFINITY;
  const answered = () => {
    answeredAt = performance.now();
  };
  // A call that is over (deadline, client gone) sends nothing more to the database.
  const guard = <T extends object>(store: T) =>
    guardStore(store, { before: throwIfCallOver, answered });
  // Stores whose loads are cached and shared by calls (below): no one call's scope, outages only.
  const watched = <T extends object>(store: T) => guardStore(store, { answered });
  // A cached load is shared by every call that asks meanwhile: it is not the first
  // caller's to cancel (its client leaving must not fail the others). Each caller
  // checks its own call before it asks; the load itself only translates driver errors.
  const cached = <V>(load: (key: string) => Promise<V>) => {
    const read = createReadCache(load, options.cache);
    return (key: string) => {
      throwIfCallOver();
      return read(key);
    };
  };
  const credentials = watched(createCredentialStore(db));
  const boxes = watched(createBoxStore(db));
  const employeeReads = watched(createEmployeeStore(db));
  const employees = guard(createEmployeeStore(db));
  const budget = options.authFailures && new FailureBudget(options.authFailures);
  const rights = cached((key) => {
    const [boxId = "", userId = ""] = key.split("\u0000");
    return employeeReads.findRights(boxId, userId);
  });
  return {
    credentials: {
      findApiClient: cached((keyHash) => credentials.findApiClient(keyHash)),
      findToken: cached((tokenHash) => credentials.findToken(tokenHash)),
    },
    boxes: { findBox: cached((boxId) => boxes.findBox(boxId)) },
    employees: {
      ...employees,
      findRights: (boxId, userId) => rights(`${boxId}\u0000${userId}`),
    },
    messages: guard(createMessageStore(db)),
    counteragents: guard(createCounteragentStore(db)),
    counteragentGroups: guard(createCounteragentGroupStore(db)),
    groupHooks: options.groupHooks,
    markHooks: options.markHooks,
    bearer: options.bearer,
    serviceAuthAliases: options.serviceAuthAliases,
    authFailures: budget && !budget.off ? budget : undefined,
    now: options.now ?? (() => new Date()),
    log,
    healthy: () =>
      performance.now() - answeredAt < options.healthTimeoutMs
        ? Promise.resolve(true)
        : database.ping(options.healthTimeoutMs),
  };
}
