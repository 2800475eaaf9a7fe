/** SPEC §6.1: Delete and Restore of messages, templates and documents. */
import { create } from "@bufbuild/protobuf";
import { beforeEach, describe, expect, it } from "vitest";
import { DocumentService } from "../gen/docflow/api/v1/documents_pb";
import { loadFixture } from "../src/fixtures/load";
import { ENDED_BOX, HEAD, KEY, OTHER_BOX } from "./support/fixture";
import { legacy, useHarness } from "./support/harness";
import { call, type Outcome, type Protocol } from "./support/protocols";

const BOX = "b1000000-0000-4000-8000-000000000001";
// Department tree: HEAD ─ A ─ A1 ─ A1a ─ A1a1 ; HEAD ─ B
const A = "dep-a";
const A1 = "dep-a1";
const A1a = "dep-a1a";
const A1a1 = "dep-a1a1";
const B = "dep-b";

const USERS = {
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
type User = keyof typeof USERS;

const auth = (user: User) =>
  `ServiceAuth svcauth_api_client_id=${KEY}, svcauth_token=${USERS[user].token}`;

/** Messages: id → [message mark, [documentId, department, mark][]]. Each exists as a Message and as a Template. */
const MESSAGES: Record<string, [boolean, [string, string, boolean][]]> = {
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
const KINDS = ["Message", "Template"] as const;
const mid = (kind: string, name: string) => `${kind.toLowerCase()}-${name}`;

function fixture() {
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

const h = useHarness(fixture);
beforeEach(async () => {
  await loadFixture(h.db, fixture());
});

interface Stored {
  isDeleted: boolean;
  documents: { documentId: string; isDeleted: boolean }[];
  version: number;
}
async function stored(messageId: string, boxId = BOX): Promise<Stored> {
  const doc = await h.db.collection("messages").findOne({ boxId, messageId });
  if (!doc) throw new Error(`no message ${messageId}`);
  return doc as unknown as Stored;
}
const marks = (s: Stored) => [s.isDeleted, ...s.documents.map((d) => d.isDeleted)];

type Op = "restore" | "delete";
function op(
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
}

// Domain rules in memory, and over the wires that differ most: what the SDKs
// send and real gRPC. Status mapping on every protocol is auth.test.ts's job.
const PROTOCOLS_UNDER_TEST: Protocol[] = ["in-memory", "legacy-protobuf", "grpc"];

describe.each(PROTOCOLS_UNDER_TEST)("over %s", (protocol) => {
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
    expect(results.every((r) => r.ok || r.status === 409)).toBe(true);
    expect(ok).toBeGreaterThan(0);
    const after = await stored(messageId);
    // Every successful call incremented the version exactly once, and nothing else did.
    expect(after.version - before.version).toBe(ok);
    // Invariant: a marked message has all its documents marked.
    if (after.isDeleted) expect(after.documents.every((d) => d.isDeleted)).toBe(true);
  });
});

describe("fields other writers store are kept (SPEC §7: a write sets only what it changes)", () => {
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
    expect(results.every((r) => r.ok || r.status === 409)).toBe(true);
    const after = await stored(messageId);
    expect(after.version - (before.version ?? 0)).toBe(ok);
    // Which marks remain depends on the order the calls won in; what must hold is the
    // invariant (a marked message has every document marked) and one version per success.
    if (after.isDeleted) expect(after.documents.every((d) => d.isDeleted)).toBe(true);
    await expectExtrasKept();
  });
});
