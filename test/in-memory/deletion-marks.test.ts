/**
 * SPEC §6.1: the rules of Delete and Restore of messages, templates and
 * documents, through the service's routes and interceptors in memory. The
 * wire (legacy 200 with an empty body), concurrency over real transports and
 * other writers' fields: test/server/deletion-marks.test.ts.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { loadFixture } from "../../src/fixtures/load";
import { BOX, deletionMarks, fixture, KINDS, marks, mid } from "../support/deletion-marks";
import { ENDED_BOX } from "../support/fixture";
import { useInMemory } from "../support/harness";
import type { Protocol } from "../support/protocols";

const h = useInMemory(fixture);
beforeEach(async () => {
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
