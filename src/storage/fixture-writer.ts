/**
 * Writes a checked fixture. Every entry is an upsert on its natural key, so
 * loading the same fixture twice changes nothing.
 */
import type { AnyBulkWriteOperation, Db, Document } from "mongodb";
import { groupNameKey } from "../domain/counteragent-groups";
import type { FixtureData } from "../fixtures/fixture";
import { Collections } from "./collections";
import { listingKeyOf } from "./listing-key";

export async function writeFixture(
  db: Db,
  data: FixtureData,
  now: Date = new Date(),
): Promise<void> {
  await upsert(
    db,
    Collections.apiClients,
    data.apiClients.map(({ keyHash, ...rest }) => [{ _id: keyHash }, rest]),
  );
  await upsert(
    db,
    Collections.tokens,
    data.tokens.map(({ tokenHash, ...rest }) => [{ _id: tokenHash }, rest]),
  );
  await upsert(
    db,
    Collections.boxes,
    data.boxes.map((b) => [{ _id: b.boxId, boxId: b.boxId }, b]),
  );
  await upsert(
    db,
    Collections.employees,
    data.employees.map((e) => [{ boxId: e.boxId, userId: e.userId }, e]),
  );
  await upsert(
    db,
    Collections.counteragentGroups,
    data.counteragentGroups.map(({ departmentIds, createdAt, ...g }) => [
      { boxId: g.boxId, counteragentGroupId: g.counteragentGroupId },
      {
        ...g,
        nameKey: groupNameKey(g.name),
        ...(departmentIds ? { departmentIds } : {}),
        ...(createdAt ? { createdAt } : {}),
      },
      {
        // An ordinary group, as the API would have made it: live, any department unless
        // listed, and created when first written (a reload keeps that time).
        $unset: { deletingSince: "", ...(departmentIds ? {} : { departmentIds: "" }) },
        ...(createdAt ? {} : { $setOnInsert: { createdAt: now } }),
      },
    ]),
  );
  await upsert(
    db,
    Collections.counteragents,
    data.counteragents.map((c) => [
      { boxId: c.boxId, counteragentBoxId: c.counteragentBoxId },
      { ...c, listingKey: listingKeyOf(c) },
    ]),
  );
  await upsert(
    db,
    Collections.messages,
    data.messages.map((m) => [{ boxId: m.boxId, messageId: m.messageId }, m]),
  );
}

const BATCH = 500;

/** Rows of [filter, fields to set, other update operators]. */
async function upsert(
  db: Db,
  collection: string,
  rows: [Document, Document, Document?][],
): Promise<void> {
  for (let i = 0; i < rows.length; i += BATCH) {
    const ops: AnyBulkWriteOperation[] = rows.slice(i, i + BATCH).map(([filter, doc, more]) => ({
      updateOne: { filter, update: { $set: doc, ...more }, upsert: true },
    }));
    await db.collection(collection).bulkWrite(ops, { ordered: true });
  }
}
