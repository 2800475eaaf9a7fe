/** What the domain needs from storage. Implemented in `src/storage`. */
import type {
  AccessToken,
  ApiClient,
  Box,
  Counteragent,
  CounteragentGroup,
  CounteragentStatus,
  DocflowMessage,
  Employee,
  EmployeeRights,
  GroupPosition,
  MarkChange,
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
  /** The employee's rights; may be served from a short-lived cache (docs/operations.md, "Caching"). */
  findRights(boxId: string, userId: string): Promise<EmployeeRights | null>;
  /** The whole employee record, subscriptions included, as stored now. */
  findEmployee(boxId: string, userId: string): Promise<Employee | null>;
  /**
   * Sets the given subscriptions in one atomic update, leaving the others as
   * they were, and returns the employee as that update left him (one round
   * trip); null when the box has no such employee.
   */
  setSubscriptions(
    boxId: string,
    userId: string,
    changes: Readonly<Record<string, boolean>>,
  ): Promise<Employee | null>;
}

export interface MessageStore {
  findMessage(boxId: string, messageId: string): Promise<DocflowMessage | null>;
  /**
   * Sets the message's mark and the marks of the listed documents (only those
   * that change) in one conditional update, only if the message is still at
   * `version`, touching no other field. Returns false when another call
   * changed it first.
   */
  saveMarks(
    boxId: string,
    messageId: string,
    version: number,
    change: MarkChange,
  ): Promise<boolean>;
}

export interface CounteragentStore {
  /** True when the box has a group with that id (the default group is not stored). */
  groupExists(boxId: string, counteragentGroupId: string): Promise<boolean>;
  /**
   * Members with `status`, in listing order, strictly after `after`, at most
   * `limit`. A first page (no `after`) also gives a listing position to
   * members written without one, so a walk that starts there sees them.
   */
  listMembers(
    boxId: string,
    counteragentGroupId: string,
    status: CounteragentStatus,
    after: GroupPosition | undefined,
    limit: number,
  ): Promise<GroupPosition[]>;
  /** The number of members with `status`: an index-only count, as large as the group. */
  countMembers(
    boxId: string,
    counteragentGroupId: string,
    status: CounteragentStatus,
  ): Promise<number>;
  /** What a first page does for members without a listing position, without listing (for keys of earlier versions). */
  ensureListingKeys(
    boxId: string,
    counteragentGroupId: string,
    status: CounteragentStatus,
  ): Promise<void>;
}

/** Membership changes: each is one conditional single-document update (or one updateMany). */
export interface CounteragentMembershipStore {
  findCounteragent(boxId: string, counteragentBoxId: string): Promise<Counteragent | null>;
  /**
   * Moves the counteragent from group `from` into group `to`, joining it at
   * `joinedGroupAt`, only if it is still in `from` (and, when `status` is
   * given, still has that status). Returns false when it was not.
   */
  moveCounteragent(
    boxId: string,
    counteragentBoxId: string,
    move: {
      readonly from: string;
      readonly to: string;
      readonly joinedGroupAt: Date;
      readonly status?: CounteragentStatus;
    },
  ): Promise<boolean>;
  /** Moves every counteragent of group `from`, whatever its status, into group `to`; returns when none is left in `from`. */
  moveAllMembers(boxId: string, from: string, to: string, joinedGroupAt: Date): Promise<void>;
}

/** What a conditional write of a group requires it to still have (what its entity tag stands for). */
export interface GroupState {
  readonly name: string;
  readonly departmentIds: readonly string[] | undefined;
}

/** Where a listing of a box's groups is: the last group it gave. */
export interface GroupListPosition {
  readonly createdAt: Date;
  readonly counteragentGroupId: string;
}

/** The counteragent groups of boxes; a group's members are on the counteragents themselves. */
export interface CounteragentGroupStore {
  /** The stored group, also one being deleted; null when there is none. */
  findGroup(boxId: string, counteragentGroupId: string): Promise<CounteragentGroup | null>;
  /** Groups not being deleted, by creation time then id: `limit` of them after the first `skip`. */
  listGroups(boxId: string, skip: number, limit: number): Promise<CounteragentGroup[]>;
  /** The same order, `limit` groups after `after` (a group's creation time and id), or from the first. */
  listGroupsAfter(
    boxId: string,
    after: GroupListPosition | undefined,
    limit: number,
  ): Promise<CounteragentGroup[]>;
  /** The number of groups of the box not being deleted. */
  countGroups(boxId: string): Promise<number>;
  /**
   * Stores a new group. Throws the domain conflict `CounteragentGroup.DuplicateName`
   * when the box already has a group whose name compares equal.
   */
  insertGroup(group: CounteragentGroup): Promise<void>;
  /**
   * Sets the given fields of a group that is not being deleted, in one
   * conditional update (`departmentIds: null` makes it any-department).
   * Returns false when there is no such group, or (given `expected`) when
   * its name or departments are no longer those of `expected`. Throws like
   * `insertGroup` when another group of the box has the new name.
   */
  updateGroup(
    boxId: string,
    counteragentGroupId: string,
    changes: { readonly name?: string; readonly departmentIds?: readonly string[] | null },
    expected?: GroupState,
  ): Promise<boolean>;
  /**
   * Marks the group as being deleted (and frees its name), only if it is not
   * marked yet (and, given `expected`, still has its name and departments).
   * Returns false when it was already marked, is gone, or changed.
   */
  markDeleting(
    boxId: string,
    counteragentGroupId: string,
    at: Date,
    expected?: GroupState,
  ): Promise<boolean>;
  /** Removes a group marked as being deleted. */
  removeGroup(boxId: string, counteragentGroupId: string): Promise<void>;
}

export type Clock = () => Date;
