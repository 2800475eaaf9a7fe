/** Boxes and their department trees (small enough to live in the box document). */
import type { Db } from "mongodb";
import type { Box, Department } from "../domain/model";
import type { BoxStore } from "../domain/ports";
import { Collections } from "./collections";

export interface BoxDocument {
  _id: string; // = boxId
  boxId: string;
  organizationName: string;
  apiSubscriptionEndsAt: Date | null;
  departments: Department[];
}

/** Only what the access checks read: the box document may hold much more (organization details). */
const BOX_PROJECTION = {
  _id: 0,
  boxId: 1,
  organizationName: 1,
  apiSubscriptionEndsAt: 1,
  "departments.departmentId": 1,
  "departments.parentDepartmentId": 1,
} as const;

export function createBoxStore(db: Db): BoxStore {
  const boxes = db.collection<BoxDocument>(Collections.boxes);
  return {
    async findBox(boxId: string): Promise<Box | null> {
      const doc = await boxes.findOne({ _id: boxId, boxId }, { projection: BOX_PROJECTION });
      if (!doc) {
        return null;
      }
      return {
        boxId: doc.boxId,
        organizationName: doc.organizationName,
        apiSubscriptionEndsAt: doc.apiSubscriptionEndsAt
          ? new Date(doc.apiSubscriptionEndsAt)
          : null,
        departments: (doc.departments ?? []).map((d) => ({
          departmentId: d.departmentId,
          parentDepartmentId: d.parentDepartmentId,
        })),
      };
    },
  };
}
