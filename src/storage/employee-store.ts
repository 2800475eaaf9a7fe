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

const EMPLOYEE_PROJECTION = { ...RIGHTS_PROJECTION, subscriptions: 1 } as const;

function toEmployee(
  doc: Partial<EmployeeDocument> & Omit<EmployeeDocument, "subscriptions">,
): Employee {
  return { ...toRights(doc), subscriptions: { ...(doc.subscriptions ?? {}) } };
}

export function createEmployeeStore(db: Db): EmployeeStore {
  const employees = db.collection<EmployeeDocument>(Collections.employees);
  return {
    async findRights(boxId, userId) {
      const doc = await employees.findOne({ boxId, userId }, { projection: RIGHTS_PROJECTION });
      return doc ? toRights(doc) : null;
    },
    async findEmployee(boxId: string, userId: string): Promise<Employee | null> {
      const doc = await employees.findOne({ boxId, userId }, { projection: EMPLOYEE_PROJECTION });
      return doc ? toEmployee(doc) : null;
    },
    async setSubscriptions(boxId, userId, changes): Promise<Employee | null> {
      // One $set of dotted paths: a single-document atomic update, so concurrent
      // updates of different Ids never lose one another. The document comes back
      // as this update left it, in the same round trip (findAndModify). The
      // embedded engine runs it as find, update, find again, not atomically: the
      // answer may then show a concurrent change made after this one, as a read
      // after the write would; nothing is lost either way, as the $set itself
      // is atomic there too (docs/performance.md, "Round trips per call").
      const set: Record<string, boolean> = {};
      for (const [id, value] of Object.entries(changes)) {
        set[`subscriptions.${id}`] = value;
      }
      const doc = await employees.findOneAndUpdate(
        { boxId, userId },
        { $set: set },
        { returnDocument: "after", projection: EMPLOYEE_PROJECTION },
      );
      return doc ? toEmployee(doc) : null;
    },
  };
}
