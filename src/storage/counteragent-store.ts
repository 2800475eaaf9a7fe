/**
 * Counteragents and their groups. A page is one range on the listing index
 * (boxId, counteragentGroupId, status, listingKey, counteragentBoxId): equality on the first
 * three, `listingKey > position` (src/storage/listing-key.ts), sorted on the
 * index, `limit count`, only the key projected — one bounded, covered index
 * scan whatever plan the server picks. Never skip/offset.
 */
import type { AnyBulkWriteOperation, Collection, Db, Filter } from "mongodb";
import type { Counteragent, CounteragentStatus, GroupPosition } from "../domain/model";
import type { CounteragentMembershipStore, CounteragentStore } from "../domain/ports";
import { Collections, IndexNames } from "./collections";
import type { CounteragentGroupDocument } from "./counteragent-group-store";
import { listingKeyOf, listingKeyOfRaw, positionOfListingKey } from "./listing-key";

export interface CounteragentDocument {
  boxId: string;
  counteragentBoxId: string;
  status: CounteragentStatus;
  counteragentGroupId: string;
  joinedGroupAt: Date;
  /**
   * (joinedGroupAt, counteragentBoxId) as one sortable string; absent on
   * members written by other parts of the platform until a walk of their
   * group gives them one.
   */
  listingKey?: string | null;
}

export const LISTING_INDEX = IndexNames.groupListing;

/** Members given a listing key, or moved by a group deletion, per bulk write. */
const BATCH = 1_000;

/** The fields the membership operations read. */
const COUNTERAGENT_PROJECTION = {
  _id: 0,
  boxId: 1,
  counteragentBoxId: 1,
  status: 1,
  counteragentGroupId: 1,
  joinedGroupAt: 1,
} as const;

export function createCounteragentStore(db: Db): CounteragentStore & CounteragentMembershipStore {
  const counteragents = db.collection<CounteragentDocument>(Collections.counteragents);
  const groups = db.collection<CounteragentGroupDocument>(Collections.counteragentGroups);
  const page = (
    boxId: string,
    counteragentGroupId: string,
    status: CounteragentStatus,
    after: GroupPosition | undefined,
    limit: number,
  ) => pageKeys(counteragents, pageFilter(boxId, counteragentGroupId, status, after), limit);
  return {
    async groupExists(boxId, counteragentGroupId) {
      const found = await groups.findOne(
        { boxId, counteragentGroupId },
        { projection: { _id: 1 } },
      );
      return found !== null;
    },
    async listMembers(boxId, counteragentGroupId, status, after, limit): Promise<GroupPosition[]> {
      let keys = await page(boxId, counteragentGroupId, status, after, limit);
      // Members without a listing key sort first: a first page shows whether the group has any.
      if (after === undefined && keys.length > 0 && keys[0] == null) {
        await giveListingKeys(counteragents, { boxId, counteragentGroupId, status });
        keys = await page(boxId, counteragentGroupId, status, after, limit);
      }
      return keys.flatMap((key) => positionOfListingKey(key) ?? []);
    },
    countMembers(boxId, counteragentGroupId, status) {
      return counteragents.countDocuments(
        { boxId, counteragentGroupId, status },
        { hint: LISTING_INDEX },
      );
    },
    async ensureListingKeys(boxId, counteragentGroupId, status) {
      const keys = await page(boxId, counteragentGroupId, status, undefined, 1);
      if (keys.length > 0 && keys[0] == null) {
        await giveListingKeys(counteragents, { boxId, counteragentGroupId, status });
      }
    },
    async findCounteragent(boxId, counteragentBoxId): Promise<Counteragent | null> {
      const doc = await counteragents.findOne(
        { boxId, counteragentBoxId },
        { projection: COUNTERAGENT_PROJECTION, hint: IndexNames.counteragentKey },
      );
      return doc
        ? {
            boxId: doc.boxId,
            counteragentBoxId: doc.counteragentBoxId,
            status: doc.status,
            counteragentGroupId: doc.counteragentGroupId,
            joinedGroupAt: new Date(doc.joinedGroupAt),
          }
        : null;
    },
    async moveCounteragent(boxId, counteragentBoxId, move) {
      // The filter carries the precondition: a conditional single-document update.
      const filter: Filter<CounteragentDocument> = {
        boxId,
        counteragentBoxId,
        counteragentGroupId: move.from,
        ...(move.status === undefined ? {} : { status: move.status }),
      };
      const result = await counteragents.updateOne(
        filter,
        { $set: membership(counteragentBoxId, move.to, move.joinedGroupAt) },
        { hint: IndexNames.counteragentKey },
      );
      return result.modifiedCount > 0;
    },
    async moveAllMembers(boxId, from, to, joinedGroupAt) {
      // Each member's listing key holds its own box id, so the move is one
      // conditional update per member (no update pipelines on the embedded
      // engine), in bulk writes of BATCH, until the group has no member left.
      for (;;) {
        const batch = await counteragents
          .find(
            { boxId, counteragentGroupId: from },
            { projection: { _id: 0, counteragentBoxId: 1 }, limit: BATCH, hint: LISTING_INDEX },
          )
          .toArray();
        if (batch.length === 0) return;
        await counteragents.bulkWrite(
          batch.map(
            ({ counteragentBoxId }): AnyBulkWriteOperation<CounteragentDocument> => ({
              updateOne: {
                filter: { boxId, counteragentBoxId, counteragentGroupId: from },
                update: { $set: membership(counteragentBoxId, to, joinedGroupAt) },
                hint: IndexNames.counteragentKey,
              },
            }),
          ),
          { ordered: false },
        );
      }
    },
  };
}

/** What a move sets: the group, the join time and the listing key that follows from them. */
function membership(counteragentBoxId: string, counteragentGroupId: string, joinedGroupAt: Date) {
  return {
    counteragentGroupId,
    joinedGroupAt,
    listingKey: listingKeyOf({ joinedGroupAt, counteragentBoxId }),
  };
}

/** The members of a group with a status, strictly after a position. Shared with the benchmark's floor. */
export function pageFilter(
  boxId: string,
  counteragentGroupId: string,
  status: CounteragentStatus,
  after: GroupPosition | undefined,
): Filter<CounteragentDocument> {
  return after
    ? { boxId, counteragentGroupId, status, listingKey: { $gt: listingKeyOf(after) } }
    : { boxId, counteragentGroupId, status };
}

/**
 * The listing keys of one page, in order (null or undefined for a member
 * without one). Documents come back as raw BSON and only the key is read
 * (listingKeyOfRaw): the command sent is the same. Shared with the
 * benchmark's floor.
 */
export async function pageKeys(
  counteragents: Collection<CounteragentDocument>,
  filter: Filter<CounteragentDocument>,
  limit: number,
): Promise<unknown[]> {
  const docs = await counteragents.find(filter, { ...pageOptions(limit), raw: true }).toArray();
  // With `raw`, the driver hands each document over as its BSON bytes.
  return (docs as unknown as Uint8Array[]).map(listingKeyOfRaw);
}

/** Sorted on the index, only the key projected (covered: no document is fetched). */
export function pageOptions(limit: number) {
  return {
    sort: { listingKey: 1 },
    limit,
    projection: { _id: 0, listingKey: 1 },
    hint: LISTING_INDEX,
  } as const;
}

/**
 * Gives a listing key to every member that lacks one (written by another part
 * of the platform, or by an earlier version of this service): in `scope`, or
 * in the whole collection. Each write is conditional on the member still
 * being where it was read, so it never overwrites a concurrent move.
 * Idempotent; returns how many members it gave a key.
 */
export async function giveListingKeys(
  counteragents: Collection<CounteragentDocument>,
  scope?: { boxId: string; counteragentGroupId: string; status: CounteragentStatus },
): Promise<number> {
  let given = 0;
  const cursor = counteragents.find(
    { ...scope, listingKey: null },
    {
      projection: {
        _id: 0,
        boxId: 1,
        counteragentBoxId: 1,
        counteragentGroupId: 1,
        joinedGroupAt: 1,
      },
      ...(scope ? { hint: LISTING_INDEX } : {}),
    },
  );
  let ops: AnyBulkWriteOperation<CounteragentDocument>[] = [];
  const flush = async () => {
    if (ops.length === 0) return;
    const result = await counteragents.bulkWrite(ops, { ordered: false });
    given += result.modifiedCount;
    ops = [];
  };
  for await (const doc of cursor) {
    const joinedGroupAt = doc.joinedGroupAt ?? null;
    ops.push({
      updateOne: {
        filter: {
          boxId: doc.boxId,
          counteragentBoxId: doc.counteragentBoxId,
          counteragentGroupId: doc.counteragentGroupId,
          joinedGroupAt,
          listingKey: null,
        },
        update: {
          $set: {
            listingKey: listingKeyOf({
              joinedGroupAt: new Date(joinedGroupAt ?? Number.NaN),
              counteragentBoxId: doc.counteragentBoxId,
            }),
          },
        },
        hint: IndexNames.counteragentKey,
      },
    });
    if (ops.length >= BATCH) await flush();
  }
  await flush();
  return given;
}
