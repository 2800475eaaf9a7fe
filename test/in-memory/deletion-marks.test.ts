/**
 * docs/api.md §6.1: the rules of Delete and Restore of messages, templates and
 * documents, through the service's routes and interceptors in memory. The
 * wire (legacy 200 with an empty body), concurrency over real transports and
 * other writers' fields: test/server/deletion-marks.test.ts.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { loadFixture } from "../../src/fixtures/load";
import { A, B, BOX, deletionMarks, fixture, KINDS, marks, mid } from "../support/deletion-marks";
import { ENDED_BOX } from "../support/fixture";
import { useInMemory } from "../support/harness";
import type { Protocol } from "../support/protocols";

/** What runs between a call's decision and its write (a test's race window). */
let beforeSave: ((ref: { boxId: string; messageId: string }) => Promise<void>) | undefined;
const h = useInMemory(fixture, {
  markHooks: { beforeSave: (ref) => beforeSave?.(ref) ?? Promise.resolve() },
});
beforeEach(async () => {
  beforeSave = undefined;
  // Messages a test added itself go too.
  await h.db.collection("messages").deleteMany({});
  await loadFixture(h.db, fixture());
});
const { op, stored } = deletionMarks(h);

describe.each(["in-memory"] satisfies Protocol[])("over %s", (protocol) => {
  describe.each(KINDS)("%s", (kind) => {
    const id = (name: string) => mid(kind, name);

    describe("Restore", () => {
      it("without documentId: removes the mark from the message and every document", async () => {
        expect(await op(protocol, "restore", "keeper", id("deleted"))).toMatchObject({ ok: true });
        expect(marks(await stored(id("deleted")))).toEqual([false, false, false]);
      });
      it("without documentId, message unmarked but a document marked: restores that document", async () => {
        expect(await op(protocol, "restore", "keeper", id("mixed"))).toMatchObject({ ok: true });
        expect(marks(await stored(id("mixed")))).toEqual([false, false, false]);
      });
      it("with documentId: removes the mark from that document and from the message only", async () => {
        expect(await op(protocol, "restore", "keeper", id("deleted"), "d2")).toMatchObject({
          ok: true,
        });
        expect(marks(await stored(id("deleted")))).toEqual([false, true, false]);
      });
      it("again after a restore: 409 Restore.AlreadyRestored, nothing changes", async () => {
        expect(await op(protocol, "restore", "keeper", id("deleted"))).toMatchObject({ ok: true });
        const before = await stored(id("deleted"));
        expect(await op(protocol, "restore", "keeper", id("deleted"))).toMatchObject({
          ok: false,
          status: 409,
          errorCode: "Restore.AlreadyRestored",
        });
        expect(await stored(id("deleted"))).toEqual(before);
      });
      it("a document that carries no mark: 409", async () => {
        expect(await op(protocol, "restore", "keeper", id("mixed"), "d2")).toMatchObject({
          ok: false,
          status: 409,
          errorCode: "Restore.AlreadyRestored",
        });
      });
      it("a message with nothing marked: 409", async () => {
        expect(await op(protocol, "restore", "keeper", id("live"))).toMatchObject({
          ok: false,
          status: 409,
        });
      });
    });

    describe("Delete", () => {
      it("without documentId: marks the message and all its documents", async () => {
        expect(await op(protocol, "delete", "keeper", id("mixed"))).toMatchObject({ ok: true });
        expect(marks(await stored(id("mixed")))).toEqual([true, true, true]);
      });
      it("with documentId: marks that document only", async () => {
        expect(await op(protocol, "delete", "keeper", id("live"), "d1")).toMatchObject({
          ok: true,
        });
        expect(marks(await stored(id("live")))).toEqual([false, true, false]);
      });
      it("the last unmarked document: the message is marked too", async () => {
        expect(await op(protocol, "delete", "keeper", id("lastOne"), "d2")).toMatchObject({
          ok: true,
        });
        expect(marks(await stored(id("lastOne")))).toEqual([true, true, true]);
      });
      it("an already marked message: 409 Delete.AlreadyDeleted", async () => {
        expect(await op(protocol, "delete", "keeper", id("deleted"))).toMatchObject({
          ok: false,
          status: 409,
          errorCode: "Delete.AlreadyDeleted",
        });
      });
      it("an already marked document: 409", async () => {
        expect(await op(protocol, "delete", "keeper", id("mixed"), "d1")).toMatchObject({
          ok: false,
          status: 409,
          errorCode: "Delete.AlreadyDeleted",
        });
        expect(marks(await stored(id("mixed")))).toEqual([false, true, false]);
      });
    });
  });

  describe("not found, bad input", () => {
    it.each(["restore", "delete"] as const)(
      "%s of an unknown message: 404 Message.NotFound",
      async (operation) => {
        expect(await op(protocol, operation, "keeper", "no-such-message")).toMatchObject({
          ok: false,
          status: 404,
          errorCode: "Message.NotFound",
        });
      },
    );
    it.each(["restore", "delete"] as const)(
      "%s of a document not in the message: 404 Document.NotFound",
      async (operation) => {
        expect(await op(protocol, operation, "keeper", mid("Message", "live"), "d9")).toMatchObject(
          { ok: false, status: 404, errorCode: "Document.NotFound" },
        );
      },
    );
    it("a message of another box is not found in this one", async () => {
      expect(await op(protocol, "restore", "keeper", "other-message")).toMatchObject({
        ok: false,
        status: 404,
      });
    });
    it.each([
      ["missing boxId", "", "m"],
      ["missing messageId", BOX, ""],
    ])("%s: 400", async (_name, boxId, messageId) => {
      expect(await op(protocol, "restore", "keeper", messageId, undefined, boxId)).toMatchObject({
        ok: false,
        status: 400,
      });
    });
  });

  describe("rights: CanDeleteRestoreDocuments and access to every document that changes", () => {
    it("without CanDeleteRestoreDocuments: 403, nothing changes", async () => {
      expect(await op(protocol, "restore", "noRights", mid("Message", "deleted"))).toMatchObject({
        ok: false,
        status: 403,
        errorCode: "Http.Forbidden",
      });
      expect(marks(await stored(mid("Message", "deleted")))).toEqual([true, true, true]);
    });
    it("AllDocuments reaches every department", async () => {
      expect(await op(protocol, "restore", "keeper", mid("Message", "many"))).toMatchObject({
        ok: true,
      });
    });
    it("DepartmentOnly reaches its own department", async () => {
      expect(await op(protocol, "restore", "inA", mid("Template", "inA"))).toMatchObject({
        ok: true,
      });
      expect(marks(await stored(mid("Template", "inA")))).toEqual([false, false, false]);
    });
    it("DepartmentOnly does not reach a subdepartment", async () => {
      expect(await op(protocol, "restore", "inA", mid("Message", "deep"))).toMatchObject({
        ok: false,
        status: 403,
        errorCode: "Document.AccessDenied",
      });
    });
    it("DepartmentAndSubdepartments reaches a department three levels below", async () => {
      expect(await op(protocol, "restore", "underA", mid("Message", "deep"), "d1")).toMatchObject({
        ok: true,
      });
      expect(marks(await stored(mid("Message", "deep")))).toEqual([false, false]);
    });
    it("DepartmentAndSubdepartments does not reach a sibling department", async () => {
      expect(await op(protocol, "delete", "underA", mid("Message", "live"), "d2")).toMatchObject({
        ok: false,
        status: 403,
      });
      expect(marks(await stored(mid("Message", "live")))).toEqual([false, false, false]);
    });
    it("SelectedDepartments reaches a selected department, not its parent", async () => {
      expect(await op(protocol, "delete", "picker", mid("Message", "live"), "d2")).toMatchObject({
        ok: true,
      });
      expect(await op(protocol, "delete", "picker", mid("Message", "live"), "d1")).toMatchObject({
        ok: false,
        status: 403,
      });
      expect(marks(await stored(mid("Message", "live")))).toEqual([false, false, true]);
    });
    it("SelectedDepartments does not reach below a selected department", async () => {
      expect(await op(protocol, "restore", "picker", mid("Message", "deep"))).toMatchObject({
        ok: false,
        status: 403,
      });
    });
    it("one document out of reach among reachable ones: 403 and the stored state is unchanged", async () => {
      const before = await stored(mid("Message", "many"));
      expect(await op(protocol, "restore", "underA", mid("Message", "many"))).toMatchObject({
        ok: false,
        status: 403,
        errorCode: "Document.AccessDenied",
      });
      expect(await stored(mid("Message", "many"))).toEqual(before);
    });
    it("an unreachable document's mark is not revealed: 403 before 409", async () => {
      expect(await op(protocol, "restore", "inA", mid("Message", "mixed"), "d2")).toMatchObject({
        ok: false,
        status: 403,
      });
    });
  });

  describe("order of checks", () => {
    it("no access to the box and an unknown message: 403, not 404", async () => {
      expect(await op(protocol, "restore", "outsider", "no-such-message")).toMatchObject({
        ok: false,
        status: 403,
      });
    });
    it("subscription ended and an unknown message: 402", async () => {
      expect(
        await op(protocol, "restore", "keeper", "no-such-message", undefined, ENDED_BOX),
      ).toMatchObject({ ok: false, status: 402 });
    });
    it("no right to delete/restore and an unknown message: 403", async () => {
      expect(await op(protocol, "delete", "noRights", "no-such-message")).toMatchObject({
        ok: false,
        status: 403,
      });
    });
  });
});

describe("the words of each refusal (legacy bodies show them)", () => {
  it.each([
    [
      "an unknown message",
      "restore",
      "nope",
      undefined,
      404,
      "Message.NotFound",
      'the box has no message "nope"',
    ],
    [
      "an unknown document",
      "delete",
      "message-live",
      "d9",
      404,
      "Document.NotFound",
      'the message has no document "d9"',
    ],
    [
      "a message with nothing marked",
      "restore",
      "message-live",
      undefined,
      409,
      "Restore.AlreadyRestored",
      "the message is not deleted",
    ],
    [
      "a document with no mark",
      "restore",
      "message-live",
      "d1",
      409,
      "Restore.AlreadyRestored",
      "the document is not deleted",
    ],
    [
      "a marked message",
      "delete",
      "message-deleted",
      undefined,
      409,
      "Delete.AlreadyDeleted",
      "the message is already deleted",
    ],
    [
      "a marked document",
      "delete",
      "message-mixed",
      "d1",
      409,
      "Delete.AlreadyDeleted",
      "the document is already deleted",
    ],
  ] as const)("%s", async (_name, operation, messageId, documentId, status, errorCode, message) => {
    expect(await op("in-memory", operation, "keeper", messageId, documentId)).toEqual({
      ok: false,
      status,
      errorCode,
      message,
    });
  });

  it("no right, and a document out of reach", async () => {
    expect(await op("in-memory", "restore", "noRights", "message-deleted")).toEqual({
      ok: false,
      status: 403,
      errorCode: "Http.Forbidden",
      message: "the employee may not delete or restore documents (CanDeleteRestoreDocuments)",
    });
    expect(await op("in-memory", "restore", "inA", "message-deleted")).toEqual({
      ok: false,
      status: 403,
      errorCode: "Document.AccessDenied",
      message: "a document of the call is out of the employee's reach",
    });
  });
});

describe("an employee who does not reach every department learns nothing of ids out of reach (docs/security.md)", () => {
  // fff96f0 answered 404 Document.NotFound for an id that does not exist and 403 for one
  // out of reach: the difference told whether a document (or a message) exists.
  const denied = {
    ok: false,
    status: 403,
    errorCode: "Document.AccessDenied",
    message: "a document of the call is out of the employee's reach",
  };
  it.each(["delete", "restore"] as const)(
    "%s: an unknown document and one out of reach get the same 403",
    async (operation) => {
      // message-mixed: d1 in A (reached), d2 in B (not).
      const unknown = await op("in-memory", operation, "inA", "message-mixed", "no-such-document");
      const outOfReach = await op("in-memory", operation, "inA", "message-mixed", "d2");
      expect(unknown).toEqual(denied);
      expect(outOfReach).toEqual(denied);
    },
  );
  it.each(["delete", "restore"] as const)(
    "%s: an unknown message gets it too",
    async (operation) => {
      expect(await op("in-memory", operation, "inA", "no-such-message")).toEqual(denied);
    },
  );
  it("an employee who reaches every department is told what does not exist (404)", async () => {
    expect(
      await op("in-memory", "delete", "keeper", "message-live", "no-such-document"),
    ).toMatchObject({
      status: 404,
      errorCode: "Document.NotFound",
    });
    expect(await op("in-memory", "delete", "keeper", "no-such-message")).toMatchObject({
      status: 404,
      errorCode: "Message.NotFound",
    });
  });
});

describe("reach is needed for the documents a call changes, and only for them", () => {
  /** A message of the test's own: d1 in B, marked; d2 in A, not. */
  const half = async (messageMarked = false) => {
    await h.db.collection("messages").insertOne({
      boxId: BOX,
      messageId: "half",
      kind: "Message",
      isDeleted: messageMarked,
      version: 1,
      documents: [
        { documentId: "d1", departmentId: B, isDeleted: true },
        { documentId: "d2", departmentId: A, isDeleted: false },
      ],
    });
  };

  it("Delete of the whole message by someone in A: d1 (in B) is already marked, so only d2 changes: 200", async () => {
    await half();
    expect(await op("in-memory", "delete", "inA", "half")).toMatchObject({ ok: true });
    expect(marks(await stored("half"))).toEqual([true, true, true]);
  });

  it("Restore of the whole message by someone in A: d1 (in B) would change: 403, nothing changes", async () => {
    await half(true);
    expect(await op("in-memory", "restore", "inA", "half")).toMatchObject({ status: 403 });
    expect(marks(await stored("half"))).toEqual([true, true, false]);
  });

  it("Delete of the whole message by someone who reaches B only: d2 (in A) would change: 403, nothing changes", async () => {
    await half();
    expect(await op("in-memory", "delete", "picker", "half")).toMatchObject({ status: 403 });
    expect(marks(await stored("half"))).toEqual([false, true, false]);
  });

  it("Restore of one document in reach: that document and the message only", async () => {
    await h.db.collection("messages").insertOne({
      boxId: BOX,
      messageId: "both",
      kind: "Message",
      isDeleted: true,
      version: 1,
      documents: [
        { documentId: "d1", departmentId: A, isDeleted: true },
        { documentId: "d2", departmentId: B, isDeleted: true },
      ],
    });
    expect(await op("in-memory", "restore", "inA", "both", "d1")).toMatchObject({ ok: true });
    expect(marks(await stored("both"))).toEqual([false, false, true]);
    // d2 is out of reach: its restore is refused, and it keeps its mark.
    expect(await op("in-memory", "restore", "inA", "both", "d2")).toMatchObject({ status: 403 });
    expect(marks(await stored("both"))).toEqual([false, false, true]);
  });
});

describe("a lost race is decided again on fresh state", () => {
  const bump = (ref: { boxId: string; messageId: string }) =>
    h.db.collection("messages").updateOne(ref, { $inc: { version: 1 } });

  it("another writer changed the message between the read and the write: the call retries and lands once", async () => {
    let interruptions = 0;
    beforeSave = async (ref) => {
      if (interruptions++ === 0) await bump(ref);
    };
    const before = await stored("message-deleted");
    expect(await op("in-memory", "restore", "keeper", "message-deleted")).toMatchObject({
      ok: true,
    });
    expect(interruptions).toBe(2);
    const after = await stored("message-deleted");
    expect(marks(after)).toEqual([false, false, false]);
    // The other writer's change and ours: two versions.
    expect(after.version - (before.version ?? 0)).toBe(2);
  });

  it("another writer that changes the message before every write: 409 Message.ConcurrentChange after 100 tries, nothing of ours written", async () => {
    let interruptions = 0;
    beforeSave = async (ref) => {
      interruptions++;
      await bump(ref);
    };
    expect(await op("in-memory", "delete", "keeper", "message-live")).toEqual({
      ok: false,
      status: 409,
      errorCode: "Message.ConcurrentChange",
      message: "the message is being changed by other calls; try again",
    });
    expect(interruptions).toBe(100);
    expect(marks(await stored("message-live"))).toEqual([false, false, false]);
  });
});
