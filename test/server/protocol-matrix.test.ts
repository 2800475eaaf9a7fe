/**
 * The six-protocol matrix, where behaviour differs by protocol: every
 * operation's answer as each wire carries it (legacy JSON's string booleans,
 * proto2 required fields, empty bodies, keys on the wire), and each kind of
 * error with its code (ErrorInfo on gRPC/Connect, X-Service-ErrorCode on the
 * legacy paths). The rules behind the answers are tested once, in memory
 * (test/in-memory/); the order of checks per protocol is in auth.test.ts.
 * Expected answers are written out here, apart from src/.
 */
import { create, isFieldSet } from "@bufbuild/protobuf";
import { beforeEach, describe, expect, it } from "vitest";
import { CounteragentService } from "../../gen/docflow/api/v1/counteragents_pb";
import { DocumentService } from "../../gen/docflow/api/v1/documents_pb";
import { SubscriptionService } from "../../gen/docflow/api/v1/subscriptions_pb";
import {
  CounteragentGroupSchema,
  CounteragentGroupToCreateSchema,
  CounteragentGroupToUpdateSchema,
  DepartmentsInGroupSchema,
} from "../../gen/docflow/legacy/counteragent_groups_pb";
import { CounteragentFromGroupResponseSchema } from "../../gen/docflow/legacy/counteragents_pb";
import {
  SubscriptionSchema,
  SubscriptionsToUpdateSchema,
} from "../../gen/docflow/legacy/subscriptions_pb";
import { loadFixture } from "../../src/fixtures/load";
import { ENDED_BOX, HEAD, KEY } from "../support/fixture";
import { useHarness } from "../support/harness";
import { call, expectOk, type Outcome, PROTOCOLS } from "../support/protocols";

const BOX = "b5000000-0000-4000-8000-000000000001";
const GROUP = "g-partners";
const SALES = "d-sales";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const auth = (token: string) => `ServiceAuth svcauth_api_client_id=${KEY}, svcauth_token=${token}`;
const ADMIN = auth("admin-token");
const CLERK = auth("clerk-token");

function fixture() {
  return {
    apiClients: [{ apiKey: KEY }],
    users: [
      { userId: "u-admin", tokens: [{ token: "admin-token" }] },
      { userId: "u-clerk", tokens: [{ token: "clerk-token" }] },
    ],
    boxes: [
      {
        boxId: BOX,
        departments: [{ departmentId: SALES }],
        employees: [
          {
            userId: "u-admin",
            isAdministrator: true,
            canManageCounteragents: true,
            canDeleteRestoreDocuments: true,
            documentAccessLevel: "AllDocuments",
          },
          { userId: "u-clerk", subscriptions: { News: false, ChatMessages: false } },
        ],
        counteragentGroups: [{ counteragentGroupId: GROUP, name: "Partners" }],
        counteragents: [
          {
            counteragentBoxId: "c-1",
            counteragentGroupId: GROUP,
            joinedGroupAt: "2026-01-01T00:00:00Z",
          },
          {
            counteragentBoxId: "c-2",
            counteragentGroupId: GROUP,
            joinedGroupAt: "2026-01-02T00:00:00Z",
          },
          { counteragentBoxId: "c-3", joinedGroupAt: "2026-01-03T00:00:00Z" },
        ],
        messages: [
          {
            messageId: "m-marked",
            isDeleted: true,
            documents: [{ documentId: "d1", departmentId: HEAD, isDeleted: true }],
          },
          { messageId: "m-live", documents: [{ documentId: "d1", departmentId: HEAD }] },
        ],
      },
      {
        boxId: ENDED_BOX,
        apiSubscriptionEndsAt: "2020-01-01T00:00:00Z",
        employees: [{ userId: "u-admin", isAdministrator: true }],
      },
    ],
  };
}

const h = useHarness(fixture);
beforeEach(async () => {
  await h.db.collection("counteragentGroups").deleteMany({});
  await loadFixture(h.db, fixture());
});

const subs = SubscriptionService.method;
const docs = DocumentService.method;
const groups = CounteragentService.method;

const CATALOG_CLERK = [
  ["CounteragentInvitation", true],
  ["CounteragentInvitationResponses", true],
  ["NewIncomingDocuments", true],
  ["CounteragentSignatures", true],
  ["CounteragentSignatureDenials", true],
  ["ResolutionRequests", true],
  ["ResolutionResults", true],
  ["EmployeeRequests", true],
  ["News", false],
  ["ChatMessages", false],
] as const;
const catalog = (changes: Record<string, boolean> = {}) =>
  CATALOG_CLERK.map(([Id, IsSubscribed]) => ({ Id, IsSubscribed: changes[Id] ?? IsSubscribed }));
const list = (s: { Subscriptions: { Id: string; IsSubscribed: boolean }[] }) =>
  s.Subscriptions.map(({ Id, IsSubscribed }) => ({ Id, IsSubscribed }));
const stored = (collection: string, filter: Record<string, unknown>) =>
  h.db.collection(collection).findOne({ boxId: BOX, ...filter });

describe.each(PROTOCOLS)("every operation's answer over %s", (protocol) => {
  it("GetSubscriptions: the whole catalog in order, false values on the wire", async () => {
    const res = expectOk(
      await call(
        h,
        protocol,
        subs.getSubscriptions,
        create(subs.getSubscriptions.input, { boxId: BOX, userId: "u-clerk" }),
        ADMIN,
      ),
    );
    expect(list(res)).toEqual(catalog());
  });

  it("UpdateSubscriptions: the catalog after the change, and the change stored", async () => {
    const res = expectOk(
      await call(
        h,
        protocol,
        subs.updateSubscriptions,
        create(subs.updateSubscriptions.input, {
          boxId: BOX,
          userId: "u-clerk",
          subscriptions: create(SubscriptionsToUpdateSchema, {
            Subscriptions: [
              create(SubscriptionSchema, { Id: "News", IsSubscribed: true }),
              create(SubscriptionSchema, { Id: "EmployeeRequests", IsSubscribed: false }),
            ],
          }),
        }),
        CLERK,
      ),
    );
    expect(list(res)).toEqual(catalog({ News: true, EmployeeRequests: false }));
    expect((await stored("employees", { userId: "u-clerk" }))?.subscriptions).toEqual({
      News: true,
      ChatMessages: false,
      EmployeeRequests: false,
    });
  });

  it("Restore and Delete: success with nothing in the answer, the marks stored", async () => {
    const restored = await call(
      h,
      protocol,
      docs.restore,
      create(docs.restore.input, { boxId: BOX, messageId: "m-marked" }),
      ADMIN,
    );
    expect(restored).toMatchObject({ ok: true });
    const deleted = await call(
      h,
      protocol,
      docs.delete,
      create(docs.delete.input, { boxId: BOX, messageId: "m-live" }),
      ADMIN,
    );
    expect(deleted).toMatchObject({ ok: true });
    expect(await stored("messages", { messageId: "m-marked" })).toMatchObject({
      isDeleted: false,
      documents: [{ documentId: "d1", isDeleted: false }],
    });
    expect(await stored("messages", { messageId: "m-live" })).toMatchObject({
      isDeleted: true,
      documents: [{ documentId: "d1", isDeleted: true }],
    });
  });

  it("GetCounteragentsFromGroup: a walk of pages of one, the key on the wire until a page is empty", async () => {
    const page = async (after?: string) =>
      expectOk(
        await call(
          h,
          protocol,
          groups.getCounteragentsFromGroup,
          create(groups.getCounteragentsFromGroup.input, {
            boxId: BOX,
            counteragentGroupId: GROUP,
            count: 1,
            ...(after ? { afterIndexKey: after } : {}),
          }),
          ADMIN,
        ),
      );
    const keyOn = (p: Awaited<ReturnType<typeof page>>) =>
      isFieldSet(p, CounteragentFromGroupResponseSchema.field.AfterIndexKey);
    const first = await page();
    expect([first.CounteragentBoxId, first.TotalCount, keyOn(first)]).toEqual([["c-1"], 2, true]);
    const second = await page(first.AfterIndexKey);
    expect([second.CounteragentBoxId, second.TotalCount, keyOn(second)]).toEqual([
      ["c-2"],
      2,
      true,
    ]);
    const last = await page(second.AfterIndexKey);
    expect([last.CounteragentBoxId, last.TotalCount, keyOn(last)]).toEqual([[], 2, false]);
  });

  it("CreateCounteragentGroup, then Get, GetGroups, Update, Add, Delete: each answer as docs/api.md shows it", async () => {
    const created = expectOk(
      await call(
        h,
        protocol,
        groups.createCounteragentGroup,
        create(groups.createCounteragentGroup.input, {
          boxId: BOX,
          group: create(CounteragentGroupToCreateSchema, {
            Name: "Key accounts",
            Departments: create(DepartmentsInGroupSchema, { DepartmentIds: [SALES] }),
          }),
        }),
        ADMIN,
      ),
    );
    expect(created.CounteragentGroupId).toMatch(UUID);
    expect([created.Name, created.Departments?.DepartmentIds]).toEqual(["Key accounts", [SALES]]);
    const id = created.CounteragentGroupId;

    const got = expectOk(
      await call(
        h,
        protocol,
        groups.getCounteragentGroup,
        create(groups.getCounteragentGroup.input, { boxId: BOX, counteragentGroupId: GROUP }),
        ADMIN,
      ),
    );
    // An any-department group has no Departments on the wire at all.
    expect([
      got.CounteragentGroupId,
      got.Name,
      isFieldSet(got, CounteragentGroupSchema.field.Departments),
    ]).toEqual([GROUP, "Partners", false]);

    const listed = expectOk(
      await call(
        h,
        protocol,
        groups.getCounteragentGroups,
        create(groups.getCounteragentGroups.input, { boxId: BOX }),
        ADMIN,
      ),
    );
    expect([listed.Groups.map((g) => g.CounteragentGroupId), listed.TotalCount]).toEqual([
      [GROUP, id],
      2,
    ]);

    const updated = expectOk(
      await call(
        h,
        protocol,
        groups.updateCounteragentGroup,
        create(groups.updateCounteragentGroup.input, {
          boxId: BOX,
          counteragentGroupId: id,
          changes: create(CounteragentGroupToUpdateSchema, { Name: "Key accounts 2" }),
        }),
        ADMIN,
      ),
    );
    expect([updated.Name, updated.Departments?.DepartmentIds]).toEqual(["Key accounts 2", [SALES]]);

    expect(
      await call(
        h,
        protocol,
        groups.addCounteragentToGroup,
        create(groups.addCounteragentToGroup.input, {
          boxId: BOX,
          counteragentBoxId: "c-3",
          counteragentGroupId: id,
        }),
        ADMIN,
      ),
    ).toMatchObject({ ok: true });
    expect((await stored("counteragents", { counteragentBoxId: "c-3" }))?.counteragentGroupId).toBe(
      id,
    );

    expect(
      await call(
        h,
        protocol,
        groups.deleteCounteragentGroup,
        create(groups.deleteCounteragentGroup.input, { boxId: BOX, counteragentGroupId: id }),
        ADMIN,
      ),
    ).toMatchObject({ ok: true });
    expect((await stored("counteragents", { counteragentBoxId: "c-3" }))?.counteragentGroupId).toBe(
      HEAD,
    );
    expect(await stored("counteragentGroups", { counteragentGroupId: id })).toBeNull();
  });
});

describe.each(PROTOCOLS)("each kind of error over %s: its status and its code", (protocol) => {
  const cases: [string, () => Promise<Outcome<unknown>>, number, string][] = [
    [
      "400 a domain code: an unknown subscription Id",
      () =>
        call(
          h,
          protocol,
          subs.updateSubscriptions,
          create(subs.updateSubscriptions.input, {
            boxId: BOX,
            userId: "u-clerk",
            subscriptions: create(SubscriptionsToUpdateSchema, {
              Subscriptions: [create(SubscriptionSchema, { Id: "Weather", IsSubscribed: true })],
            }),
          }),
          CLERK,
        ),
      400,
      "Subscriptions.UnknownId",
    ],
    [
      "401 no credentials",
      () =>
        call(
          h,
          protocol,
          subs.getSubscriptions,
          create(subs.getSubscriptions.input, { boxId: BOX, userId: "u-clerk" }),
        ),
      401,
      "Http.Unauthorized",
    ],
    [
      "402 the box's subscription ended",
      () =>
        call(
          h,
          protocol,
          subs.getSubscriptions,
          create(subs.getSubscriptions.input, { boxId: ENDED_BOX, userId: "u-admin" }),
          ADMIN,
        ),
      402,
      "Http.PaymentRequired",
    ],
    [
      "403 missing rights",
      () =>
        call(
          h,
          protocol,
          docs.restore,
          create(docs.restore.input, { boxId: BOX, messageId: "m-marked" }),
          CLERK,
        ),
      403,
      "Http.Forbidden",
    ],
    [
      "404 a domain code: no such employee",
      () =>
        call(
          h,
          protocol,
          subs.getSubscriptions,
          create(subs.getSubscriptions.input, { boxId: BOX, userId: "u-nobody" }),
          ADMIN,
        ),
      404,
      "Employee.NotFound",
    ],
    [
      "409 a domain code: a repeated Restore",
      () =>
        call(
          h,
          protocol,
          docs.restore,
          create(docs.restore.input, { boxId: BOX, messageId: "m-live" }),
          ADMIN,
        ),
      409,
      "Restore.AlreadyRestored",
    ],
  ];
  it.each(cases)("%s", async (_name, send, status, errorCode) => {
    expect(await send()).toMatchObject({ ok: false, status, errorCode });
  });
});
