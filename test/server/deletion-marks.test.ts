/**
 * docs/api.md §6.1 where the wire and concurrency matter: legacy success is 200 with
 * an empty body, each call is atomic under concurrent calls over every
 * transport, and fields other writers store survive (the rules themselves:
 * test/in-memory/deletion-marks.test.ts).
 */
import { beforeEach, describe, expect, it } from "vitest";
import { loadFixture } from "../../src/fixtures/load";
import {
  A,
  auth,
  B,
  BOX,
  deletionMarks,
  fixture,
  marks,
  mid,
  type Op,
} from "../support/deletion-marks";
import { legacy, useHarness } from "../support/harness";
import type { Protocol } from "../support/protocols";

const h = useHarness(fixture);
beforeEach(async () => {
  await loadFixture(h.db, fixture());
});
const { op, stored } = deletionMarks(h);

describe("legacy success is 200 with an empty body", () => {
  it.each(["/Restore", "/Delete"])("%s", async (path) => {
    const messageId = path === "/Restore" ? mid("Message", "deleted") : mid("Message", "live");
    const res = await legacy(h, {
      method: "POST",
      path: `${path}?boxId=${BOX}&messageId=${messageId}&documentId`,
      headers: { authorization: auth("keeper") },
    });
    expect(res.status).toBe(200);
    expect(res.headers["content-length"]).toBe("0");
    expect(res.body.length).toBe(0);
  });
});

describe("concurrency: each call is atomic", () => {
  it("50 concurrent identical Restore calls: exactly one 200, the others 409", async () => {
    const protocols: Protocol[] = [
      "legacy-protobuf",
      "grpc",
      "connect-binary",
      "legacy-json",
      "grpc-web",
    ];
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        op(protocols[i % protocols.length] ?? "grpc", "restore", "keeper", mid("Message", "many")),
      ),
    );
    const statuses = results.map((r) => (r.ok ? 200 : r.status));
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(49);
    expect(marks(await stored(mid("Message", "many")))).toEqual([
      false,
      false,
      false,
      false,
      false,
      false,
    ]);
  });

  it("50 concurrent identical Delete calls of one document: exactly one 200", async () => {
    const results = await Promise.all(
      Array.from({ length: 50 }, () =>
        op("legacy-protobuf", "delete", "keeper", mid("Template", "live"), "d1"),
      ),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(results.filter((r) => !r.ok && r.status === 409)).toHaveLength(49);
  });

  it("200 random concurrent Delete/Restore calls: the invariant holds and every 200 is one real change", async () => {
    const messageId = mid("Message", "many");
    const before = await stored(messageId);
    const docs = ["d1", "d2", "d3", "d4", "d5", undefined];
    let seed = 42;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const calls = Array.from({ length: 200 }, (_, i) => {
      const operation: Op = random() < 0.5 ? "delete" : "restore";
      const documentId = docs[Math.floor(random() * docs.length)];
      const protocol: Protocol = i % 2 === 0 ? "legacy-protobuf" : "grpc";
      return op(protocol, operation, "keeper", messageId, documentId);
    });
    const results = await Promise.all(calls);
    const ok = results.filter((r) => r.ok).length;
    expect(results.filter((r) => !r.ok && r.status !== 409)).toEqual([]);
    expect(ok).toBeGreaterThan(0);
    const after = await stored(messageId);
    // Every successful call incremented the version exactly once, and nothing else did.
    expect(after.version - before.version).toBe(ok);
    // Invariant: a marked message has all its documents marked.
    if (after.isDeleted) expect(after.documents.every((d) => d.isDeleted)).toBe(true);
  });
});

describe("fields other writers store are kept (docs/api.md §7: a write sets only what it changes)", () => {
  // As the platform writes a message: documents carry more than the service models.
  const messageId = "message-with-extras";
  const extras = (n: number) => ({
    title: `Invoice ${n}.pdf`,
    size: 1000 + n,
    signature: { signerId: `s-${n}`, signedAt: new Date("2026-01-01T00:00:00Z") },
    tags: ["a", "b"],
  });
  const platformMessage = () => ({
    boxId: BOX,
    messageId,
    kind: "Message",
    isDeleted: false,
    subject: "Invoices of January",
    documents: [
      { documentId: "d1", departmentId: A, isDeleted: false, ...extras(1) },
      { documentId: "d2", departmentId: B, isDeleted: false, ...extras(2) },
      // A document without a deletion mark at all: read as unmarked.
      { documentId: "d3", departmentId: B, ...extras(3) },
    ],
  });
  beforeEach(async () => {
    await h.db.collection("messages").deleteMany({ boxId: BOX, messageId });
    await h.db.collection("messages").insertOne(platformMessage());
  });
  /** The fields of other writers survived; `expectedMarks`, when given, are the marks an oracle expects. */
  const expectExtrasKept = async (expectedMarks?: boolean[]) => {
    const doc = await h.db.collection("messages").findOne({ boxId: BOX, messageId });
    expect(doc?.subject).toBe("Invoices of January");
    const documents = (doc?.documents ?? []) as Record<string, unknown>[];
    expect(documents.map((d) => d.documentId)).toEqual(["d1", "d2", "d3"]);
    for (const [i, d] of documents.entries()) {
      expect(d).toMatchObject({ departmentId: [A, B, B][i], ...extras(i + 1) });
    }
    if (expectedMarks) {
      expect([doc?.isDeleted, ...documents.map((d) => d.isDeleted === true)]).toEqual(
        expectedMarks,
      );
    }
  };

  it("legacy Delete of the whole message, then gRPC Restore: title, size and the rest survive both", async () => {
    const deleted = await op("legacy-protobuf", "delete", "keeper", messageId);
    expect(deleted.ok).toBe(true);
    await expectExtrasKept([true, true, true, true]);
    const restored = await op("grpc", "restore", "keeper", messageId);
    expect(restored.ok).toBe(true);
    await expectExtrasKept([false, false, false, false]);
  });

  it("legacy Delete of one document, then gRPC Restore of it: only that mark moves", async () => {
    expect((await op("legacy-json", "delete", "keeper", messageId, "d2")).ok).toBe(true);
    await expectExtrasKept([false, false, true, false]);
    expect((await op("grpc", "restore", "keeper", messageId, "d2")).ok).toBe(true);
    await expectExtrasKept([false, false, false, false]);
  });

  it("concurrent Delete/Restore calls on such a message: exactly-once still holds, nothing is lost", async () => {
    const before = await stored(messageId);
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        op(
          i % 2 === 0 ? "legacy-protobuf" : "grpc",
          i % 4 < 2 ? "delete" : "restore",
          "keeper",
          messageId,
          ["d1", "d2", "d3", undefined][i % 4],
        ),
      ),
    );
    const ok = results.filter((r) => r.ok).length;
    expect(results.filter((r) => !r.ok && r.status !== 409)).toEqual([]);
    const after = await stored(messageId);
    expect(after.version - (before.version ?? 0)).toBe(ok);
    // Which marks remain depends on the order the calls won in; what must hold is the
    // invariant (a marked message has every document marked) and one version per success.
    if (after.isDeleted) expect(after.documents.every((d) => d.isDeleted)).toBe(true);
    await expectExtrasKept();
  });
});

describe("an old SDK's one-document Delete: entityId names the document (Java SDK 3.0.1–3.25.2, 4.0.0-rc.1)", () => {
  const delete_ = (query: string, user: "keeper" | "inA" = "keeper", json = false) =>
    legacy(h, {
      method: "POST",
      path: `/Delete?boxId=${BOX}&messageId=${mid("Message", "live")}&${query}`,
      headers: {
        authorization: auth(user),
        ...(json ? { accept: "application/json", "content-type": "application/json" } : {}),
      },
      ...(json ? { body: "{}" } : {}),
    });

  it.each([
    ["protobuf", false],
    ["JSON", true],
  ])(
    "%s: Delete(M, entityId=d1) marks only d1; Delete(M, entityId=d2) then marks d2 and the message",
    async (_wire, json) => {
      const first = await delete_("entityId=d1", "keeper", json);
      expect(first.status).toBe(200);
      expect(marks(await stored(mid("Message", "live")))).toEqual([false, true, false]);
      const second = await delete_("EntityId=d2", "keeper", json);
      expect(second.status).toBe(200);
      expect(marks(await stored(mid("Message", "live")))).toEqual([true, true, true]);
    },
  );

  it("a caller who can reach only d1 deletes d1 (no 403 for d2, which it did not ask for)", async () => {
    const res = await delete_("entityId=d1", "inA");
    expect(res.status).toBe(200);
    expect(marks(await stored(mid("Message", "live")))).toEqual([false, true, false]);
  });

  it.each([
    ["protobuf", false],
    ["JSON", true],
  ])("%s: documentId and entityId that differ: 400, nothing changes", async (_wire, json) => {
    const res = await delete_("documentId=d1&entityId=d2", "keeper", json);
    expect(res.status).toBe(400);
    expect(res.headers["x-service-errorcode"]).toBe("Http.BadRequest");
    expect(res.text).toMatch(/parameters documentId and entityId name the same field and differ/);
    expect(marks(await stored(mid("Message", "live")))).toEqual([false, false, false]);
  });

  it("documentId and entityId that agree, or an empty one beside the other: that document only", async () => {
    expect((await delete_("documentId=d1&entityId=d1")).status).toBe(200);
    expect(marks(await stored(mid("Message", "live")))).toEqual([false, true, false]);
    expect((await delete_("entityId=&documentId=d2")).status).toBe(200);
    expect(marks(await stored(mid("Message", "live")))).toEqual([true, true, true]);
  });

  it("entityId given twice: 400", async () => {
    const res = await delete_("entityId=d1&ENTITYID=d1");
    expect(res.status).toBe(400);
    expect(res.text).toMatch(/entityId is given more than once/);
    expect(marks(await stored(mid("Message", "live")))).toEqual([false, false, false]);
  });
});
