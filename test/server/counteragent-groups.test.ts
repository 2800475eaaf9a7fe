/**
 * docs/api.md §6.4 where the wire and concurrency matter: the legacy wire as the
 * SDKs call it, paging a group while members move, and the races of Add and
 * Delete (the rules themselves: test/in-memory/counteragent-groups.test.ts).
 */
import { create, fromBinary, isFieldSet, toBinary } from "@bufbuild/protobuf";
import { FieldMaskSchema } from "@bufbuild/protobuf/wkt";
import { beforeEach, describe, expect, it } from "vitest";
import {
  CounteragentGroupDepartmentPatchSchema,
  CounteragentGroupSchema,
  CounteragentGroupsListSchema,
  CounteragentGroupToCreateSchema,
  CounteragentGroupToUpdateSchema,
} from "../../gen/docflow/legacy/counteragent_groups_pb";
import { type CounteragentMove, groupEtag } from "../../src/domain/counteragent-groups";
import { loadFixture } from "../../src/fixtures/load";
import {
  ARCHIVE,
  auth,
  BOX,
  DEFAULT,
  EMPTY_BOX,
  ENDED_BOX,
  fixture,
  groupCalls,
  NORTH,
  PARTNER_IDS,
  PARTNERS,
  RACE_BOX,
  RACERS,
  rpc,
  SALES,
  SUPPLIERS,
  UUID,
} from "../support/counteragent-groups";
import { legacy, RPC_PROTOCOLS, useHarness } from "../support/harness";
import { call, expectOk, PROTOCOLS, type Protocol } from "../support/protocols";

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
const {
  expectEveryMemberInAnExistingGroup,
  createGroup,
  deleteGroup,
  getGroup,
  addToGroup,
  membersOf,
  stored,
  storedGroups,
} = groupCalls(h);

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

// ---------------------------------------------------------------- If-Match on every protocol

describe("If-Match (AIP-154): the same precondition on every protocol, as a header or as metadata", () => {
  const tagOf = async (groupId: string) => {
    const group = await h.db
      .collection("counteragentGroups")
      .findOne({ counteragentGroupId: groupId });
    return groupEtag({
      counteragentGroupId: groupId,
      name: String(group?.name),
      departmentIds: group?.departmentIds,
    });
  };
  const update = (p: Protocol, name: string, ifMatch: string) =>
    call(
      h,
      p,
      rpc.updateCounteragentGroup,
      create(rpc.updateCounteragentGroup.input, {
        boxId: BOX,
        counteragentGroupId: PARTNERS,
        changes: create(CounteragentGroupToUpdateSchema, { Name: name }),
      }),
      auth("admin"),
      { "if-match": ifMatch },
    );

  it.each(PROTOCOLS)(
    "%s: a stale tag is refused (412, CounteragentGroup.EtagMismatch) and changes nothing; the current one writes",
    async (p) => {
      const stale = await tagOf(PARTNERS);
      expectOk(await update(p, `${p} first`, stale));
      expect(await update(p, `${p} second`, stale)).toMatchObject({
        ok: false,
        status: 412,
        errorCode: "CounteragentGroup.EtagMismatch",
      });
      expect((await storedGroups(BOX)).find((g) => g.counteragentGroupId === PARTNERS)?.name).toBe(
        `${p} first`,
      );
      expectOk(await update(p, `${p} third`, await tagOf(PARTNERS)));
    },
  );

  it("Connect answers a group with its tag in the etag response header; a Delete with a stale tag over gRPC: failed_precondition, the group stays", async () => {
    const res = await fetch(
      `${h.baseUrl}/docflow.api.v1.CounteragentService/GetCounteragentGroup`,
      {
        method: "POST",
        headers: { "content-type": "application/json", authorization: auth("admin") },
        body: JSON.stringify({ boxId: BOX, counteragentGroupId: PARTNERS }),
      },
    );
    expect(res.status).toBe(200);
    expect(res.headers.get("etag")).toBe(await tagOf(PARTNERS));
    const deleted = await call(
      h,
      "grpc",
      rpc.deleteCounteragentGroup,
      create(rpc.deleteCounteragentGroup.input, { boxId: BOX, counteragentGroupId: PARTNERS }),
      auth("admin"),
      { "if-match": '"stale"' },
    );
    expect(deleted).toMatchObject({ ok: false, status: 412 });
    expect(await getGroup("in-memory", PARTNERS)).toMatchObject({ ok: true });
  });
});

// ---------------------------------------------------------------- AIP-158, AIP-134, AIP-155 on the RPC protocols

describe("AIP-158 paging, AIP-134 update masks and AIP-155 request ids: the same on every RPC protocol", () => {
  const listMembers = (p: Protocol, pageSize: number, pageToken = "", extra = {}) =>
    call(
      h,
      p,
      rpc.getCounteragentsFromGroup,
      create(rpc.getCounteragentsFromGroup.input, {
        boxId: BOX,
        counteragentGroupId: PARTNERS,
        pageSize,
        pageToken,
        ...extra,
      }),
      auth("admin"),
    );
  const listGroups = (p: Protocol, pageSize: number, pageToken = "", extra = {}) =>
    call(
      h,
      p,
      rpc.getCounteragentGroups,
      create(rpc.getCounteragentGroups.input, { boxId: BOX, pageSize, pageToken, ...extra }),
      auth("admin"),
    );
  const update = (p: Protocol, paths: string[], changes: Parameters<typeof create>[1]) =>
    call(
      h,
      p,
      rpc.updateCounteragentGroup,
      create(rpc.updateCounteragentGroup.input, {
        boxId: BOX,
        counteragentGroupId: SUPPLIERS,
        changes: create(CounteragentGroupToUpdateSchema, changes as never),
        updateMask: create(FieldMaskSchema, { paths }),
      }),
      auth("admin"),
    );
  const createWithId = (p: Protocol, name: string, requestId: string) =>
    call(
      h,
      p,
      rpc.createCounteragentGroup,
      create(rpc.createCounteragentGroup.input, {
        boxId: BOX,
        group: create(CounteragentGroupToCreateSchema, { Name: name }),
        requestId,
      }),
      auth("admin"),
    );
  const requestIdOf = (p: Protocol, n: number) =>
    `${String(RPC_PROTOCOLS.indexOf(p as never) + 1).padStart(8, "0")}-0000-4000-8000-${String(n).padStart(12, "0")}`;

  it.each(RPC_PROTOCOLS)(
    "%s: page_size and page_token walk a group's counteragents to an empty next_page_token; a size over 100 is 100",
    async (p) => {
      const seen: string[][] = [];
      let token = "";
      do {
        const page = expectOk(await listMembers(p, 2, token));
        seen.push(page.CounteragentBoxId);
        expect(page.TotalCount).toBe(PARTNER_IDS.length);
        token = page.nextPageToken ?? "";
      } while (token !== "" && seen.length < 10);
      expect(seen).toEqual([["p-01", "p-02"], ["p-03", "p-04"], ["p-05"]]);
      const all = expectOk(await listMembers(p, 1000));
      expect(all.CounteragentBoxId).toEqual(PARTNER_IDS);
      // The end of the listing: no token (proto3's empty string, left out).
      expect(isFieldSet(all, rpc.getCounteragentsFromGroup.output.field.nextPageToken)).toBe(false);
    },
  );

  it.each(RPC_PROTOCOLS)(
    "%s: page_size and page_token walk the groups by creation, then id (a tie on creation included)",
    async (p) => {
      const seen: string[] = [];
      let token = "";
      do {
        const page = expectOk(await listGroups(p, 1, token));
        expect(page.Groups.length).toBeLessThanOrEqual(1);
        seen.push(...page.Groups.map((g) => g.CounteragentGroupId));
        token = page.nextPageToken ?? "";
      } while (token !== "" && seen.length < 10);
      // Partners and Suppliers were created at the same instant: the id decides.
      expect(seen).toEqual([PARTNERS, SUPPLIERS, ARCHIVE]);
    },
  );

  it.each(RPC_PROTOCOLS)(
    "%s: paging mixed with the legacy paging, a negative size, a token of another list or altered: 400",
    async (p) => {
      const first = expectOk(await listMembers(p, 2));
      const bad = { ok: false, status: 400 };
      expect(
        await listMembers(p, 2, first.nextPageToken, { afterIndexKey: first.AfterIndexKey }),
      ).toMatchObject(bad);
      expect(await listMembers(p, 2, "", { count: 2 })).toMatchObject(bad);
      expect(await listMembers(p, -1)).toMatchObject(bad);
      expect(await listGroups(p, 1, first.nextPageToken)).toMatchObject(bad);
      const groups = expectOk(await listGroups(p, 1));
      expect(await listGroups(p, 1, groups.nextPageToken, { page: 2 })).toMatchObject(bad);
      expect(await listGroups(p, 1, `${groups.nextPageToken?.slice(0, -2)}AA`)).toMatchObject(bad);
    },
  );

  it.each(RPC_PROTOCOLS)(
    "%s: update_mask writes only the fields it names; a named field left out is cleared; an unknown one is a 400 and changes nothing",
    async (p) => {
      // Suppliers: departments [SALES]. The mask names Name only: the departments stay.
      const renamed = expectOk(
        await update(p, ["name"], {
          Name: `${p} renamed`,
          GroupDepartments: create(CounteragentGroupDepartmentPatchSchema, { AnyDepartment: true }),
        }),
      );
      expect(renamed.Name).toBe(`${p} renamed`);
      expect(renamed.Departments?.DepartmentIds).toEqual([SALES]);
      // The mask names GroupDepartments, which the changes leave out: any department.
      const cleared = expectOk(await update(p, ["group_departments"], { Name: "ignored" }));
      expect(cleared.Name).toBe(`${p} renamed`);
      expect(cleared.Departments).toBeUndefined();
      expect(await update(p, ["departments"], { Name: "x" })).toMatchObject({
        ok: false,
        status: 400,
      });
      // A path that is a property of every object names no field either.
      expect(await update(p, ["constructor"], { Name: "x" })).toMatchObject({
        ok: false,
        status: 400,
      });
      expect(await update(p, ["name"], {})).toMatchObject({ ok: false, status: 400 });
      const group = (await storedGroups(BOX)).find((g) => g.counteragentGroupId === SUPPLIERS);
      expect(group?.name).toBe(`${p} renamed`);
      expect(group?.departmentIds).toBeUndefined();
    },
  );

  it.each(RPC_PROTOCOLS)(
    "%s: a create retried with its request_id answers the same group and stores one; another group under it: 409; not a UUID: 400",
    async (p) => {
      const id = requestIdOf(p, 1);
      const first = expectOk(await createWithId(p, `${p} retried`, id));
      const again = expectOk(await createWithId(p, `${p} retried`, id));
      expect(again.CounteragentGroupId).toBe(first.CounteragentGroupId);
      expect((await storedGroups(BOX)).filter((g) => g.name === `${p} retried`)).toHaveLength(1);
      expect(await createWithId(p, `${p} other`, id)).toMatchObject({
        ok: false,
        status: 409,
        errorCode: "CounteragentGroup.RequestIdReused",
      });
      expect(await createWithId(p, `${p} x`, "not-a-uuid")).toMatchObject({
        ok: false,
        status: 400,
      });
      // Without a request id, two creates of one name: the second is the duplicate name.
      expect(await createWithId(p, `${p} retried`, "")).toMatchObject({
        ok: false,
        errorCode: "CounteragentGroup.DuplicateName",
      });
    },
  );

  it("two creates with one request_id at once: both answer the one group stored", async () => {
    const id = "99999999-0000-4000-8000-000000000001";
    const [a, b] = await Promise.all([
      createWithId("grpc", "Raced", id),
      createWithId("connect-json", "Raced", id),
    ]);
    expect(expectOk(a).CounteragentGroupId).toBe(expectOk(b).CounteragentGroupId);
    expect((await storedGroups(BOX)).filter((g) => g.name === "Raced")).toHaveLength(1);
  });

  it("an ended API subscription: 402 on the resource API, as on the legacy paths (FAILED_PRECONDITION, API_SUBSCRIPTION_ENDED)", async () => {
    const res = await legacy(h, {
      method: "GET",
      path: `/v1/boxes/${ENDED_BOX}/counteragentGroups/g-ended`,
      headers: { authorization: auth("admin") },
    });
    expect(res.status, res.text).toBe(402);
    expect(JSON.parse(res.text).error).toMatchObject({
      code: 402,
      status: "FAILED_PRECONDITION",
      details: [{ reason: "API_SUBSCRIPTION_ENDED" }],
    });
  });

  it.each(["legacy-protobuf", "legacy-json"] as const)(
    "%s: the legacy paths take no page_size (count and page as before) and write no next_page_token",
    async (p) => {
      const groups = await legacy(h, {
        method: "GET",
        path: `/GetCounteragentGroups?boxId=${BOX}&count=1&pageSize=2`,
        headers: {
          authorization: auth("admin"),
          ...(p === "legacy-json" ? { accept: "application/json" } : {}),
        },
      });
      expect(groups.status, groups.text).toBe(200);
      const list =
        p === "legacy-json"
          ? JSON.parse(groups.text)
          : fromBinary(CounteragentGroupsListSchema, groups.body);
      expect(list.Groups).toHaveLength(1);
      if (p === "legacy-json") {
        expect(Object.keys(list).sort()).toEqual(["Groups", "TotalCount"]);
      } else {
        expect(isFieldSet(list, CounteragentGroupsListSchema.field.nextPageToken)).toBe(false);
      }
    },
  );
});
