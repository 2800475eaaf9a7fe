/**
 * The tight baseline's work per call: the service's own domain functions on
 * the service's own stores and read cache (src/deps.ts), so that it makes
 * exactly the database calls the service makes, with the same caching rules
 * (credentials, rights and boxes reused for AUTH_CACHE_TTL_S; the page as one
 * range on the listing key; the total counted on a walk's first page; the
 * group looked up only when a page is empty), by construction rather than by
 * imitation. What it leaves out is everything between the socket and the
 * domain call: the front door, the protocol handlers, the interceptors, the
 * access log, metrics and tracing. That difference is the pipeline's cost.
 */
import { DEFAULT_TIMEOUTS, loadConfig } from "../src/config";
import { createDeps } from "../src/deps";
import { authenticate } from "../src/domain/auth";
import { getCounteragentsFromGroup } from "../src/domain/counteragents";
import { DomainError } from "../src/domain/errors";
import { getSubscriptions, updateSubscriptions } from "../src/domain/subscriptions";
import { createLogger } from "../src/log";
import { openDatabase } from "../src/storage/database";
import { DOMAIN_ERRORS } from "../src/wire/errors";
import { countsCommand, FloorError, type FloorStore } from "./floor-store";

export async function openTightStore(uri: string, name: string): Promise<FloorStore> {
  let commands = 0;
  const database = await openDatabase({
    uri,
    name,
    operationTimeoutMs: DEFAULT_TIMEOUTS.databaseMs,
    onCommand: (event) => {
      if (countsCommand(event)) commands++;
    },
  });
  const config = loadConfig({ ...process.env, MONGODB_URI: uri, MONGODB_DB: name });
  const deps = createDeps(database, createLogger("silent"), {
    healthTimeoutMs: config.timeouts.healthMs,
    cache: { ttlMs: config.authCacheTtlMs, maxEntries: config.authCacheMaxEntries },
  });
  const caller = (authorization: string | undefined) =>
    authenticate(authorization, deps.credentials, deps.now);
  /** Runs a call; a refusal becomes what the floors answer: the status of the service's one error table. */
  const answered = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      if (error instanceof DomainError) {
        throw new FloorError(DOMAIN_ERRORS[error.kind].httpStatus, error.message);
      }
      throw error;
    }
  };

  return {
    getGroupPage: (authorization, boxId, counteragentGroupId, count) =>
      answered(async () => {
        const page = await getCounteragentsFromGroup(deps, await caller(authorization), {
          boxId,
          counteragentGroupId,
          count,
        });
        return {
          ids: page.counteragentBoxIds,
          totalCount: page.totalCount,
          afterIndexKey: page.afterIndexKey,
          nextPageToken: page.nextPageToken,
        };
      }),
    getSubscriptions: (authorization, boxId, userId) =>
      answered(async () => getSubscriptions(deps, await caller(authorization), { boxId, userId })),
    updateSubscriptions: (authorization, boxId, userId, changes) =>
      answered(async () =>
        updateSubscriptions(deps, await caller(authorization), {
          boxId,
          userId,
          changes: Object.entries(changes).map(([id, isSubscribed]) => ({ id, isSubscribed })),
        }),
      ),
    commands: () => commands,
    close: () => database.close(),
  };
}
