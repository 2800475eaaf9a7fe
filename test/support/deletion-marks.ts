/**
 * The deletion-marks fixture (docs/api.md §6.1): a department tree, users with every
 * access level, and each kind of marked message as a Message and a Template;
 * calls and reads over any tier.
 */
import { create } from "@bufbuild/protobuf";
import { DocumentService } from "../../gen/docflow/api/v1/documents_pb";
import { ENDED_BOX, HEAD, KEY, OTHER_BOX } from "./fixture";
import type { Served } from "./harness";
import { call, type Outcome, type Protocol } from "./protocols";

export const BOX = "b1000000-0000-4000-8000-000000000001";
// Department tree: HEAD ─ A ─ A1 ─ A1a ─ A1a1 ; HEAD ─ B
export const A = "dep-a";
export const A1 = "dep-a1";
export const A1a = "dep-a1a";
export const A1a1 = "dep-a1a1";
export const B = "dep-b";

export const USERS = {
  keeper: { token: "keeper-token", documentAccessLevel: "AllDocuments" },
  inA: { token: "in-a-token", documentAccessLevel: "DepartmentOnly", userDepartmentId: A },
  underA: {
    token: "under-a-token",
    documentAccessLevel: "DepartmentAndSubdepartments",
    userDepartmentId: A,
  },
  picker: {
    token: "picker-token",
    documentAccessLevel: "SelectedDepartments",
    selectedDepartmentIds: [B, A1a],
  },
  noRights: {
    token: "no-rights-token",
    documentAccessLevel: "AllDocuments",
    canDeleteRestoreDocuments: false,
  },
  outsider: { token: "outsider-token", documentAccessLevel: "AllDocuments" },
} as const;
export type User = keyof typeof USERS;

export const auth = (user: User) =>
  `ServiceAuth svcauth_api_client_id=${KEY}, svcauth_token=${USERS[user].token}`;

/** Messages: id → [message mark, [documentId, department, mark][]]. Each exists as a Message and as a Template. */
export const MESSAGES: Record<string, [boolean, [string, string, boolean][]]> = {
  deleted: [
    true,
    [
      ["d1", A, true],
      ["d2", B, true],
    ],
  ],
  live: [
    false,
    [
      ["d1", A, false],
      ["d2", B, false],
    ],
  ],
  mixed: [
    false,
    [
      ["d1", A, true],
      ["d2", B, false],
    ],
  ],
  lastOne: [
    false,
    [
      ["d1", A, true],
      ["d2", A, false],
    ],
  ],
  deep: [true, [["d1", A1a1, true]]],
  inA: [
    true,
    [
      ["d1", A, true],
      ["d2", A, true],
    ],
  ],
  many: [
    true,
    [
      ["d1", A, true],
      ["d2", A, true],
      ["d3", B, true],
      ["d4", A1, true],
      ["d5", HEAD, true],
    ],
  ],
};
export const KINDS = ["Message", "Template"] as const;
export const mid = (kind: string, name: string) => `${kind.toLowerCase()}-${name}`;

export function fixture() {
  const employee = (name: User) => {
    const { token: _, ...rights } = USERS[name];
    return {
      userId: `u-${name}`,
      canDeleteRestoreDocuments: true,
      userDepartmentId: HEAD,
      ...rights,
    };
  };
  return {
    apiClients: [{ apiKey: KEY }],
    users: (Object.keys(USERS) as User[]).map((name) => ({
      userId: `u-${name}`,
      tokens: [{ token: USERS[name].token }],
    })),
    boxes: [
      {
        boxId: BOX,
        departments: [
          { departmentId: A, parentDepartmentId: HEAD },
          { departmentId: A1, parentDepartmentId: A },
          { departmentId: A1a, parentDepartmentId: A1 },
          { departmentId: A1a1, parentDepartmentId: A1a },
          { departmentId: B, parentDepartmentId: HEAD },
        ],
        employees: (Object.keys(USERS) as User[]).filter((u) => u !== "outsider").map(employee),
        messages: KINDS.flatMap((kind) =>
          Object.entries(MESSAGES).map(([name, [isDeleted, docs]]) => ({
            messageId: mid(kind, name),
            kind,
            isDeleted,
            documents: docs.map(([documentId, departmentId, mark]) => ({
              documentId,
              departmentId,
              isDeleted: mark,
            })),
          })),
        ),
      },
      {
        boxId: OTHER_BOX,
        employees: [employee("outsider")],
        messages: [{ messageId: "other-message" }],
      },
      {
        boxId: ENDED_BOX,
        apiSubscriptionEndsAt: "2020-01-01T00:00:00Z",
        employees: [employee("keeper")],
        messages: [{ messageId: "ended-message", isDeleted: true }],
      },
    ],
  };
}

export interface Stored {
  isDeleted: boolean;
  documents: { documentId: string; isDeleted: boolean }[];
  version: number;
}
export const marks = (s: Stored) => [s.isDeleted, ...s.documents.map((d) => d.isDeleted)];

export type Op = "restore" | "delete";

/** Reads of the stored message, and Delete/Restore calls, against `h` (any tier). */
export function deletionMarks(h: Served) {
  return {
    async stored(messageId: string, boxId = BOX): Promise<Stored> {
      const doc = await h.db.collection("messages").findOne({ boxId, messageId });
      if (!doc) throw new Error(`no message ${messageId}`);
      return doc as unknown as Stored;
    },
    op(
      protocol: Protocol,
      operation: Op,
      user: User,
      messageId: string,
      documentId?: string,
      boxId = BOX,
    ): Promise<Outcome<unknown>> {
      // Restore and Delete have the same request shape.
      const method = DocumentService.method[operation] as typeof DocumentService.method.restore;
      const request = create(
        method.input,
        documentId === undefined ? { boxId, messageId } : { boxId, messageId, documentId },
      );
      return call(h, protocol, method, request, auth(user));
    },
  };
}
