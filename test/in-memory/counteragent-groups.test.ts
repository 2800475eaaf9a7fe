/**
 * docs/api.md §6.4: the rules of the counteragent-group family, through the
 * service's routes and interceptors in memory. The legacy wire as the SDKs
 * call it, paging while members move, and the races: the server tier
 * (test/server/counteragent-groups.test.ts).
 */
import { beforeEach, describe, expect, it } from "vitest";
import type { CounteragentMove } from "../../src/domain/counteragent-groups";
import { loadFixture } from "../../src/fixtures/load";
import {
  ACCOUNTING,
  ARCHIVE,
  type As,
  BOX,
  DEFAULT,
  DEFAULT_IDS,
  departmentsOf,
  ELSEWHERE,
  EMPTY_BOX,
  ENDED_BOX,
  fixture,
  groupCalls,
  NORTH,
  OTHER_BOX,
  PARTNER_IDS,
  PARTNERS,
  RACE_BOX,
  SALES,
  SUPPLIERS,
  shape,
  UUID,
} from "../support/counteragent-groups";
import { HEAD } from "../support/fixture";
import { useInMemory } from "../support/harness";
import { expectOk, type Protocol } from "../support/protocols";

/** What a test runs between an add's group check and its write. */
let beforeMove: ((move: CounteragentMove) => Promise<void>) | undefined;
const h = useInMemory(fixture, {
  groupHooks: { beforeMove: (move) => beforeMove?.(move) ?? Promise.resolve() },
});
/** Every test starts from the fixture: groups and memberships exactly as listed there. */
beforeEach(async () => {
  beforeMove = undefined;
  await h.db.collection("counteragentGroups").deleteMany({});
  await h.db.collection("counteragents").deleteMany({});
  await loadFixture(h.db, fixture());
});
const {
  expectEveryMemberInAnExistingGroup,
  createGroup,
  updateGroup,
  deleteGroup,
  getGroup,
  listGroups,
  addToGroup,
  membersOf,
  stored,
  storedGroups,
  groupIdsListed,
} = groupCalls(h);

describe.each(["in-memory"] satisfies Protocol[])("over %s", (p) => {
  describe("CreateCounteragentGroup: a new group, its id chosen by the service", () => {
    it("answers the group: a new GUID, the trimmed name, each department once", async () => {
      const group = expectOk(await createGroup(p, "  Key accounts \t", [SALES, NORTH, SALES]));
      expect(group.CounteragentGroupId).toMatch(UUID);
      expect(shape(group)).toMatchObject({ name: "Key accounts", departments: [SALES, NORTH] });
      expect(shape(expectOk(await getGroup(p, group.CounteragentGroupId)))).toEqual(shape(group));
      expect((await groupIdsListed()).at(-1)).toBe(group.CounteragentGroupId);
    });
    it("two groups get two ids", async () => {
      const a = expectOk(await createGroup(p, "One"));
      const b = expectOk(await createGroup(p, "Two"));
      expect(a.CounteragentGroupId).not.toBe(b.CounteragentGroupId);
    });
    it("no Departments, or an empty list: any department, and no Departments in the answer", async () => {
      for (const [name, list] of [
        ["Anyone", undefined],
        ["Anyone else", []],
      ] as const) {
        const group = expectOk(await createGroup(p, name, list));
        expect(departmentsOf(group)).toBeUndefined();
        expect(departmentsOf(expectOk(await getGroup(p, group.CounteragentGroupId)))).toBe(
          undefined,
        );
      }
    });
    it("the head department is a department of every box", async () => {
      const group = expectOk(await createGroup(p, "Head office", [HEAD]));
      expect(departmentsOf(group)).toEqual([HEAD]);
    });
  });

  describe("Name: 1 to 100 characters after trimming, unique within the box case-insensitively", () => {
    it.each([
      ["empty", ""],
      ["blank", "  \t "],
      ["101 characters", "x".repeat(101)],
      ["a control character", "Key\u0007accounts"],
    ])("%s: 400 CounteragentGroup.InvalidName, nothing created", async (_, name) => {
      expect(await createGroup(p, name)).toMatchObject({
        ok: false,
        status: 400,
        errorCode: "CounteragentGroup.InvalidName",
      });
      expect(await storedGroups()).toHaveLength(3);
    });
    it("100 characters (code points) after trimming are fine", async () => {
      const name = "𝔸".repeat(100);
      expect(expectOk(await createGroup(p, `  ${name}  `)).Name).toBe(name);
    });
    it.each(["Partners", "PARTNERS", "  partners "])(
      "%j when the box has Partners: 409 CounteragentGroup.DuplicateName, nothing created",
      async (name) => {
        expect(await createGroup(p, name)).toMatchObject({
          ok: false,
          status: 409,
          errorCode: "CounteragentGroup.DuplicateName",
        });
        expect(await storedGroups()).toHaveLength(3);
      },
    );
    it("case-insensitive beyond ASCII: Straße and STRASSE are one name", async () => {
      expectOk(await createGroup(p, "Straße"));
      expect(await createGroup(p, "STRASSE")).toMatchObject({ ok: false, status: 409 });
    });
    it("another box may have a group of the same name", async () => {
      expect(expectOk(await createGroup(p, "Partners", undefined, { boxId: EMPTY_BOX })).Name).toBe(
        "Partners",
      );
    });
    it("a name freed by a rename or a delete can be taken again", async () => {
      expectOk(await updateGroup(p, PARTNERS, { name: "Former partners" }));
      expectOk(await createGroup(p, "Partners"));
      expectOk(await deleteGroup(p, ARCHIVE));
      expectOk(await createGroup(p, "archive"));
    });
  });

  describe("Departments must be departments of the box (400); duplicates are collapsed", () => {
    it.each([
      ["unknown", "d-nowhere"],
      ["of another box", "d-elsewhere"],
    ])(
      "a department %s: 400 CounteragentGroup.UnknownDepartment, nothing created",
      async (_, id) => {
        expect(await createGroup(p, "Key accounts", [SALES, id])).toMatchObject({
          ok: false,
          status: 400,
          errorCode: "CounteragentGroup.UnknownDepartment",
        });
        expect(await storedGroups()).toHaveLength(3);
      },
    );
    it("a blank department id: 400", async () => {
      expect(await createGroup(p, "Key accounts", [" "])).toMatchObject({ ok: false, status: 400 });
    });
  });

  describe("UpdateCounteragentGroup: what is absent stays; the answer is the group after the change", () => {
    it("no changes at all: the group as it is", async () => {
      for (const changes of [undefined, {}]) {
        expect(shape(expectOk(await updateGroup(p, SUPPLIERS, changes)))).toEqual({
          id: SUPPLIERS,
          name: "Suppliers",
          departments: [SALES],
        });
      }
    });
    it("an absent GroupDepartments keeps the departments; an absent Name keeps the name", async () => {
      const renamed = expectOk(await updateGroup(p, SUPPLIERS, { name: " Vendors " }));
      expect(shape(renamed)).toEqual({ id: SUPPLIERS, name: "Vendors", departments: [SALES] });
      const moved = expectOk(
        await updateGroup(p, SUPPLIERS, { anyDepartment: false, departmentIds: [NORTH, NORTH] }),
      );
      expect(shape(moved)).toEqual({ id: SUPPLIERS, name: "Vendors", departments: [NORTH] });
      expect(shape(expectOk(await getGroup(p, SUPPLIERS)))).toEqual(shape(moved));
    });
    it("AnyDepartment false replaces the list with Departments", async () => {
      const group = expectOk(
        await updateGroup(p, PARTNERS, {
          anyDepartment: false,
          departmentIds: [ACCOUNTING, SALES],
        }),
      );
      expect(departmentsOf(group)).toEqual([ACCOUNTING, SALES]);
    });
    it("AnyDepartment true: any department, no Departments in the answer", async () => {
      for (const departmentIds of [undefined, []]) {
        await loadFixture(h.db, fixture());
        const group = expectOk(
          await updateGroup(p, SUPPLIERS, { anyDepartment: true, departmentIds }),
        );
        expect(shape(group)).toEqual({ id: SUPPLIERS, name: "Suppliers", departments: undefined });
        expect(departmentsOf(expectOk(await getGroup(p, SUPPLIERS)))).toBeUndefined();
      }
    });
    it.each([
      [
        "AnyDepartment true with departments listed",
        { anyDepartment: true, departmentIds: [NORTH] },
      ],
      ["AnyDepartment false with no Departments", { anyDepartment: false }],
      ["AnyDepartment false with an empty list", { anyDepartment: false, departmentIds: [] }],
      ["a blank Name", { name: "  ", anyDepartment: false, departmentIds: [NORTH] }],
      ["an unknown department", { name: "Vendors", anyDepartment: false, departmentIds: ["d-x"] }],
    ])("%s: 400, nothing changes", async (_, changes) => {
      expect(await updateGroup(p, SUPPLIERS, changes)).toMatchObject({ ok: false, status: 400 });
      expect(shape(expectOk(await getGroup(p, SUPPLIERS)))).toEqual({
        id: SUPPLIERS,
        name: "Suppliers",
        departments: [SALES],
      });
    });
    it("another group's name, in any case: 409, nothing changes; its own name in another case: 200", async () => {
      expect(await updateGroup(p, SUPPLIERS, { name: "pARTNERS" })).toMatchObject({
        ok: false,
        status: 409,
        errorCode: "CounteragentGroup.DuplicateName",
      });
      expect(expectOk(await getGroup(p, SUPPLIERS)).Name).toBe("Suppliers");
      expect(expectOk(await updateGroup(p, SUPPLIERS, { name: "SUPPLIERS" })).Name).toBe(
        "SUPPLIERS",
      );
    });
  });

  describe("the default group is not a record", () => {
    it("GetCounteragentGroup answers {CounteragentGroupId: 000…0, Name: Default}, no Departments", async () => {
      expect(shape(expectOk(await getGroup(p, DEFAULT)))).toEqual({
        id: DEFAULT,
        name: "Default",
        departments: undefined,
      });
    });
    it("Update and Delete of it: 400 CounteragentGroup.DefaultGroup, nothing changes", async () => {
      for (const outcome of [
        await updateGroup(p, DEFAULT, { name: "Mine" }),
        await deleteGroup(p, DEFAULT),
      ]) {
        expect(outcome).toMatchObject({
          ok: false,
          status: 400,
          errorCode: "CounteragentGroup.DefaultGroup",
        });
      }
      expect((await membersOf(DEFAULT)).ids).toEqual(DEFAULT_IDS);
    });
    it("GetCounteragentGroups does not list it", async () => {
      const list = expectOk(await listGroups(p));
      expect(list.Groups.map((g) => g.CounteragentGroupId)).not.toContain(DEFAULT);
      expect(list.TotalCount).toBe(3);
    });
  });

  describe("an unknown group: 404 CounteragentGroup.NotFound", () => {
    it.each([
      ["unknown", "g-nowhere"],
      ["of another box", ELSEWHERE],
    ])("a group %s, on Get, Update, Delete and Add", async (_, groupId) => {
      for (const outcome of [
        await getGroup(p, groupId),
        await updateGroup(p, groupId, { name: "Renamed" }),
        await deleteGroup(p, groupId),
        await addToGroup(p, "d-01", groupId),
      ]) {
        expect(outcome).toMatchObject({
          ok: false,
          status: 404,
          errorCode: "CounteragentGroup.NotFound",
        });
      }
      expect((await stored("d-01"))?.counteragentGroupId).toBe(DEFAULT);
    });
  });

  describe("GetCounteragentGroups: by creation time, then id; page of count; TotalCount", () => {
    it("creation time first, then id; new groups come last", async () => {
      const a = expectOk(await createGroup(p, "Alpha")).CounteragentGroupId;
      // Beta must be created at a later millisecond than Alpha: in the same
      // one, the ids (random) would decide their order.
      const alphaAt = Date.now();
      while (Date.now() <= alphaAt) await new Promise((r) => setImmediate(r));
      const b = expectOk(await createGroup(p, "Beta")).CounteragentGroupId;
      const list = expectOk(await listGroups(p));
      expect(list.Groups.map((g) => g.CounteragentGroupId)).toEqual([
        PARTNERS,
        SUPPLIERS,
        ARCHIVE,
        a,
        b,
      ]);
      expect(list.TotalCount).toBe(5);
      expect(list.Groups.map(shape).slice(0, 3)).toEqual([
        { id: PARTNERS, name: "Partners", departments: undefined },
        { id: SUPPLIERS, name: "Suppliers", departments: [SALES] },
        { id: ARCHIVE, name: "Archive", departments: undefined },
      ]);
    });
    it("page and count; a page past the end is empty with the right TotalCount", async () => {
      const pageOf = async (page: number, count: number) => {
        const list = expectOk(await listGroups(p, { page, count }));
        return [list.Groups.map((g) => g.CounteragentGroupId), list.TotalCount];
      };
      expect(await pageOf(1, 2)).toEqual([[PARTNERS, SUPPLIERS], 3]);
      expect(await pageOf(2, 2)).toEqual([[ARCHIVE], 3]);
      expect(await pageOf(3, 2)).toEqual([[], 3]);
      expect(await pageOf(2_147_483_647, 100)).toEqual([[], 3]);
    });
    it("a box with no groups: no Groups, TotalCount 0", async () => {
      const list = expectOk(await listGroups(p, {}, { boxId: EMPTY_BOX }));
      expect(list).toMatchObject({ Groups: [], TotalCount: 0 });
    });
    it.each([{ page: 0 }, { page: -1 }, { count: 0 }, { count: 101 }])(
      "%o: 400",
      async (paging) => {
        expect(await listGroups(p, paging)).toMatchObject({ ok: false, status: 400 });
      },
    );
  });

  describe("AddCounteragentToGroup moves a counteragent into a group", () => {
    it("it leaves its old group and is listed last in the new one; both TotalCounts follow", async () => {
      const before = Date.now();
      expectOk(await addToGroup(p, "d-02", PARTNERS));
      expect(await membersOf(PARTNERS)).toEqual({ ids: [...PARTNER_IDS, "d-02"], total: 6 });
      expect(await membersOf(DEFAULT)).toEqual({
        ids: DEFAULT_IDS.filter((id) => id !== "d-02"),
        total: 5,
      });
      const doc = await stored("d-02");
      expect(doc?.counteragentGroupId).toBe(PARTNERS);
      expect(new Date(doc?.joinedGroupAt).getTime()).toBeGreaterThanOrEqual(before);

      expectOk(await addToGroup(p, "p-01", SUPPLIERS));
      expect(await membersOf(PARTNERS)).toEqual({
        ids: ["p-02", "p-03", "p-04", "p-05", "d-02"],
        total: 5,
      });
      expect(await membersOf(SUPPLIERS)).toEqual({ ids: ["p-01"], total: 1 });
    });
    it("into the default group: how a counteragent leaves a group", async () => {
      expectOk(await addToGroup(p, "p-03", DEFAULT));
      expect((await membersOf(DEFAULT)).ids).toEqual([...DEFAULT_IDS, "p-03"]);
      expect((await membersOf(PARTNERS)).total).toBe(4);
    });
    it("into the group it is already in: 200, nothing changes", async () => {
      const before = await stored("p-02");
      expectOk(await addToGroup(p, "p-02", PARTNERS));
      expectOk(await addToGroup(p, "d-01", DEFAULT));
      expect(await stored("p-02")).toEqual(before);
      expect((await membersOf(PARTNERS)).ids).toEqual(PARTNER_IDS);
    });
    it.each([
      ["unknown", "nobody"],
      ["of another box", "x-01"],
    ])("a counteragent %s: 404 Counteragent.NotFound", async (_, counteragentBoxId) => {
      expect(await addToGroup(p, counteragentBoxId, PARTNERS)).toMatchObject({
        ok: false,
        status: 404,
        errorCode: "Counteragent.NotFound",
      });
      expect((await stored("x-01", OTHER_BOX))?.counteragentGroupId).toBe(ELSEWHERE);
    });
    it.each([
      ["p-06", "RejectsMe", SUPPLIERS],
      ["d-07", "InvitesMe", PARTNERS],
    ])("%s (%s): 409 Counteragent.NotMyCounteragent, nothing changes", async (id, _, group) => {
      const before = await stored(id);
      expect(await addToGroup(p, id, group)).toMatchObject({
        ok: false,
        status: 409,
        errorCode: "Counteragent.NotMyCounteragent",
      });
      expect(await stored(id)).toEqual(before);
    });
  });

  describe("DeleteCounteragentGroup moves every member to the default group, then removes the group", () => {
    it("members (of any status) join the default group; the group is gone everywhere", async () => {
      expectOk(await deleteGroup(p, PARTNERS));
      expect(await getGroup(p, PARTNERS)).toMatchObject({ ok: false, status: 404 });
      expect(await groupIdsListed(p)).toEqual([SUPPLIERS, ARCHIVE]);
      expect(await membersOf(DEFAULT)).toEqual({
        ids: [...DEFAULT_IDS, ...PARTNER_IDS],
        total: 11,
      });
      expect((await stored("p-06"))?.counteragentGroupId).toBe(DEFAULT);
      expect(
        await h.db.collection("counteragents").countDocuments({ counteragentGroupId: PARTNERS }),
      ).toBe(0);
      expect(await storedGroups()).toHaveLength(2);
      expect(await addToGroup(p, "d-01", PARTNERS)).toMatchObject({ ok: false, status: 404 });
    });
    it("a second Delete: 404", async () => {
      expectOk(await deleteGroup(p, ARCHIVE));
      expect(await deleteGroup(p, ARCHIVE)).toMatchObject({
        ok: false,
        status: 404,
        errorCode: "CounteragentGroup.NotFound",
      });
    });
    it("a group marked as being deleted (a Delete stopped half-way) is gone for the other calls; a Delete finishes the job", async () => {
      await h.db
        .collection("counteragentGroups")
        .updateOne(
          { boxId: BOX, counteragentGroupId: PARTNERS },
          { $set: { deletingSince: new Date() } },
        );
      expect(await getGroup(p, PARTNERS)).toMatchObject({ ok: false, status: 404 });
      expect(await groupIdsListed(p)).toEqual([SUPPLIERS, ARCHIVE]);
      expect(await addToGroup(p, "d-01", PARTNERS)).toMatchObject({ ok: false, status: 404 });
      expect(await updateGroup(p, PARTNERS, { name: "Back" })).toMatchObject({
        ok: false,
        status: 404,
      });
      expectOk(await deleteGroup(p, PARTNERS));
      expect(await storedGroups()).toHaveLength(2);
      expect((await membersOf(DEFAULT)).total).toBe(11);
    });
  });

  describe("rights and the order of checks (docs/api.md §4–5)", () => {
    const calls = {
      create: (as: As) => createGroup(p, "Key accounts", undefined, as),
      update: (as: As) => updateGroup(p, PARTNERS, { name: "Renamed" }, as),
      delete: (as: As) => deleteGroup(p, PARTNERS, as),
      get: (as: As) => getGroup(p, PARTNERS, as),
      list: (as: As) => listGroups(p, {}, as),
      add: (as: As) => addToGroup(p, "d-01", PARTNERS, as),
    };
    it.each(Object.keys(calls) as (keyof typeof calls)[])(
      "%s: 403 without both rights or without access to the box, 402 when the subscription ended",
      async (name) => {
        const run = calls[name];
        for (const user of ["adminOnly", "managerOnly", "outsider"] as const) {
          expect(await run({ user }), user).toMatchObject({ ok: false, status: 403 });
        }
        expect(await run({ boxId: ENDED_BOX })).toMatchObject({ ok: false, status: 402 });
        expect(await storedGroups()).toHaveLength(3);
        expect((await stored("d-01"))?.counteragentGroupId).toBe(DEFAULT);
      },
    );
    it("400 before 403: a bad name from a caller without access", async () => {
      expect(await createGroup(p, "", undefined, { user: "outsider" })).toMatchObject({
        ok: false,
        status: 400,
      });
    });
    it("403 before 404, 403 before an unknown department (a 400 that tells about the box)", async () => {
      expect(await getGroup(p, "g-nowhere", { user: "adminOnly" })).toMatchObject({ status: 403 });
      expect(await createGroup(p, "X", ["d-x"], { user: "managerOnly" })).toMatchObject({
        status: 403,
      });
    });
  });
});

describe("an add racing a Delete of its group (docs/api.md §6.4: no member left in a group that is gone)", () => {
  it("an add that checked the group before a Delete and writes after it: moved back to the default group, 404", async () => {
    const group = expectOk(
      await createGroup("in-memory", "Doomed", undefined, { boxId: RACE_BOX }),
    ).CounteragentGroupId;
    beforeMove = async () => {
      // The add has seen the group; the whole Delete runs before its write.
      expectOk(await deleteGroup("in-memory", group, { boxId: RACE_BOX }));
    };
    const add = await addToGroup("in-memory", "r-07", group, { boxId: RACE_BOX });
    expect(add).toMatchObject({ ok: false, status: 404, errorCode: "CounteragentGroup.NotFound" });
    expect((await stored("r-07", RACE_BOX))?.counteragentGroupId).toBe(DEFAULT);
    await expectEveryMemberInAnExistingGroup();
  });

  it("an add whose second look finds the group being deleted: moved back, 404; a Delete then finishes", async () => {
    const group = expectOk(
      await createGroup("in-memory", "Doomed", undefined, { boxId: RACE_BOX }),
    ).CounteragentGroupId;
    beforeMove = async () => {
      // A Delete marks the group and stops there (a crash between mark and removal).
      await h.db
        .collection("counteragentGroups")
        .updateOne(
          { boxId: RACE_BOX, counteragentGroupId: group },
          { $set: { deletingSince: new Date() } },
        );
    };
    expect(await addToGroup("in-memory", "r-08", group, { boxId: RACE_BOX })).toMatchObject({
      ok: false,
      status: 404,
    });
    expect((await stored("r-08", RACE_BOX))?.counteragentGroupId).toBe(DEFAULT);
    beforeMove = undefined;
    expectOk(await deleteGroup("in-memory", group, { boxId: RACE_BOX }));
    expect(await storedGroups(RACE_BOX)).toHaveLength(0);
  });

  it("an add that loses its write every time: 409 Counteragent.ConcurrentChange after 100 tries, the counteragent where the other writer put it", async () => {
    let interruptions = 0;
    beforeMove = async (move) => {
      interruptions++;
      // Another writer moves it first, each time.
      await h.db
        .collection("counteragents")
        .updateOne(
          { boxId: move.boxId, counteragentBoxId: move.counteragentBoxId },
          { $set: { counteragentGroupId: interruptions % 2 ? ARCHIVE : SUPPLIERS } },
        );
    };
    expect(await addToGroup("in-memory", "d-01", PARTNERS)).toEqual({
      ok: false,
      status: 409,
      errorCode: "Counteragent.ConcurrentChange",
      message: "the counteragent is being changed by other calls; try again",
    });
    expect(interruptions).toBe(100);
    expect((await stored("d-01"))?.counteragentGroupId).toBe(SUPPLIERS);
  });

  it("an add into a group that does not exist leaves the counteragent where it was", async () => {
    expect(await addToGroup("in-memory", "p-01", "g-nope")).toMatchObject({
      status: 404,
      errorCode: "CounteragentGroup.NotFound",
    });
    expect((await stored("p-01"))?.counteragentGroupId).toBe(PARTNERS);
  });
});

describe("the words of each refusal", () => {
  it.each([
    [
      "an unknown group",
      () => getGroup("in-memory", "g-nope"),
      404,
      "CounteragentGroup.NotFound",
      'the box has no counteragent group "g-nope"',
    ],
    [
      "an unknown counteragent",
      () => addToGroup("in-memory", "c-nope", PARTNERS),
      404,
      "Counteragent.NotFound",
      'the box has no counteragent "c-nope"',
    ],
    [
      "a counteragent that is not ours",
      () => addToGroup("in-memory", "d-07", PARTNERS),
      409,
      "Counteragent.NotMyCounteragent",
      "the counteragent's status is InvitesMe, not IsMyCounteragent",
    ],
    [
      "the default group changed",
      () => updateGroup("in-memory", DEFAULT, { name: "x" }),
      400,
      "CounteragentGroup.DefaultGroup",
      "the default group cannot be changed",
    ],
    [
      "the default group deleted",
      () => deleteGroup("in-memory", DEFAULT),
      400,
      "CounteragentGroup.DefaultGroup",
      "the default group cannot be deleted",
    ],
    [
      "an unknown department",
      () => createGroup("in-memory", "X", ["d-nope"]),
      400,
      "CounteragentGroup.UnknownDepartment",
      'the box has no department "d-nope"',
    ],
    [
      "AnyDepartment true with departments",
      () => updateGroup("in-memory", PARTNERS, { anyDepartment: true, departmentIds: [SALES] }),
      400,
      "CounteragentGroup.InvalidDepartments",
      "AnyDepartment is true: Departments must not list departments",
    ],
    [
      "AnyDepartment false with none",
      () => updateGroup("in-memory", PARTNERS, { anyDepartment: false }),
      400,
      "CounteragentGroup.InvalidDepartments",
      "AnyDepartment is false: Departments must list at least one department",
    ],
    [
      "a caller without the rights",
      () => getGroup("in-memory", PARTNERS, { user: "adminOnly" }),
      403,
      "Http.Forbidden",
      "only an administrator of the box with CanManageCounteragents may manage counteragent groups",
    ],
    [
      "a page of 0",
      () => listGroups("in-memory", { page: 0 }),
      400,
      "Http.BadRequest",
      "page must be an integer from 1",
    ],
    [
      "a count of 0",
      () => listGroups("in-memory", { count: 0 }),
      400,
      "Http.BadRequest",
      "count must be an integer from 1 to 100",
    ],
    [
      "a count of 101",
      () => listGroups("in-memory", { count: 101 }),
      400,
      "Http.BadRequest",
      "count must be an integer from 1 to 100",
    ],
    [
      "no boxId",
      () => getGroup("in-memory", PARTNERS, { boxId: "" }),
      400,
      "Http.BadRequest",
      "boxId is required",
    ],
    [
      "no group id",
      () => getGroup("in-memory", ""),
      400,
      "Http.BadRequest",
      "counteragentGroupId is required",
    ],
    [
      "no counteragent id",
      () => addToGroup("in-memory", "", PARTNERS),
      400,
      "Http.BadRequest",
      "counteragentBoxId is required",
    ],
    [
      "a blank department id",
      () => createGroup("in-memory", "X", [" "]),
      400,
      "Http.BadRequest",
      "DepartmentIds is required",
    ],
  ] as const)("%s", async (_name, send, status, errorCode, message) => {
    expect(await send()).toEqual({ ok: false, status, errorCode, message });
  });

  it("the limits of a page: page 1 and count 1 and 100 are fine", async () => {
    expect(expectOk(await listGroups("in-memory", { page: 1, count: 1 })).Groups).toHaveLength(1);
    expect(expectOk(await listGroups("in-memory", { count: 100 })).TotalCount).toBe(3);
  });
});
