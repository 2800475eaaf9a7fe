/** Employees of boxes: rights and e-mail notification subscriptions. */
import type { Db } from "mongodb";
import type { DocumentAccessLevel, Employee, EmployeeRights } from "../domain/model";
import type { EmployeeStore } from "../domain/ports";
import { Collections } from "./collections";

export interface EmployeeDocument {
  boxId: string;
  userId: string;
  isAdministrator: boolean;
  canManageCounteragents: boolean;
  canDeleteRestoreDocuments: boolean;
  documentAccessLevel: DocumentAccessLevel;
  userDepartmentId: string;
  selectedDepartmentIds: string[];
  /** Only the subscriptions ever set. */
  subscriptions: Record<string, boolean>;
}

/** Only the fields the access checks read. */
const RIGHTS_PROJECTION = {
  _id: 0,
  boxId: 1,
  userId: 1,
  isAdministrator: 1,
  canManageCounteragents: 1,
  canDeleteRestoreDocuments: 1,
  documentAccessLevel: 1,
  userDepartmentId: 1,
  selectedDepartmentIds: 1,
} as const;

function toRights(doc: Omit<EmployeeDocument, "subscriptions">): EmployeeRights {
  return {
    boxId: doc.boxId,
    userId: doc.userId,
    isAdministrator: doc.isAdministrator === true,
    canManageCounteragents: doc.canManageCounteragents === true,
    canDeleteRestoreDocuments: doc.canDeleteRestoreDocuments === true,
    documentAccessLevel: doc.documentAccessLevel,
    userDepartmentId: doc.userDepartmentId,
    selectedDepartmentIds: doc.selectedDepartmentIds ?? [],
  };
}

export function createEmployeeStore(db: Db): EmployeeStore {
  const employees = db.collection<EmployeeDocument>(Collections.employees);
  return {
    async findRights(boxId, userId) {
      const doc = await employees.findOne({ boxId, userId }, { projection: RIGHTS_PROJECTION });
      return doc ? toRights(doc) : null;
    },
    async findEmployee(boxId: string, userId: string): Promise<Employee | null> {
      const doc = await employees.findOne(
        { boxId, userId },
        { projection: { ...RIGHTS_PROJECTION, subscriptions: 1 } },
      );
      if (!doc) {
        return null;
      }
      return { ...toRights(doc), subscriptions: { ...(doc.subscriptions ?? {}) } };
    },
    async setSubscriptions(boxId, userId, changes): Promise<boolean> {
      // One $set of dotted paths: a single-document atomic update, so concurrent
      // updates of different Ids never lose one another.
      const set: Record<string, boolean> = {};
      for (const [id, value] of Object.entries(changes)) {
        set[`subscriptions.${id}`] = value;
      }
      const result = await employees.updateOne({ boxId, userId }, { $set: set });
      return result.matchedCount > 0;
    },
  };
}
