/**
 * Delete and Restore (docs/api.md §6.1): deletion marks on a message (or template)
 * and its documents. Each call computes the new marks from one read and
 * writes them with one conditional update on the message's version, retrying
 * on a lost race, so every call is atomic and exactly one of N identical
 * concurrent calls succeeds.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { BoxAccessDeps } from "./box-access";
import { openBox } from "./box-access";
import { reachableDepartments } from "./document-access";
import { conflict, type DomainError, notFound, permissionDenied } from "./errors";
import {
  type Caller,
  type DeletionMarks,
  type DocflowDocument,
  type DocflowMessage,
  HEAD_DEPARTMENT_ID,
  type MarkChange,
} from "./model";
import type { MessageStore } from "./ports";
import { optionalId, requireId } from "./validate";

/** Points where tests can widen a race window; none in production. */
export interface DeletionMarkHooks {
  /** Delete and Restore: after the message is read and the change decided, before it is written. */
  readonly beforeSave?: (ref: { boxId: string; messageId: string }) => Promise<void>;
}

export interface DeletionMarkDeps extends BoxAccessDeps {
  readonly messages: MessageStore;
  readonly markHooks?: DeletionMarkHooks | undefined;
}

export interface MarkRequest {
  readonly boxId: string;
  readonly messageId: string;
  /** Absent or empty: the whole message. */
  readonly documentId?: string | undefined;
}

/** What a call would do to a message, or why it does nothing. */
type Plan =
  | { readonly conflict: DomainError }
  | { readonly marks: DeletionMarks; readonly changed: readonly DocflowDocument[] };

type Planner = (message: DocflowMessage, document: DocflowDocument | undefined) => Plan;

const MAX_ATTEMPTS = 100;

/** Removes the mark from the message and every marked document, or from one document and the message. */
export function restore(
  deps: DeletionMarkDeps,
  caller: Caller,
  request: MarkRequest,
): Promise<void> {
  return changeMarks(deps, caller, request, planRestore);
}

/** Marks the message and all its documents, or one document (and the message when it was the last). */
export function deleteMarks(
  deps: DeletionMarkDeps,
  caller: Caller,
  request: MarkRequest,
): Promise<void> {
  return changeMarks(deps, caller, request, planDelete);
}

const alreadyRestored = (what: string) =>
  conflict(`${what} is not deleted`, "Restore.AlreadyRestored");
const alreadyDeleted = (what: string) =>
  conflict(`${what} is already deleted`, "Delete.AlreadyDeleted");

function planRestore(message: DocflowMessage, document: DocflowDocument | undefined): Plan {
  if (document) {
    if (!document.isDeleted) return { conflict: alreadyRestored("the document") };
    return {
      marks: {
        isDeleted: false,
        documents: setMark(message.documents, false, (d) => d === document),
      },
      // Stryker disable next-line ArrayDeclaration: the addressed document's reach is checked before the plan
      changed: [document],
    };
  }
  const changed = message.documents.filter((d) => d.isDeleted);
  if (!message.isDeleted && changed.length === 0)
    return { conflict: alreadyRestored("the message") };
  return {
    marks: { isDeleted: false, documents: setMark(message.documents, false, () => true) },
    changed,
  };
}

function planDelete(message: DocflowMessage, document: DocflowDocument | undefined): Plan {
  if (document) {
    if (document.isDeleted) return { conflict: alreadyDeleted("the document") };
    const documents = setMark(message.documents, true, (d) => d === document);
    return {
      marks: { isDeleted: documents.every((d) => d.isDeleted), documents },
      // Stryker disable next-line ArrayDeclaration: the same
      changed: [document],
    };
  }
  if (message.isDeleted) return { conflict: alreadyDeleted("the message") };
  return {
    marks: { isDeleted: true, documents: setMark(message.documents, true, () => true) },
    changed: message.documents.filter((d) => !d.isDeleted),
  };
}

/** Only what differs from the message as read: the store writes nothing else. */
function changeOf(message: DocflowMessage, marks: DeletionMarks): MarkChange {
  // Stryker disable MethodExpression,ConditionalExpression,OptionalChaining: writing a mark again with its own value stores the same; the version check guards the rest
  const changed = marks.documents.filter((d, i) => d.isDeleted !== message.documents[i]?.isDeleted);
  // Stryker restore MethodExpression,ConditionalExpression,OptionalChaining
  return {
    isDeleted: marks.isDeleted,
    documents: changed.map((d) => ({ documentId: d.documentId, isDeleted: d.isDeleted })),
  };
}

function setMark(
  documents: readonly DocflowDocument[],
  isDeleted: boolean,
  which: (d: DocflowDocument) => boolean,
): DocflowDocument[] {
  return documents.map((d) => (which(d) ? { ...d, isDeleted } : d));
}

async function changeMarks(
  deps: DeletionMarkDeps,
  caller: Caller,
  request: MarkRequest,
  plan: Planner,
): Promise<void> {
  const boxId = requireId("boxId", request.boxId);
  const messageId = requireId("messageId", request.messageId);
  const documentId = optionalId("documentId", request.documentId);
  const { box, self } = await openBox(deps, caller, boxId);
  if (!self.canDeleteRestoreDocuments) {
    throw permissionDenied(
      "the employee may not delete or restore documents (CanDeleteRestoreDocuments)",
    );
  }
  const reaches = reachableDepartments(self, box);
  // What does not exist is out of reach for an employee who does not reach every
  // department: 403, as for what exists out of reach, so that neither answer tells
  // whether an id exists (docs/security.md, "What an answer tells").
  const seesAll =
    reaches(HEAD_DEPARTMENT_ID) && box.departments.every((d) => reaches(d.departmentId));

  for (let attempt = 1; ; attempt++) {
    const message = await deps.messages.findMessage(boxId, messageId);
    if (!message) {
      if (!seesAll) throw documentOutOfReach();
      throw notFound(`the box has no message "${messageId}"`, "Message.NotFound");
    }
    const document =
      // Stryker disable next-line ConditionalExpression: no document has an undefined id, so find() gives undefined too
      documentId === undefined
        ? undefined
        : message.documents.find((d) => d.documentId === documentId);
    if (documentId !== undefined && !document) {
      if (!seesAll) throw documentOutOfReach();
      throw notFound(`the message has no document "${documentId}"`, "Document.NotFound");
    }
    // The addressed document must be in reach before its state is revealed (403 before 409).
    if (document && !reaches(document.departmentId)) {
      throw documentOutOfReach();
    }
    const next = plan(message, document);
    if ("conflict" in next) {
      throw next.conflict;
    }
    if (next.changed.some((d) => !reaches(d.departmentId))) {
      throw documentOutOfReach();
    }
    // Stryker disable next-line OptionalChaining: a test hook; production passes none
    await deps.markHooks?.beforeSave?.({ boxId, messageId });
    if (
      await deps.messages.saveMarks(
        boxId,
        messageId,
        message.version,
        changeOf(message, next.marks),
      )
    ) {
      return;
    }
    if (attempt >= MAX_ATTEMPTS) {
      throw conflict(
        "the message is being changed by other calls; try again",
        "Message.ConcurrentChange",
      );
    }
    // Lost a race: back off a little, with jitter, and decide again on fresh state.
    // Stryker disable next-line ArithmeticOperator: the back-off's length; only timing changes
    await sleep(Math.random() * Math.min(50, 2 ** attempt));
  }
}

const documentOutOfReach = () =>
  permissionDenied(
    "a document of the call is out of the employee's reach",
    "Document.AccessDenied",
  );
