/** What the domain needs from storage. Implemented in `src/storage`. */
import type {
  AccessToken,
  ApiClient,
  Box,
  CounteragentStatus,
  DeletionMarks,
  DocflowMessage,
  Employee,
  EmployeeRights,
  GroupPosition,
} from "./model";

export interface CredentialStore {
  /** The API client whose key hashes to `keyHash`. */
  findApiClient(keyHash: string): Promise<ApiClient | null>;
  /** The access token that hashes to `tokenHash`. */
  findToken(tokenHash: string): Promise<AccessToken | null>;
}

export interface BoxStore {
  findBox(boxId: string): Promise<Box | null>;
}

export interface EmployeeStore {
  /** The employee's rights; may be served from a short-lived cache (README "Caching"). */
  findRights(boxId: string, userId: string): Promise<EmployeeRights | null>;
  /** The whole employee record, subscriptions included, as stored now. */
  findEmployee(boxId: string, userId: string): Promise<Employee | null>;
  /**
   * Sets the given subscriptions in one atomic update, leaving the others as
   * they were. Returns false when the box has no such employee.
   */
  setSubscriptions(
    boxId: string,
    userId: string,
    changes: Readonly<Record<string, boolean>>,
  ): Promise<boolean>;
}

export interface MessageStore {
  findMessage(boxId: string, messageId: string): Promise<DocflowMessage | null>;
  /**
   * Writes new marks in one conditional update, only if the message is still
   * at `version`. Returns false when another call changed it first.
   */
  saveMarks(
    boxId: string,
    messageId: string,
    version: number,
    marks: DeletionMarks,
  ): Promise<boolean>;
}

export interface CounteragentStore {
  /** True when the box has a group with that id (the default group is not stored). */
  groupExists(boxId: string, counteragentGroupId: string): Promise<boolean>;
  /** Members with `status`, in listing order, strictly after `after`, at most `limit`. */
  listMembers(
    boxId: string,
    counteragentGroupId: string,
    status: CounteragentStatus,
    after: GroupPosition | undefined,
    limit: number,
  ): Promise<GroupPosition[]>;
  countMembers(
    boxId: string,
    counteragentGroupId: string,
    status: CounteragentStatus,
  ): Promise<number>;
}

export type Clock = () => Date;
