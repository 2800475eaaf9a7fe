/**
 * Counteragent groups: one document per group, scoped by `boxId` (the shard
 * key). `nameKey` (the name as compared, src/domain/counteragent-groups.ts)
 * carries the unique index that makes names unique within a box. Every write
 * sets only the fields it changes: the platform may store fields we do not model.
 */
import { type Db, type Filter, MongoServerError, type UpdateFilter } from "mongodb";
import { groupNameKey } from "../domain/counteragent-groups";
import { duplicateGroupName } from "../domain/errors";
import type { CounteragentGroup } from "../domain/model";
import type { CounteragentGroupStore, GroupState } from "../domain/ports";
import { Collections, IndexNames } from "./collections";

export interface CounteragentGroupDocument {
  boxId: string;
  counteragentGroupId: string;
  name: string;
  /** The name as compared; for a group being deleted, a key of its id, so that the name is free. */
  nameKey: string;
  /** Absent: any department. */
  departmentIds?: string[];
  createdAt: Date;
  /** Present once DeleteCounteragentGroup began. */
  deletingSince?: Date;
}

/** The unique index of names within a box (src/storage/collections.ts). */
export const GROUP_NAME_INDEX = IndexNames.groupName;
/** The order of GetCounteragentGroups. */
export const GROUP_ORDER_INDEX = IndexNames.groupOrder;

/** The fields of a group the operations answer with or decide on. */
const GROUP_PROJECTION = {
  _id: 0,
  boxId: 1,
  counteragentGroupId: 1,
  name: 1,
  departmentIds: 1,
  createdAt: 1,
  deletingSince: 1,
} as const;

/** Not a name key any name can have: names hold no control characters. */
const deletingNameKey = (counteragentGroupId: string) =>
  `\u0000deleting\u0000${counteragentGroupId}`;

/** Offsets past this are past the end of any box (and some engines refuse a 64-bit skip). */
const MAX_SKIP = 2_147_483_647;

const LIVE = { deletingSince: { $exists: false } } as const;

export function createCounteragentGroupStore(db: Db): CounteragentGroupStore {
  const groups = db.collection<CounteragentGroupDocument>(Collections.counteragentGroups);
  /** The groups `filter` selects, in creation order then id (the order index): `limit` after `skip`. */
  const inOrder = async (
    filter: Filter<CounteragentGroupDocument>,
    skip: number,
    limit: number,
  ): Promise<CounteragentGroup[]> => {
    const docs = await groups
      .find(filter, {
        sort: { createdAt: 1, counteragentGroupId: 1 },
        ...(skip > 0 ? { skip } : {}),
        limit,
        hint: GROUP_ORDER_INDEX,
        projection: GROUP_PROJECTION,
      })
      .toArray();
    return docs.map(toGroup);
  };
  return {
    async findGroup(boxId, counteragentGroupId) {
      const doc = await groups.findOne(
        { boxId, counteragentGroupId },
        { projection: GROUP_PROJECTION, hint: IndexNames.groupKey },
      );
      return doc ? toGroup(doc) : null;
    },
    listGroups(boxId, skip, limit) {
      if (skip > MAX_SKIP) return Promise.resolve([]);
      return inOrder({ boxId, ...LIVE }, skip, limit);
    },
    listGroupsAfter(boxId, after, limit) {
      // The keyset (creation time, id) of AIP-158's page tokens: one range on the order index.
      const range: Filter<CounteragentGroupDocument> = after
        ? {
            $or: [
              { createdAt: { $gt: after.createdAt } },
              {
                createdAt: after.createdAt,
                counteragentGroupId: { $gt: after.counteragentGroupId },
              },
            ],
          }
        : {};
      return inOrder({ boxId, ...LIVE, ...range }, 0, limit);
    },
    countGroups(boxId) {
      return groups.countDocuments({ boxId, ...LIVE });
    },
    async insertGroup(group) {
      const doc: CounteragentGroupDocument = {
        boxId: group.boxId,
        counteragentGroupId: group.counteragentGroupId,
        name: group.name,
        nameKey: groupNameKey(group.name),
        createdAt: group.createdAt,
        ...(group.departmentIds === undefined ? {} : { departmentIds: [...group.departmentIds] }),
      };
      await translateDuplicateName(group.name, () => groups.insertOne(doc));
    },
    async updateGroup(boxId, counteragentGroupId, changes, expected) {
      const update: UpdateFilter<CounteragentGroupDocument> = {};
      const set: Partial<CounteragentGroupDocument> = {};
      if (changes.name !== undefined) {
        set.name = changes.name;
        set.nameKey = groupNameKey(changes.name);
      }
      if (changes.departmentIds === null) {
        update.$unset = { departmentIds: "" };
      } else if (changes.departmentIds !== undefined) {
        set.departmentIds = [...changes.departmentIds];
      }
      if (Object.keys(set).length > 0) update.$set = set;
      const filter: Filter<CounteragentGroupDocument> = {
        boxId,
        counteragentGroupId,
        ...LIVE,
        ...(expected ? stateFilter(expected) : {}),
      };
      const result = await translateDuplicateName(changes.name ?? "", () =>
        groups.updateOne(filter, update, { hint: IndexNames.groupKey }),
      );
      // matched, not modified: a change to the values the group already has is still a success.
      return result.matchedCount > 0;
    },
    async markDeleting(boxId, counteragentGroupId, at, expected) {
      const result = await groups.updateOne(
        { boxId, counteragentGroupId, ...LIVE, ...(expected ? stateFilter(expected) : {}) },
        { $set: { deletingSince: at, nameKey: deletingNameKey(counteragentGroupId) } },
        { hint: IndexNames.groupKey },
      );
      return result.modifiedCount > 0;
    },
    async removeGroup(boxId, counteragentGroupId) {
      await groups.deleteOne(
        { boxId, counteragentGroupId, deletingSince: { $exists: true } },
        { hint: IndexNames.groupKey },
      );
    },
  };
}

/**
 * A group that still has `state`'s name and departments: the name as stored
 * (case included), the departments as the same list in the same order, or
 * none at all for any department.
 */
function stateFilter(state: GroupState): Filter<CounteragentGroupDocument> {
  return {
    name: state.name,
    departmentIds:
      state.departmentIds === undefined ? { $exists: false } : { $eq: [...state.departmentIds] },
  };
}

function toGroup(doc: CounteragentGroupDocument): CounteragentGroup {
  return {
    boxId: doc.boxId,
    counteragentGroupId: doc.counteragentGroupId,
    name: doc.name,
    departmentIds: Array.isArray(doc.departmentIds) ? [...doc.departmentIds] : undefined,
    createdAt: new Date(doc.createdAt),
    deletingSince: doc.deletingSince ? new Date(doc.deletingSince) : undefined,
  };
}

/** A duplicate key on the name index is the domain's conflict; the one place 11000 is read. */
async function translateDuplicateName<T>(name: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (
      error instanceof MongoServerError &&
      error.code === 11000 &&
      // MongoDB names the index in keyPattern and the message; the embedded engine in the message only.
      (error.keyPattern?.nameKey !== undefined || error.message.includes(GROUP_NAME_INDEX))
    ) {
      throw duplicateGroupName(name.trim());
    }
    throw error;
  }
}
