/**
 * Counteragents and their groups. A page is a keyset range on the index
 * (boxId, counteragentGroupId, status, joinedGroupAt, counteragentBoxId):
 * equality on the first three, a range after the last position, a limit —
 * never skip/offset.
 */
import type { Db, Filter } from "mongodb";
import type { Counteragent, CounteragentStatus, GroupPosition } from "../domain/model";
import type { CounteragentMembershipStore, CounteragentStore } from "../domain/ports";
import { Collections } from "./collections";
import type { CounteragentGroupDocument } from "./counteragent-group-store";

export interface CounteragentDocument {
  boxId: string;
  counteragentBoxId: string;
  status: CounteragentStatus;
  counteragentGroupId: string;
  joinedGroupAt: Date;
}

export const LISTING_INDEX = "group_listing";

export function createCounteragentStore(db: Db): CounteragentStore & CounteragentMembershipStore {
  const counteragents = db.collection<CounteragentDocument>(Collections.counteragents);
  const groups = db.collection<CounteragentGroupDocument>(Collections.counteragentGroups);
  return {
    async groupExists(boxId, counteragentGroupId) {
      return (await groups.findOne({ boxId, counteragentGroupId })) !== null;
    },
    async listMembers(boxId, counteragentGroupId, status, after, limit): Promise<GroupPosition[]> {
      const docs = await counteragents
        .find(pageFilter(boxId, counteragentGroupId, status, after), {
          sort: { joinedGroupAt: 1, counteragentBoxId: 1 },
          limit,
          projection: { _id: 0, joinedGroupAt: 1, counteragentBoxId: 1 },
          hint: LISTING_INDEX,
        })
        .toArray();
      return docs.map((d) => ({
        joinedGroupAt: new Date(d.joinedGroupAt),
        counteragentBoxId: d.counteragentBoxId,
      }));
    },
    countMembers(boxId, counteragentGroupId, status) {
      return counteragents.countDocuments(
        { boxId, counteragentGroupId, status },
        { hint: LISTING_INDEX },
      );
    },
    async findCounteragent(boxId, counteragentBoxId): Promise<Counteragent | null> {
      const doc = await counteragents.findOne({ boxId, counteragentBoxId });
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
      const result = await counteragents.updateOne(filter, {
        $set: { counteragentGroupId: move.to, joinedGroupAt: move.joinedGroupAt },
      });
      return result.modifiedCount > 0;
    },
    async moveAllMembers(boxId, from, to, joinedGroupAt) {
      await counteragents.updateMany(
        { boxId, counteragentGroupId: from },
        { $set: { counteragentGroupId: to, joinedGroupAt } },
      );
    },
  };
}

/** The members of a group with a status, strictly after a position. Shared with the benchmark's floor. */
export function pageFilter(
  boxId: string,
  counteragentGroupId: string,
  status: CounteragentStatus,
  after: GroupPosition | undefined,
): Filter<CounteragentDocument> {
  const filter: Filter<CounteragentDocument> = { boxId, counteragentGroupId, status };
  if (after) {
    filter.$or = [
      { joinedGroupAt: { $gt: after.joinedGroupAt } },
      { joinedGroupAt: after.joinedGroupAt, counteragentBoxId: { $gt: after.counteragentBoxId } },
    ];
  }
  return filter;
}
