/** What the domain needs from storage. Implemented in `src/storage`. */
import type { AccessToken, ApiClient, Box, DeletionMarks, DocflowMessage, Employee } from "./model";

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

export type Clock = () => Date;
