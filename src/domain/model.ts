/** The records the domain works on, as the stores hand them over. */

/** The all-zeros UUID: the head department and the default group both have it. */
const NIL_UUID = "00000000-0000-0000-0000-000000000000";

/** Head of every box's department tree. */
export const HEAD_DEPARTMENT_ID = NIL_UUID;

export const DocumentAccessLevel = {
  AllDocuments: "AllDocuments",
  DepartmentOnly: "DepartmentOnly",
  DepartmentAndSubdepartments: "DepartmentAndSubdepartments",
  SelectedDepartments: "SelectedDepartments",
} as const;
export type DocumentAccessLevel = (typeof DocumentAccessLevel)[keyof typeof DocumentAccessLevel];

export interface ApiClient {
  readonly name: string;
  readonly enabled: boolean;
}

export interface AccessToken {
  readonly userId: string;
  readonly expiresAt: Date;
}

export interface Department {
  readonly departmentId: string;
  readonly parentDepartmentId: string;
}

export interface Box {
  readonly boxId: string;
  readonly organizationName: string;
  /** null: the API subscription never ends. */
  readonly apiSubscriptionEndsAt: Date | null;
  readonly departments: readonly Department[];
}

/** What an employee may do in a box: everything the access checks read. */
export interface EmployeeRights {
  readonly boxId: string;
  readonly userId: string;
  readonly isAdministrator: boolean;
  readonly canManageCounteragents: boolean;
  readonly canDeleteRestoreDocuments: boolean;
  readonly documentAccessLevel: DocumentAccessLevel;
  readonly userDepartmentId: string;
  readonly selectedDepartmentIds: readonly string[];
}

export interface Employee extends EmployeeRights {
  /** Only the subscriptions ever set; the others are subscribed. */
  readonly subscriptions: Readonly<Record<string, boolean>>;
}

/** The authenticated user behind a call. */
export interface Caller {
  readonly userId: string;
  /**
   * The client the call proved it comes from: the API client's name
   * (ServiceAuth), or the token's `client_id`/`azp` (Bearer, "bearer" when it
   * has neither). Admission gives each client its share (docs/api.md §4.1).
   */
  readonly client?: string;
  /** A Bearer token without the required scope (docs/api.md §5.1): 403 at the box-403 step. */
  readonly missingScope?: string;
}

export const MessageKind = { Message: "Message", Template: "Template" } as const;
export type MessageKind = (typeof MessageKind)[keyof typeof MessageKind];

export interface DocflowDocument {
  readonly documentId: string;
  readonly departmentId: string;
  /** The deletion mark. */
  readonly isDeleted: boolean;
}

/** A message or a template (addressed by its message id), with its documents. */
export interface DocflowMessage {
  readonly boxId: string;
  readonly messageId: string;
  readonly kind: MessageKind;
  /** The deletion mark. Invariant: a marked message has all its documents marked. */
  readonly isDeleted: boolean;
  readonly documents: readonly DocflowDocument[];
  /** Optimistic-concurrency version: every change of marks increments it. */
  readonly version: number;
}

/** The deletion marks of a message and of each of its documents. */
export interface DeletionMarks {
  readonly isDeleted: boolean;
  readonly documents: readonly DocflowDocument[];
}

/** What a call writes: the message's mark and the marks of the documents whose mark changes. */
export interface MarkChange {
  readonly isDeleted: boolean;
  readonly documents: readonly Pick<DocflowDocument, "documentId" | "isDeleted">[];
}

/** The default counteragent group: always exists, holds every counteragent not placed elsewhere. */
export const DEFAULT_GROUP_ID = NIL_UUID;

export const CounteragentStatus = {
  IsMyCounteragent: "IsMyCounteragent",
  InvitesMe: "InvitesMe",
  IsInvitedByMe: "IsInvitedByMe",
  RejectsMe: "RejectsMe",
  IsRejectedByMe: "IsRejectedByMe",
  NotInCounteragentList: "NotInCounteragentList",
} as const;
export type CounteragentStatus = (typeof CounteragentStatus)[keyof typeof CounteragentStatus];

/** A counteragent of a box, as far as its group membership goes. */
export interface Counteragent {
  readonly boxId: string;
  readonly counteragentBoxId: string;
  readonly status: CounteragentStatus;
  /** The one group it is in; DEFAULT_GROUP_ID when placed nowhere else. */
  readonly counteragentGroupId: string;
  readonly joinedGroupAt: Date;
}

/** A stored counteragent group (the default group is not one: it is never stored). */
export interface CounteragentGroup {
  readonly boxId: string;
  readonly counteragentGroupId: string;
  /** Trimmed; unique within the box, compared case-insensitively. */
  readonly name: string;
  /** The departments whose employees work with the group; undefined: any department. */
  readonly departmentIds: readonly string[] | undefined;
  readonly createdAt: Date;
  /** Set when DeleteCounteragentGroup began: from then on the group is gone for every other call. */
  readonly deletingSince: Date | undefined;
}

/** Where a counteragent stands in a group's listing: the time it joined, then its box id. */
export interface GroupPosition {
  readonly joinedGroupAt: Date;
  readonly counteragentBoxId: string;
}
