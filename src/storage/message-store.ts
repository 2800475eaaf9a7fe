/** Messages and templates, each one document with its documents embedded, so marks change atomically. */
import type { Db, Filter } from "mongodb";
import type { DocflowMessage, MessageKind } from "../domain/model";
import type { MessageStore } from "../domain/ports";
import { Collections } from "./collections";

export interface MessageDocument {
  boxId: string;
  messageId: string;
  kind: MessageKind;
  isDeleted: boolean;
  documents: { documentId: string; departmentId: string; isDeleted: boolean }[];
  /** Absent on documents written by other parts of the platform: read as 0. */
  version?: number;
}

export function createMessageStore(db: Db): MessageStore {
  const messages = db.collection<MessageDocument>(Collections.messages);
  return {
    async findMessage(boxId, messageId): Promise<DocflowMessage | null> {
      const doc = await messages.findOne({ boxId, messageId });
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
    async saveMarks(boxId, messageId, version, marks): Promise<boolean> {
      // The version in the filter is the precondition: a conditional updateOne is
      // atomic on every engine (findOneAndUpdate is not, on the embedded one).
      const filter: Filter<MessageDocument> =
        version === 0
          ? { boxId, messageId, $or: [{ version: 0 }, { version: { $exists: false } }] }
          : { boxId, messageId, version };
      const result = await messages.updateOne(filter, {
        $set: {
          isDeleted: marks.isDeleted,
          documents: marks.documents.map((d) => ({
            documentId: d.documentId,
            departmentId: d.departmentId,
            isDeleted: d.isDeleted,
          })),
          version: version + 1,
        },
      });
      return result.modifiedCount === 1;
    },
  };
}
