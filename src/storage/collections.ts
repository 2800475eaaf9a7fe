/**
 * The collections, their indexes and their shard keys (docs/api.md §7). Every
 * box-scoped document carries `boxId`, the first field of every shard key,
 * and every query names it.
 */
import type { Db, IndexDescription } from "mongodb";

export const Collections = {
  apiClients: "apiClients",
  tokens: "tokens",
  boxes: "boxes",
  employees: "employees",
  counteragentGroups: "counteragentGroups",
  counteragents: "counteragents",
  messages: "messages",
} as const;

/**
 * Index names the code refers to (hints, duplicate-key translation). Lookups
 * and writes on collections with more than one index that could serve them
 * hint the one they mean, so no plan depends on the planner's trial runs.
 */
export const IndexNames = {
  /**
   * GetCounteragentsFromGroup: equality on box, group and status, then one
   * range on `listingKey` (src/storage/listing-key.ts); `counteragentBoxId`
   * last so that the index holds the whole shard key and a sharded page stays
   * covered (a shard's SHARDING_FILTER reads the shard key from the index
   * instead of fetching the document).
   */
  groupListing: "group_listing_key",
  /** A counteragent of a box (unique; the shard key). */
  counteragentKey: "boxId_counteragentBoxId",
  /** A group of a box (unique). */
  groupKey: "boxId_groupId",
  groupName: "boxId_nameKey",
  groupOrder: "boxId_createdAt_groupId",
} as const;

/**
 * The listing index of earlier versions (joinedGroupAt, counteragentBoxId as
 * two fields). No longer created or used; left in place so that instances of
 * the earlier version keep working during a rolling upgrade (docs/operations.md, "Scale on a real MongoDB").
 */
export const RETIRED_INDEXES: Record<string, readonly string[]> = {
  [Collections.counteragents]: ["group_listing"],
};

export const INDEXES: Record<string, IndexDescription[]> = {
  [Collections.tokens]: [{ key: { userId: 1 }, name: "userId" }],
  [Collections.boxes]: [{ key: { boxId: 1 }, name: "boxId", unique: true }],
  [Collections.employees]: [{ key: { boxId: 1, userId: 1 }, name: "boxId_userId", unique: true }],
  [Collections.counteragentGroups]: [
    { key: { boxId: 1, counteragentGroupId: 1 }, name: IndexNames.groupKey, unique: true },
    // Names are unique within a box, compared case-insensitively (src/domain/counteragent-groups.ts).
    { key: { boxId: 1, nameKey: 1 }, name: IndexNames.groupName, unique: true },
    // GetCounteragentGroups: creation order, then id.
    { key: { boxId: 1, createdAt: 1, counteragentGroupId: 1 }, name: IndexNames.groupOrder },
  ],
  [Collections.counteragents]: [
    {
      key: { boxId: 1, counteragentBoxId: 1 },
      name: IndexNames.counteragentKey,
      unique: true,
    },
    {
      key: { boxId: 1, counteragentGroupId: 1, status: 1, listingKey: 1, counteragentBoxId: 1 },
      name: IndexNames.groupListing,
    },
  ],
  [Collections.messages]: [
    { key: { boxId: 1, messageId: 1 }, name: "boxId_messageId", unique: true },
  ],
};

/**
 * The shard key of each collection (docs/api.md §7); collections not listed stay
 * unsharded. Every one starts with `boxId`, so every query and write, which
 * all name the box, is routed to the shard(s) of that box; every unique index
 * of a sharded collection starts with its shard key (checked by a test).
 */
export const SHARD_KEYS: Record<string, Record<string, 1>> = {
  [Collections.employees]: { boxId: 1, userId: 1 },
  [Collections.counteragents]: { boxId: 1, counteragentBoxId: 1 },
  [Collections.messages]: { boxId: 1, messageId: 1 },
  [Collections.counteragentGroups]: { boxId: 1 },
};

/**
 * Creates every index; safe at every start-up: createIndexes is idempotent,
 * and an index whose layout changed gets a new name, so a database made by an
 * earlier version never meets a same-named index with another key (which
 * MongoDB would refuse).
 */
export async function ensureIndexes(db: Db): Promise<void> {
  for (const [collection, indexes] of Object.entries(INDEXES)) {
    await db.collection(collection).createIndexes(indexes);
  }
}
