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
import { DEFAULT_TIMEOUTS, loadConfig } from "../../config";
import { createDeps } from "../../deps";
import { authenticate } from "../../domain/auth";
import { getCounteragentsFromGroup } from "../../domain/counteragents";
import { DomainError } from "../../domain/errors";
import { getSubscriptions, updateSubscriptions } from "../../domain/subscriptions";
import { createLogger } from "../../log";
import { openDatabase } from "../../storage/database";
import { DOMAIN_ERRORS } from "../../wire/errors";
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
  /** A refusal as the floors answer it: the status of the service's one error table. */
  const refused = (error: unknown): never => {
    if (error instanceof DomainError) {
      throw new FloorError(DOMAIN_ERRORS[error.kind].httpStatus, error.message);
    }
    throw error;
  };

  return {
    async getGroupPage(authorization, boxId, counteragentGroupId, count) {
      try {
        const page = await getCounteragentsFromGroup(deps, await caller(authorization), {
          boxId,
          counteragentGroupId,
          count,
        });
        return {
          ids: page.counteragentBoxIds,
          totalCount: page.totalCount,
          afterIndexKey: page.afterIndexKey,
        };
      } catch (error) {
        return refused(error);
      }
    },
    async getSubscriptions(authorization, boxId, userId) {
      try {
        return await getSubscriptions(deps, await caller(authorization), { boxId, userId });
      } catch (error) {
        return refused(error);
      }
    },
    async updateSubscriptions(authorization, boxId, userId, changes) {
      try {
        return await updateSubscriptions(deps, await caller(authorization), {
          boxId,
          userId,
          changes: Object.entries(changes).map(([id, isSubscribed]) => ({ id, isSubscribed })),
        });
      } catch (error) {
        return refused(error);
      }
    },
    commands: () => commands,
    close: () => database.close(),
  };
}
