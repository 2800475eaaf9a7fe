/**
 * Counteragents and their groups. A page is a keyset range on the index
 * (boxId, counteragentGroupId, status, joinedGroupAt, counteragentBoxId):
 * equality on the first three, a range after the last position, a limit —
 * never skip/offset.
 */
import type { Db, Filter } from "mongodb";
import type { CounteragentStatus, GroupPosition } from "../domain/model";
import type { CounteragentStore } from "../domain/ports";
import { Collections } from "./collections";

export interface CounteragentDocument {
  boxId: string;
  counteragentBoxId: string;
  status: CounteragentStatus;
  counteragentGroupId: string;
  joinedGroupAt: Date;
}

export interface CounteragentGroupDocument {
  boxId: string;
  counteragentGroupId: string;
  name: string;
}

export const LISTING_INDEX = "group_listing";

export function createCounteragentStore(db: Db): CounteragentStore {
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
