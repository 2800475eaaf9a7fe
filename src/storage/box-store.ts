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

export function createBoxStore(db: Db): BoxStore {
  const boxes = db.collection<BoxDocument>(Collections.boxes);
  return {
    async findBox(boxId: string): Promise<Box | null> {
      const doc = await boxes.findOne({ _id: boxId, boxId });
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
