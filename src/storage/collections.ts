/**
 * The collections and their indexes. Every box-scoped document carries
 * `boxId`, the shard key, and every query names it.
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

const INDEXES: Record<string, IndexDescription[]> = {
  [Collections.tokens]: [{ key: { userId: 1 }, name: "userId" }],
  [Collections.boxes]: [{ key: { boxId: 1 }, name: "boxId", unique: true }],
  [Collections.employees]: [{ key: { boxId: 1, userId: 1 }, name: "boxId_userId", unique: true }],
  [Collections.counteragentGroups]: [
    { key: { boxId: 1, counteragentGroupId: 1 }, name: "boxId_groupId", unique: true },
    // Names are unique within a box, compared case-insensitively (src/domain/counteragent-groups.ts).
    { key: { boxId: 1, nameKey: 1 }, name: "boxId_nameKey", unique: true },
    // GetCounteragentGroups: creation order, then id.
    { key: { boxId: 1, createdAt: 1, counteragentGroupId: 1 }, name: "boxId_createdAt_groupId" },
  ],
  [Collections.counteragents]: [
    { key: { boxId: 1, counteragentBoxId: 1 }, name: "boxId_counteragentBoxId", unique: true },
    {
      key: { boxId: 1, counteragentGroupId: 1, status: 1, joinedGroupAt: 1, counteragentBoxId: 1 },
      name: "group_listing",
    },
  ],
  [Collections.messages]: [
    { key: { boxId: 1, messageId: 1 }, name: "boxId_messageId", unique: true },
  ],
};

/** Creates every index; safe to run at every start-up (createIndexes is idempotent). */
export async function ensureIndexes(db: Db): Promise<void> {
  for (const [collection, indexes] of Object.entries(INDEXES)) {
    await db.collection(collection).createIndexes(indexes);
  }
}
