/** SPEC §6.4: the counteragent-group family, rule by rule, then its races. */
import { create, fromBinary, isFieldSet, toBinary } from "@bufbuild/protobuf";
import { beforeEach, describe, expect, it } from "vitest";
import { CounteragentService } from "../gen/docflow/api/v1/counteragents_pb";
import {
  type CounteragentGroup,
  CounteragentGroupDepartmentPatchSchema,
  CounteragentGroupSchema,
  CounteragentGroupsListSchema,
  CounteragentGroupToCreateSchema,
  CounteragentGroupToUpdateSchema,
  DepartmentsInGroupSchema,
} from "../gen/docflow/legacy/counteragent_groups_pb";
import type { CounteragentMove } from "../src/domain/counteragent-groups";
import { loadFixture } from "../src/fixtures/load";
import { HEAD, KEY } from "./support/fixture";
import { legacy, useHarness } from "./support/harness";
import { call, expectOk, type Protocol } from "./support/protocols";

const DEFAULT = HEAD;
const BOX = "b6000000-0000-4000-8000-000000000001";
const EMPTY_BOX = "b6000000-0000-4000-8000-000000000002";
const OTHER_BOX = "b6000000-0000-4000-8000-000000000003";
const ENDED_BOX = "b6000000-0000-4000-8000-000000000004";
const RACE_BOX = "b6000000-0000-4000-8000-000000000005";
const SALES = "d-sales";
const NORTH = "d-north";
const ACCOUNTING = "d-accounting";
const PARTNERS = "g-partners";
const SUPPLIERS = "g-suppliers";
/** Sorts first by id, but was created last: creation time comes first. */
const ARCHIVE = "g-archive";
const ELSEWHERE = "g-elsewhere";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const USERS = {
  admin: { isAdministrator: true, canManageCounteragents: true },
  adminOnly: { isAdministrator: true, canManageCounteragents: false },
  managerOnly: { isAdministrator: false, canManageCounteragents: true },
  outsider: { isAdministrator: true, canManageCounteragents: true },
} as const;
type User = keyof typeof USERS;
const auth = (user: User) =>
  `ServiceAuth svcauth_api_client_id=${KEY}, svcauth_token=${user}-token`;

const PARTNER_IDS = ["p-01", "p-02", "p-03", "p-04", "p-05"];
const DEFAULT_IDS = ["d-01", "d-02", "d-03", "d-04", "d-05", "d-06"];
const RACERS = Array.from({ length: 40 }, (_, i) => `r-${String(i).padStart(2, "0")}`);

function fixture() {
  const employee = (user: User) => ({ userId: `u-${user}`, ...USERS[user] });
  const joined = (month: number, day: number) =>
    `2026-${String(month).padStart(2, "0")}-${String(day).padStart(2, "0")}T00:00:00Z`;
  return {
    apiClients: [{ apiKey: KEY }],
    users: (Object.keys(USERS) as User[]).map((u) => ({
      userId: `u-${u}`,
      tokens: [{ token: `${u}-token` }],
    })),
    boxes: [
      {
        boxId: BOX,
        departments: [
          { departmentId: SALES },
          { departmentId: NORTH, parentDepartmentId: SALES },
          { departmentId: ACCOUNTING },
        ],
        employees: (["admin", "adminOnly", "managerOnly"] as User[]).map(employee),
        counteragentGroups: [
          { counteragentGroupId: PARTNERS, name: "Partners", createdAt: joined(1, 1) },
          {
            counteragentGroupId: SUPPLIERS,
            name: "Suppliers",
            departmentIds: [SALES],
            createdAt: joined(1, 1),
          },
          { counteragentGroupId: ARCHIVE, name: "Archive", createdAt: joined(1, 2) },
        ],
        counteragents: [
          ...PARTNER_IDS.map((id, i) => ({
            counteragentBoxId: id,
            counteragentGroupId: PARTNERS,
            joinedGroupAt: joined(2, i + 1),
          })),
          {
            counteragentBoxId: "p-06",
            counteragentGroupId: PARTNERS,
            status: "RejectsMe",
            joinedGroupAt: joined(2, 20),
          },
          ...DEFAULT_IDS.map((id, i) => ({
            counteragentBoxId: id,
            joinedGroupAt: joined(3, i + 1),
          })),
          { counteragentBoxId: "d-07", status: "InvitesMe", joinedGroupAt: joined(3, 20) },
        ],
      },
      { boxId: EMPTY_BOX, employees: [employee("admin")] },
      {
        boxId: OTHER_BOX,
        employees: [employee("outsider")],
        counteragentGroups: [{ counteragentGroupId: ELSEWHERE, name: "Partners" }],
        counteragents: [{ counteragentBoxId: "x-01", counteragentGroupId: ELSEWHERE }],
      },
      {
        boxId: ENDED_BOX,
        apiSubscriptionEndsAt: "2020-01-01T00:00:00Z",
        employees: [employee("admin")],
        counteragentGroups: [{ counteragentGroupId: "g-ended", name: "Ended" }],
      },
      {
        boxId: RACE_BOX,
        employees: [employee("admin")],
        counteragents: RACERS.map((id) => ({ counteragentBoxId: id, joinedGroupAt: joined(4, 1) })),
      },
    ],
  };
}

/** What the race tests run between an add's group check and its write. */
let beforeMove: ((move: CounteragentMove) => Promise<void>) | undefined;
const h = useHarness(fixture, undefined, {
  groupHooks: { beforeMove: (move) => beforeMove?.(move) ?? Promise.resolve() },
});

/** Every test starts from the fixture: groups and memberships exactly as listed there. */
beforeEach(async () => {
  beforeMove = undefined;
  await h.db.collection("counteragentGroups").deleteMany({});
  await h.db.collection("counteragents").deleteMany({});
  await loadFixture(h.db, fixture());
});

// ---------------------------------------------------------------- calls

const rpc = CounteragentService.method;
interface As {
  readonly user?: User;
  readonly boxId?: string;
}
const departments = (ids: readonly string[]) =>
  create(DepartmentsInGroupSchema, { DepartmentIds: [...ids] });

function createGroup(p: Protocol, name: string, departmentIds?: readonly string[], as: As = {}) {
  const group = create(CounteragentGroupToCreateSchema, {
    Name: name,
    ...(departmentIds ? { Departments: departments(departmentIds) } : {}),
  });
  return call(
    h,
    p,
    rpc.createCounteragentGroup,
    create(rpc.createCounteragentGroup.input, { boxId: as.boxId ?? BOX, group }),
    auth(as.user ?? "admin"),
  );
}

interface Changes {
  readonly name?: string;
  readonly anyDepartment?: boolean;
  readonly departmentIds?: readonly string[];
}
function updateGroup(p: Protocol, groupId: string, changes: Changes | undefined, as: As = {}) {
  const patch =
    changes?.anyDepartment === undefined
      ? undefined
      : create(CounteragentGroupDepartmentPatchSchema, {
          AnyDepartment: changes.anyDepartment,
          ...(changes.departmentIds ? { Departments: departments(changes.departmentIds) } : {}),
        });
  const body =
    changes &&
    create(CounteragentGroupToUpdateSchema, {
      ...(changes.name === undefined ? {} : { Name: changes.name }),
      ...(patch ? { GroupDepartments: patch } : {}),
    });
  return call(
    h,
    p,
    rpc.updateCounteragentGroup,
    create(rpc.updateCounteragentGroup.input, {
      boxId: as.boxId ?? BOX,
      counteragentGroupId: groupId,
      ...(body ? { changes: body } : {}),
    }),
    auth(as.user ?? "admin"),
  );
}

const ref = (groupId: string, as: As) => ({ boxId: as.boxId ?? BOX, counteragentGroupId: groupId });
const deleteGroup = (p: Protocol, groupId: string, as: As = {}) =>
  call(
    h,
    p,
    rpc.deleteCounteragentGroup,
    create(rpc.deleteCounteragentGroup.input, ref(groupId, as)),
    auth(as.user ?? "admin"),
  );
const getGroup = (p: Protocol, groupId: string, as: As = {}) =>
  call(
    h,
    p,
    rpc.getCounteragentGroup,
    create(rpc.getCounteragentGroup.input, ref(groupId, as)),
    auth(as.user ?? "admin"),
  );
const listGroups = (p: Protocol, paging: { page?: number; count?: number } = {}, as: As = {}) =>
  call(
    h,
    p,
    rpc.getCounteragentGroups,
    create(rpc.getCounteragentGroups.input, { boxId: as.boxId ?? BOX, ...paging }),
    auth(as.user ?? "admin"),
  );
const addToGroup = (p: Protocol, counteragentBoxId: string, groupId: string, as: As = {}) =>
  call(
    h,
    p,
    rpc.addCounteragentToGroup,
    create(rpc.addCounteragentToGroup.input, { ...ref(groupId, as), counteragentBoxId }),
    auth(as.user ?? "admin"),
  );

/** The whole listing of a group (GetCounteragentsFromGroup, one page of 100). */
async function membersOf(groupId: string, boxId = BOX) {
  const page = expectOk(
    await call(
      h,
      "in-memory",
      rpc.getCounteragentsFromGroup,
      create(rpc.getCounteragentsFromGroup.input, { boxId, counteragentGroupId: groupId }),
      auth("admin"),
    ),
  );
  return { ids: page.CounteragentBoxId, total: page.TotalCount };
}

/** Departments as a proto2 client sees them: undefined when the field is not on the wire. */
const departmentsOf = (group: CounteragentGroup) =>
  isFieldSet(group, CounteragentGroupSchema.field.Departments)
    ? group.Departments?.DepartmentIds
    : undefined;
const shape = (group: CounteragentGroup) => ({
  id: group.CounteragentGroupId,
  name: group.Name,
  departments: departmentsOf(group),
});

const stored = (counteragentBoxId: string, boxId = BOX) =>
  h.db.collection("counteragents").findOne({ boxId, counteragentBoxId });
const storedGroups = (boxId = BOX) =>
  h.db.collection("counteragentGroups").find({ boxId }).toArray();
const groupIdsListed = async (p: Protocol = "in-memory", boxId = BOX) =>
  expectOk(await listGroups(p, {}, { boxId })).Groups.map((g) => g.CounteragentGroupId);

// ---------------------------------------------------------------- rules, per protocol

// Domain rules in memory; the legacy encodings (as the SDKs send them) and gRPC for the wire.
const PROTOCOLS_UNDER_TEST: Protocol[] = ["in-memory", "legacy-protobuf", "legacy-json", "grpc"];

describe.each(PROTOCOLS_UNDER_TEST)("over %s", (p) => {
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

  describe("rights and the order of checks (SPEC §4–5)", () => {
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

// ---------------------------------------------------------------- what only the legacy wire shows

describe("legacy wire, as the SDKs call it", () => {
  const adminHeaders = { authorization: auth("admin") };
  const path = (op: string, query: string) => `/${op}?boxId=${BOX}&${query}`;

  it("Create: a binary body with no Content-Type and no Accept; a protobuf answer with every required field", async () => {
    const body = toBinary(
      CounteragentGroupToCreateSchema,
      create(CounteragentGroupToCreateSchema, { Name: "Key accounts" }),
    );
    const res = await legacy(h, {
      method: "POST",
      path: path("CreateCounteragentGroup", ""),
      headers: adminHeaders,
      body,
    });
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toBe("application/x-protobuf");
    const group = fromBinary(CounteragentGroupSchema, res.body);
    expect(group.CounteragentGroupId).toMatch(UUID);
    // Field 1 (id) and 2 (name), and nothing else: any department means no field 3 at all.
    expect(res.body[0]).toBe(0x0a);
    expect(res.body.includes(0x1a)).toBe(false);
    expect(res.body).toEqual(Buffer.from(toBinary(CounteragentGroupSchema, group)));
  });

  it.each([
    [
      "DeleteCounteragentGroup",
      `counteragentGroupId=${ARCHIVE}`,
      `counteragentGroupId=${SUPPLIERS}`,
    ],
    [
      "AddCounteragentToGroup",
      `counteragentBoxId=d-01&counteragentGroupId=${PARTNERS}`,
      `counteragentBoxId=d-02&counteragentGroupId=${PARTNERS}`,
    ],
  ])(
    "%s: an empty body, no Content-Type; 200 with an empty body, also for a client asking for JSON",
    async (op, first, second) => {
      const res = await legacy(h, {
        method: "POST",
        path: path(op, first),
        headers: { ...adminHeaders, "content-length": "0" },
      });
      expect(res.status).toBe(200);
      expect(res.headers["content-length"]).toBe("0");
      expect(res.body.length).toBe(0);
      const json = await legacy(h, {
        method: "POST",
        path: path(op, second),
        headers: { ...adminHeaders, accept: "application/json" },
      });
      expect(json.status).toBe(200);
      expect(json.headers["content-length"]).toBe("0");
      expect(json.text).toBe("");
      expect(await storedGroups()).toHaveLength(op === "DeleteCounteragentGroup" ? 1 : 3);
    },
  );

  it("an any-department group has no Departments in JSON; a group with some has them", async () => {
    const get = (groupId: string) =>
      legacy(h, {
        method: "GET",
        path: path("GetCounteragentGroup", `counteragentGroupId=${groupId}`),
        headers: { ...adminHeaders, accept: "application/json" },
      });
    expect(JSON.parse((await get(PARTNERS)).text)).toEqual({
      CounteragentGroupId: PARTNERS,
      Name: "Partners",
    });
    expect(JSON.parse((await get(SUPPLIERS)).text)).toEqual({
      CounteragentGroupId: SUPPLIERS,
      Name: "Suppliers",
      Departments: { DepartmentIds: [SALES] },
    });
    expect(JSON.parse((await get(DEFAULT)).text)).toEqual({
      CounteragentGroupId: DEFAULT,
      Name: "Default",
    });
  });

  it("TotalCount 0 is on the wire: an empty list is exactly 10 00", async () => {
    const res = await legacy(h, {
      method: "GET",
      path: `/GetCounteragentGroups?boxId=${EMPTY_BOX}`,
      headers: adminHeaders,
    });
    expect(res.status).toBe(200);
    expect(res.body.toString("hex")).toBe("1000");
    const json = await legacy(h, {
      method: "GET",
      path: `/GetCounteragentGroups?boxId=${EMPTY_BOX}`,
      headers: { ...adminHeaders, accept: "application/json" },
    });
    expect(JSON.parse(json.text)).toEqual({ Groups: [], TotalCount: 0 });
  });

  it("the bare keys `&page&count` mean absent: page 1 of 100", async () => {
    const res = await legacy(h, {
      method: "GET",
      path: path("GetCounteragentGroups", "page&count"),
      headers: adminHeaders,
    });
    expect(res.status).toBe(200);
    expect(fromBinary(CounteragentGroupsListSchema, res.body).Groups).toHaveLength(3);
  });

  it.each(["page=1.5", "page=abc", "count=1e2", "page=1&page=2"])("%s: 400", async (query) => {
    const res = await legacy(h, {
      method: "GET",
      path: path("GetCounteragentGroups", query),
      headers: adminHeaders,
    });
    expect(res.status).toBe(400);
    expect(res.headers["x-service-errorcode"]).toBe("Http.BadRequest");
  });

  it("Create with no body, or a JSON body without Name: 400, nothing created", async () => {
    const noBody = await legacy(h, {
      method: "POST",
      path: path("CreateCounteragentGroup", ""),
      headers: adminHeaders,
    });
    const noName = await legacy(h, {
      method: "POST",
      path: path("CreateCounteragentGroup", ""),
      headers: { ...adminHeaders, "content-type": "application/json" },
      body: '{"Departments":{"DepartmentIds":[]}}',
    });
    for (const res of [noBody, noName]) {
      expect(res.status).toBe(400);
      expect(res.text).toMatch(/Name is required/);
    }
    expect(await storedGroups()).toHaveLength(3);
  });

  it('AnyDepartment in JSON: the string "true"/"false" or a JSON boolean; a missing one is a 400', async () => {
    const update = (body: string) =>
      legacy(h, {
        method: "POST",
        path: path("UpdateCounteragentGroup", `counteragentGroupId=${SUPPLIERS}`),
        headers: {
          ...adminHeaders,
          "content-type": "application/json",
          accept: "application/json",
        },
        body,
      });
    const answers = [
      await update(
        '{"GroupDepartments":{"AnyDepartment":"false","Departments":{"DepartmentIds":["d-north"]}}}',
      ),
      await update('{"GroupDepartments":{"AnyDepartment":true}}'),
      await update(
        '{"GroupDepartments":{"AnyDepartment":false,"Departments":{"DepartmentIds":["d-sales"]}}}',
      ),
      await update('{"GroupDepartments":{"AnyDepartment":"true"}}'),
    ];
    expect(answers.map((r) => JSON.parse(r.text).Departments)).toEqual([
      { DepartmentIds: [NORTH] },
      undefined,
      { DepartmentIds: [SALES] },
      undefined,
    ]);
    const missing = await update(
      '{"GroupDepartments":{"Departments":{"DepartmentIds":["d-north"]}}}',
    );
    expect(missing.status).toBe(400);
    expect(missing.text).toMatch(/AnyDepartment is required/);
  });

  it.each([
    ["GET", "CreateCounteragentGroup", "POST"],
    ["GET", "AddCounteragentToGroup", "POST"],
    ["POST", "GetCounteragentGroups", "GET"],
  ])("%s /%s: 405, Allow: %s", async (method, op, allow) => {
    const res = await legacy(h, { method, path: path(op, ""), headers: adminHeaders });
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe(allow);
  });
});

// ---------------------------------------------------------------- moves while paging

describe("paging a group while members are moved in and out", () => {
  it("never skips or repeats a member that stayed; moved-in members come last", async () => {
    // 20 members of a new group, joined one by one.
    const group = expectOk(
      await createGroup("legacy-protobuf", "Busy", undefined, { boxId: RACE_BOX }),
    ).CounteragentGroupId;
    const initial = RACERS.slice(0, 20);
    for (const id of initial)
      expectOk(await addToGroup("in-memory", id, group, { boxId: RACE_BOX }));
    const leaving = initial.filter((_, i) => i % 3 === 1);
    const joining = RACERS.slice(20, 30);
    const left = new Set<string>();
    const joined: string[] = [];

    const seen: string[] = [];
    let after: string | undefined;
    for (let round = 0; round < 50; round++) {
      const page = expectOk(
        await call(
          h,
          "legacy-protobuf",
          rpc.getCounteragentsFromGroup,
          create(rpc.getCounteragentsFromGroup.input, {
            boxId: RACE_BOX,
            counteragentGroupId: group,
            count: 3,
            ...(after === undefined ? {} : { afterIndexKey: after }),
          }),
          auth("admin"),
        ),
      );
      if (page.CounteragentBoxId.length === 0) break;
      seen.push(...page.CounteragentBoxId);
      after = page.AfterIndexKey;
      // Between pages: two leave (seen or not yet seen), one joins.
      for (const id of leaving.slice(round * 2, round * 2 + 2)) {
        expectOk(await addToGroup("legacy-json", id, DEFAULT, { boxId: RACE_BOX }));
        left.add(id);
      }
      const joiner = joining[round];
      if (joiner) {
        expectOk(await addToGroup("grpc", joiner, group, { boxId: RACE_BOX }));
        joined.push(joiner);
      }
    }
    const stayed = initial.filter((id) => !left.has(id));
    expect(left.size).toBe(leaving.length);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.filter((id) => stayed.includes(id))).toEqual(stayed);
    const joinedSeen = seen.filter((id) => joined.includes(id));
    expect(joinedSeen.length).toBeGreaterThan(0);
    expect(seen.slice(-joinedSeen.length)).toEqual(joinedSeen);
    expect(await membersOf(group, RACE_BOX)).toEqual({
      ids: [...stayed, ...joined],
      total: stayed.length + joined.length,
    });
  });
});

// ---------------------------------------------------------------- races

describe("concurrency", () => {
  /** Every counteragent of the race box is in the default group or in a group that exists. */
  async function expectEveryMemberInAnExistingGroup() {
    const groups = new Set(
      (await storedGroups(RACE_BOX)).map((g) => g.counteragentGroupId as string),
    );
    const docs = await h.db.collection("counteragents").find({ boxId: RACE_BOX }).toArray();
    expect(docs).toHaveLength(RACERS.length);
    for (const doc of docs) {
      expect(
        doc.counteragentGroupId === DEFAULT || groups.has(doc.counteragentGroupId),
        `${doc.counteragentBoxId} is in ${doc.counteragentGroupId}`,
      ).toBe(true);
    }
  }

  it("concurrent creates of one name (in any case, over any protocol): exactly one succeeds", async () => {
    const protocols: Protocol[] = ["legacy-protobuf", "legacy-json", "grpc", "connect-binary"];
    const names = ["Rivals", "RIVALS", " rivals", "rIvAlS "];
    const outcomes = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        createGroup(protocols[i % 4] ?? "grpc", names[i % 4] ?? "Rivals", undefined, {
          boxId: EMPTY_BOX,
        }),
      ),
    );
    expect(outcomes.filter((o) => o.ok)).toHaveLength(1);
    for (const o of outcomes.filter((o) => !o.ok)) {
      expect(o).toMatchObject({ status: 409, errorCode: "CounteragentGroup.DuplicateName" });
    }
    expect(await storedGroups(EMPTY_BOX)).toHaveLength(1);
  });

  it("an add that checked the group before a Delete and writes after it: moved back to the default group, 404", async () => {
    const group = expectOk(
      await createGroup("in-memory", "Doomed", undefined, { boxId: RACE_BOX }),
    ).CounteragentGroupId;
    beforeMove = async () => {
      // The add has seen the group; the whole Delete runs before its write.
      expectOk(await deleteGroup("legacy-protobuf", group, { boxId: RACE_BOX }));
    };
    const add = await addToGroup("legacy-protobuf", "r-07", group, { boxId: RACE_BOX });
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
    expect(await addToGroup("grpc", "r-08", group, { boxId: RACE_BOX })).toMatchObject({
      ok: false,
      status: 404,
    });
    expect((await stored("r-08", RACE_BOX))?.counteragentGroupId).toBe(DEFAULT);
    beforeMove = undefined;
    expectOk(await deleteGroup("grpc", group, { boxId: RACE_BOX }));
    expect(await storedGroups(RACE_BOX)).toHaveLength(0);
  });

  it("many adds racing a Delete of their group: every counteragent ends in exactly one existing group", async () => {
    for (let round = 0; round < 3; round++) {
      await h.db
        .collection("counteragents")
        .updateMany({ boxId: RACE_BOX }, { $set: { counteragentGroupId: DEFAULT } });
      const keep = expectOk(
        await createGroup("in-memory", `Keep ${round}`, undefined, { boxId: RACE_BOX }),
      ).CounteragentGroupId;
      const doomed = expectOk(
        await createGroup("in-memory", `Doomed ${round}`, undefined, { boxId: RACE_BOX }),
      ).CounteragentGroupId;
      // A few counteragents are in the doomed group already.
      for (const id of RACERS.slice(0, 5)) {
        expectOk(await addToGroup("in-memory", id, doomed, { boxId: RACE_BOX }));
      }
      // Every add into the doomed group has checked the group (alive) and is held
      // before its write. Then the Delete starts: the "racing" adds are let go with
      // it, the "late" ones only once it has finished, so each of them writes into
      // a group that no longer exists.
      const racers = RACERS.slice(5).map((id, i) => ({
        id,
        group: i % 5 === 0 ? keep : doomed,
        protocol: (i % 2 ? "legacy-protobuf" : "in-memory") as Protocol,
        late: i % 5 !== 0 && i % 2 === 0,
      }));
      const intoDoomed = racers.filter((r) => r.group === doomed);
      const held = new Set<string>();
      let allHeld: () => void = () => undefined;
      const everyoneHeld = new Promise<void>((resolve) => {
        allHeld = resolve;
      });
      let releaseRacing: () => void = () => undefined;
      const racingGo = new Promise<void>((resolve) => {
        releaseRacing = resolve;
      });
      let releaseLate: () => void = () => undefined;
      const lateGo = new Promise<void>((resolve) => {
        releaseLate = resolve;
      });
      beforeMove = async (move) => {
        if (move.counteragentGroupId !== doomed) return;
        held.add(move.counteragentBoxId);
        if (held.size === intoDoomed.length) allHeld();
        const late = racers.find((r) => r.id === move.counteragentBoxId)?.late;
        await (late ? lateGo : racingGo);
      };
      const adds = racers.map((r) => addToGroup(r.protocol, r.id, r.group, { boxId: RACE_BOX }));
      await everyoneHeld;
      const deleting = deleteGroup("legacy-protobuf", doomed, { boxId: RACE_BOX });
      releaseRacing();
      const deleted = await deleting;
      releaseLate();
      const outcomes = await Promise.all(adds);
      beforeMove = undefined;

      expectOk(deleted);
      const late = racers.flatMap((r, i) => (r.late ? [{ ...r, outcome: outcomes[i] }] : []));
      // The interleaving this test is about happened, for every late add: 404, moved back.
      expect(late.length).toBeGreaterThanOrEqual(10);
      for (const r of late) {
        expect(r.outcome).toMatchObject({ status: 404, errorCode: "CounteragentGroup.NotFound" });
        expect((await stored(r.id, RACE_BOX))?.counteragentGroupId).toBe(DEFAULT);
      }
      for (const [i, o] of outcomes.entries()) {
        if (racers[i]?.group === keep) expectOk(o);
        else if (!o.ok) {
          expect(o).toMatchObject({ status: 404, errorCode: "CounteragentGroup.NotFound" });
        }
      }
      await expectEveryMemberInAnExistingGroup();
      expect(await getGroup("in-memory", doomed, { boxId: RACE_BOX })).toMatchObject({
        status: 404,
      });
      const inKeep = (await membersOf(keep, RACE_BOX)).total;
      expect(inKeep).toBe(racers.filter((r) => r.group === keep).length);
      expect((await membersOf(DEFAULT, RACE_BOX)).total).toBe(RACERS.length - inKeep);
    }
  });
});
