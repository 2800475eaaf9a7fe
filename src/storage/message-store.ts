/** Messages and templates, each one document with its documents embedded, so marks change atomically. */
import type { Db, Document, Filter } from "mongodb";
import type { DocflowMessage, MessageKind } from "../domain/model";
import type { MessageStore } from "../domain/ports";
import { Collections } from "./collections";

export interface MessageDocument {
  boxId: string;
  messageId: string;
  kind: MessageKind;
  isDeleted: boolean;
  /** Other parts of the platform store more fields on a document; every write here keeps them. */
  documents: { documentId: string; departmentId: string; isDeleted: boolean }[];
  /** Absent on documents written by other parts of the platform: read as 0. */
  version?: number;
}

/** The fields the marks are decided on; documents may hold many more (titles, contents, signatures). */
const MESSAGE_PROJECTION = {
  _id: 0,
  boxId: 1,
  messageId: 1,
  kind: 1,
  isDeleted: 1,
  version: 1,
  "documents.documentId": 1,
  "documents.departmentId": 1,
  "documents.isDeleted": 1,
} as const;

export function createMessageStore(db: Db): MessageStore {
  const messages = db.collection<MessageDocument>(Collections.messages);
  return {
    async findMessage(boxId, messageId): Promise<DocflowMessage | null> {
      const doc = await messages.findOne({ boxId, messageId }, { projection: MESSAGE_PROJECTION });
      if (!doc) {
        return null;
      }
      return {
        boxId: doc.boxId,
        messageId: doc.messageId,
        kind: doc.kind,
        isDeleted: doc.isDeleted === true,
        documents: (doc.documents ?? []).map((d) => ({
          documentId: d.documentId,
          departmentId: d.departmentId,
          isDeleted: d.isDeleted === true,
        })),
        version: doc.version ?? 0,
      };
    },
    async saveMarks(boxId, messageId, version, change): Promise<boolean> {
      // The version in the filter is the precondition: a conditional updateOne is
      // atomic on every engine (findOneAndUpdate is not, on the embedded one).
      const filter: Filter<MessageDocument> =
        version === 0
          ? { boxId, messageId, $or: [{ version: 0 }, { version: { $exists: false } }] }
          : { boxId, messageId, version };
      // Only the marks that change, each through a filtered positional path: the
      // documents keep every other field, also ones other writers store (docs/api.md §7).
      const set: Record<string, unknown> = { isDeleted: change.isDeleted, version: version + 1 };
      const arrayFilters: Document[] = [];
      for (const [identifier, isDeleted] of [
        ["marked", true],
        ["unmarked", false],
      ] as const) {
        const ids = change.documents
          .filter((d) => d.isDeleted === isDeleted)
          .map((d) => d.documentId);
        if (ids.length > 0) {
          set[`documents.$[${identifier}].isDeleted`] = isDeleted;
          arrayFilters.push({ [`${identifier}.documentId`]: { $in: ids } });
        }
      }
      const result = await messages.updateOne(
        filter,
        { $set: set },
        arrayFilters.length > 0 ? { arrayFilters } : {},
      );
      return result.modifiedCount === 1;
    },
  };
}
