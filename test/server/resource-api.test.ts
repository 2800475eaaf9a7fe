/**
 * The v1 resource API (docs/api.md, "The resource API"): each operation's
 * standard binding beside its unchanged legacy path, served by the JSON
 * profile (proto3 JSON, errors as google.rpc.Status with our ErrorInfo), with
 * the same handlers, rights and codes; the stored state is what the legacy
 * path would leave.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { loadFixture } from "../../src/fixtures/load";
import { ERROR_DOMAIN } from "../../src/wire/errors";
import { adminBoxFixture, KEY } from "../support/fixture";
import { legacy, useHarness } from "../support/harness";

const BOX = "b0000000-0000-4000-8000-0000000000aa";
const GROUP = "a0000000-0000-4000-8000-000000000001";
const CA = (i: number) => `c0000000-0000-4000-8000-0000000000${String(i).padStart(2, "0")}`;
const fixture = () =>
  adminBoxFixture(
    BOX,
    [{ counteragentGroupId: GROUP, name: "Partners" }],
    [
      ...[1, 2, 3].map((i) => ({
        counteragentBoxId: CA(i),
        counteragentGroupId: GROUP,
        joinedGroupAt: `2026-01-01T00:00:0${i}Z`,
      })),
      { counteragentBoxId: CA(9), joinedGroupAt: "2026-01-01T00:00:09Z" },
    ],
  );

const h = useHarness(fixture);
beforeEach(async () => {
  await loadFixture(h.db, fixture());
});

const AUTH = `ServiceAuth svcauth_api_client_id=${KEY}, svcauth_token=admin-token`;
const v1 = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  legacy(h, {
    method,
    path: `/v1/boxes/${BOX}${path}`,
    headers: {
      authorization: AUTH,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
const json = (res: { text: string }) => JSON.parse(res.text);

describe("subscriptions: Get and Update (PATCH) of an employee's subscriptions", () => {
  it("GET …/employees/{user}/subscriptions: 200, proto3 JSON", async () => {
    const res = await v1("GET", "/employees/u-admin/subscriptions");
    expect(res.status, res.text).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
    expect(json(res).Subscriptions).toHaveLength(10);
  });

  it("PATCH …/subscriptions with the changes as the body: 200, the new state, stored", async () => {
    const res = await v1("PATCH", "/employees/u-admin/subscriptions", {
      Subscriptions: [{ Id: "News", IsSubscribed: false }],
    });
    expect(res.status, res.text).toBe(200);
    const news = json(res).Subscriptions.find((s: { Id: string }) => s.Id === "News");
    expect(news.IsSubscribed).toBe(false);
    const again = await v1("GET", "/employees/u-admin/subscriptions");
    expect(
      json(again).Subscriptions.find((s: { Id: string }) => s.Id === "News").IsSubscribed,
    ).toBe(false);
  });
});

describe("counteragent groups: List, Get, Create, Update (PATCH), Delete, and adding a counteragent", () => {
  it("GET …/counteragentGroups: the groups, the default one included", async () => {
    const res = await v1("GET", "/counteragentGroups");
    expect(res.status, res.text).toBe(200);
    expect(json(res).Groups.map((g: { Name: string }) => g.Name)).toContain("Partners");
  });

  it("GET …/counteragentGroups/{group}: the group; an unknown one: 404 as google.rpc.Status with our ErrorInfo", async () => {
    const res = await v1("GET", `/counteragentGroups/${GROUP}`);
    expect(res.status, res.text).toBe(200);
    expect(json(res)).toMatchObject({ CounteragentGroupId: GROUP, Name: "Partners" });
    const missing = await v1("GET", "/counteragentGroups/a0000000-0000-4000-8000-0000000000ff");
    expect(missing.status).toBe(404);
    // AIP-193: {"error": google.rpc.Status}, code the HTTP status; ErrorInfo's reason in
    // AIP-193's form, our X-Service-ErrorCode in its metadata (docs/decisions.md).
    const { error } = json(missing);
    expect(error).toMatchObject({ code: 404, status: "NOT_FOUND" });
    expect(error.details).toEqual([
      {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        domain: ERROR_DOMAIN,
        reason: "NOT_FOUND",
        metadata: { errorCode: "CounteragentGroup.NotFound" },
      },
    ]);
  });

  it("POST …/counteragentGroups creates (201, Location names it, its ETag); PATCH renames; DELETE deletes: the stored groups follow", async () => {
    const created = await v1("POST", "/counteragentGroups", { Name: "Key accounts" });
    expect(created.status, created.text).toBe(201);
    const id = json(created).CounteragentGroupId as string;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.headers.location).toBe(`/v1/boxes/${BOX}/counteragentGroups/${id}`);
    const there = await v1("GET", `/counteragentGroups/${id}`);
    expect(json(there).Name).toBe("Key accounts");
    expect(created.headers.etag).toBe(there.headers.etag);
    const renamed = await v1("PATCH", `/counteragentGroups/${id}`, { Name: "Top accounts" });
    expect(renamed.status, renamed.text).toBe(200);
    expect(json(renamed).Name).toBe("Top accounts");
    const stored = await h.db.collection("counteragentGroups").findOne({ counteragentGroupId: id });
    expect(stored?.name).toBe("Top accounts");
    const deleted = await v1("DELETE", `/counteragentGroups/${id}`);
    expect(deleted.status, deleted.text).toBe(200);
    expect((await v1("GET", `/counteragentGroups/${id}`)).status).toBe(404);
  });

  it("GET …/counteragentGroups/{group}/counteragents: a page, then the next one by its key", async () => {
    const first = await v1("GET", `/counteragentGroups/${GROUP}/counteragents?count=2`);
    expect(first.status, first.text).toBe(200);
    const page = json(first);
    expect(page.CounteragentBoxId).toEqual([CA(1), CA(2)]);
    const next = await v1(
      "GET",
      `/counteragentGroups/${GROUP}/counteragents?count=2&afterIndexKey=${encodeURIComponent(page.AfterIndexKey)}`,
    );
    expect(json(next).CounteragentBoxId).toEqual([CA(3)]);
  });

  it("AIP-158: pageSize and pageToken walk the counteragents to an empty nextPageToken, and the groups the same way", async () => {
    const walk = async (path: string, items: (page: Record<string, unknown>) => unknown[]) => {
      const seen: unknown[][] = [];
      const tokens: (string | undefined)[] = [];
      let token = "";
      do {
        const res = await v1(
          "GET",
          `${path}?pageSize=2${token && `&pageToken=${encodeURIComponent(token)}`}`,
        );
        expect(res.status, res.text).toBe(200);
        const page = json(res);
        seen.push(items(page));
        tokens.push(page.nextPageToken);
        token = page.nextPageToken ?? "";
      } while (token !== "" && seen.length < 10);
      // Each page but the last has a token; the last has none (proto3 JSON leaves "" out).
      expect(tokens.at(-1)).toBeUndefined();
      for (const t of tokens.slice(0, -1)) expect(t).toMatch(/^[A-Za-z0-9_-]{22,}$/);
      return seen;
    };
    expect(
      await walk(
        `/counteragentGroups/${GROUP}/counteragents`,
        (p) => p.CounteragentBoxId as string[],
      ),
    ).toEqual([[CA(1), CA(2)], [CA(3)]]);
    await v1("POST", "/counteragentGroups", { Name: "Second" });
    await v1("POST", "/counteragentGroups", { Name: "Third" });
    const names = await walk("/counteragentGroups", (p) =>
      (p.Groups as { Name: string }[]).map((g) => g.Name),
    );
    expect(names).toEqual([["Partners", "Second"], ["Third"]]);
    const mixed = await v1("GET", "/counteragentGroups?pageSize=2&page=1");
    expect(mixed.status).toBe(400);
    expect(json(mixed).error).toMatchObject({ status: "INVALID_ARGUMENT" });
    const forged = await v1("GET", "/counteragentGroups?pageToken=AAAAAAAAAAAAAAAAAAAAAAAAAAAA");
    expect(forged.status).toBe(400);
  });

  it("AIP-134: a PATCH with updateMask writes the fields it names only; a path it does not know: 400, nothing changes", async () => {
    const created = json(
      await v1("POST", "/counteragentGroups", {
        Name: "Masked",
        Departments: { DepartmentIds: [] },
      }),
    );
    const path = `/counteragentGroups/${created.CounteragentGroupId}`;
    const res = await v1("PATCH", `${path}?updateMask=groupDepartments`, { Name: "Not this" });
    expect(res.status, res.text).toBe(200);
    expect(json(res)).toMatchObject({ Name: "Masked" });
    const unknown = await v1("PATCH", `${path}?updateMask=name,color`, { Name: "Not this either" });
    expect(unknown.status).toBe(400);
    expect(json(unknown).error.message).toMatch(/update_mask names "color"/);
    const stored = await h.db
      .collection("counteragentGroups")
      .findOne({ counteragentGroupId: created.CounteragentGroupId });
    expect(stored?.name).toBe("Masked");
  });

  it("AIP-155: a create retried with its requestId answers 201 with the same group and Location, and stores one group", async () => {
    const requestId = "5f0c3e2a-1b7d-4c1e-9a55-0d6f2b8e4a10";
    const first = await v1("POST", `/counteragentGroups?requestId=${requestId}`, { Name: "Once" });
    const retry = await v1("POST", `/counteragentGroups?requestId=${requestId}`, { Name: "Once" });
    expect(first.status, first.text).toBe(201);
    expect(retry.status, retry.text).toBe(201);
    expect(json(retry).CounteragentGroupId).toBe(json(first).CounteragentGroupId);
    expect(retry.headers.location).toBe(first.headers.location);
    expect(retry.headers.etag).toBe(first.headers.etag);
    expect(await h.db.collection("counteragentGroups").countDocuments({ name: "Once" })).toBe(1);
    const other = await v1("POST", `/counteragentGroups?requestId=${requestId}`, { Name: "Twice" });
    expect(other.status).toBe(409);
    expect(json(other).error.details[0].metadata.errorCode).toBe(
      "CounteragentGroup.RequestIdReused",
    );
  });

  it("POST …/counteragents/{counteragent}:add moves a counteragent into the group", async () => {
    const res = await v1("POST", `/counteragentGroups/${GROUP}/counteragents/${CA(9)}:add`);
    expect(res.status, res.text).toBe(200);
    const stored = await h.db.collection("counteragents").findOne({ counteragentBoxId: CA(9) });
    expect(stored?.counteragentGroupId).toBe(GROUP);
  });
});

describe("deletion marks: DELETE marks, :restore removes the mark", () => {
  const marks = async () => {
    const m = await h.db.collection("messages").findOne({ boxId: BOX, messageId: "msg" });
    return [
      m?.isDeleted ?? false,
      ...(m?.documents ?? []).map((d: { isDeleted?: boolean }) => d.isDeleted ?? false),
    ];
  };

  it("DELETE …/messages/{m}/documents/{d} marks that document only; :restore of it removes the mark", async () => {
    const res = await v1("DELETE", "/messages/msg/documents/d1");
    expect(res.status, res.text).toBe(200);
    expect(await marks()).toEqual([false, true, false]);
    const restored = await v1("POST", "/messages/msg/documents/d1:restore");
    expect(restored.status, restored.text).toBe(200);
    expect(await marks()).toEqual([false, false, false]);
  });

  it("DELETE …/messages/{m} marks everything; again: 409 as google.rpc.Status; :restore of the message restores all", async () => {
    expect((await v1("DELETE", "/messages/msg")).status).toBe(200);
    expect(await marks()).toEqual([true, true, true]);
    const again = await v1("DELETE", "/messages/msg");
    expect(again.status).toBe(409);
    expect(json(again).error).toMatchObject({
      code: 409,
      status: "ALREADY_EXISTS",
      details: [
        expect.objectContaining({
          reason: "ALREADY_EXISTS",
          domain: ERROR_DOMAIN,
          metadata: { errorCode: "Delete.AlreadyDeleted" },
        }),
      ],
    });
    expect((await v1("POST", "/messages/msg:restore")).status).toBe(200);
    expect(await marks()).toEqual([false, false, false]);
  });
});

describe("the same rules as the legacy paths", () => {
  it("no credentials: 401, nothing changes", async () => {
    const res = await legacy(h, { method: "DELETE", path: `/v1/boxes/${BOX}/messages/msg` });
    expect(res.status).toBe(401);
    const m = await h.db.collection("messages").findOne({ boxId: BOX, messageId: "msg" });
    expect(m?.isDeleted ?? false).toBe(false);
  });

  it("a body of JSON null where a message is expected: 400, nothing changes", async () => {
    const res = await legacy(h, {
      method: "PATCH",
      path: `/v1/boxes/${BOX}/counteragentGroups/${GROUP}`,
      headers: { authorization: AUTH, "content-type": "application/json" },
      body: "null",
    });
    expect(res.status).toBe(400);
    expect(json(res).error.message).toBe("the body must be a JSON object, not null");
    const stored = await h.db
      .collection("counteragentGroups")
      .findOne({ counteragentGroupId: GROUP });
    expect(stored?.name).toBe("Partners");
  });

  it.each(["PUT", "POST"])(
    "%s, a verb the path does not serve: 405 with Allow, HEAD beside GET",
    async (verb) => {
      const res = await v1(verb, `/counteragentGroups/${GROUP}`, {});
      expect(res.status).toBe(405);
      expect(String(res.headers.allow).split(/,\s*/).sort()).toEqual([
        "DELETE",
        "GET",
        "HEAD",
        "PATCH",
      ]);
    },
  );

  it.each(["PATCH", "DELETE"])(
    "%s of a group's counteragents (a verb of the group itself): 405 with Allow, not the group with id g/counteragents",
    async (verb) => {
      const res = await v1(verb, `/counteragentGroups/${GROUP}/counteragents`);
      expect(res.status, res.text).toBe(405);
      expect(String(res.headers.allow).split(/,\s*/).sort()).toEqual(["GET", "HEAD"]);
    },
  );

  it("the legacy path of the same operation still answers as before", async () => {
    const res = await legacy(h, {
      method: "GET",
      path: `/GetCounteragentGroup?boxId=${BOX}&counteragentGroupId=${GROUP}`,
      headers: { authorization: AUTH, accept: "application/json" },
    });
    expect(res.status).toBe(200);
    expect(json(res)).toMatchObject({ CounteragentGroupId: GROUP, Name: "Partners" });
  });
});

describe("HTTP semantics of a resource's GET", () => {
  const path = `/counteragentGroups/${GROUP}`;

  it("ETag and Cache-Control: private, no-cache; If-None-Match with it: 304, no body; after a change: 200 and a new ETag", async () => {
    const first = await v1("GET", path);
    expect(first.status).toBe(200);
    const etag = String(first.headers.etag);
    expect(etag).toMatch(/^"[\w-]{27}"$/);
    expect(first.headers["cache-control"]).toBe("private, no-cache");
    const again = await v1("GET", path, undefined, { "if-none-match": etag });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
    expect(again.headers.etag).toBe(etag);
    expect(again.headers["content-length"]).toBeUndefined();
    // A weak comparison, and a list: either still matches.
    expect((await v1("GET", path, undefined, { "if-none-match": `"x", W/${etag}` })).status).toBe(
      304,
    );
    expect((await v1("PATCH", path, { Name: "Partners 2" })).status).toBe(200);
    const changed = await v1("GET", path, undefined, { "if-none-match": etag });
    expect(changed.status).toBe(200);
    expect(changed.headers.etag).not.toBe(etag);
    expect(json(changed).Name).toBe("Partners 2");
  });

  it("the same answer for another caller's view is another representation: the ETag is of the bytes", async () => {
    const a = await v1("GET", "/employees/u-admin/subscriptions");
    const b = await v1("GET", "/counteragentGroups");
    expect(a.headers.etag).not.toBe(b.headers.etag);
  });

  it("HEAD where GET is served: the GET's status and headers, no body", async () => {
    const get = await v1("GET", path);
    const head = await v1("HEAD", path);
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    expect(head.headers.etag).toBe(get.headers.etag);
    expect(head.headers["content-length"]).toBe(String(get.body.length));
  });

  it("a PATCH answers the group's new ETag, the one a GET then gives; a write that answers no resource (a custom method's empty answer) has none", async () => {
    const res = await v1("PATCH", path, { Name: "Partners 3" });
    expect(res.status).toBe(200);
    expect(res.headers.etag).toMatch(/^"[\w-]{27}"$/);
    expect((await v1("GET", path)).headers.etag).toBe(res.headers.etag);
    const added = await v1("POST", `/counteragentGroups/${GROUP}/counteragents/${CA(9)}:add`);
    expect(added.status).toBe(200);
    expect(added.headers.etag).toBeUndefined();
  });
});

describe("If-Match on a group's PATCH and DELETE (AIP-154, RFC 9110 §13.1.1): a write to the group as the caller saw it, or 412", () => {
  const path = `/counteragentGroups/${GROUP}`;
  const stored = () =>
    h.db.collection("counteragentGroups").findOne({ counteragentGroupId: GROUP });

  it("the current ETag: 200; a stale one: 412 FAILED_PRECONDITION with ETAG_MISMATCH and our code, nothing changed", async () => {
    const etag = String((await v1("GET", path)).headers.etag);
    const ok = await v1("PATCH", path, { Name: "Partners A" }, { "if-match": etag });
    expect(ok.status, ok.text).toBe(200);
    const stale = await v1("PATCH", path, { Name: "Partners B" }, { "if-match": etag });
    expect(stale.status, stale.text).toBe(412);
    const { error } = json(stale);
    expect(error.status).toBe("FAILED_PRECONDITION");
    expect(error.code).toBe(412);
    expect(error.details[0]).toMatchObject({
      reason: "ETAG_MISMATCH",
      domain: ERROR_DOMAIN,
      metadata: { errorCode: "CounteragentGroup.EtagMismatch" },
    });
    expect((await stored())?.name).toBe("Partners A");
  });

  it("a list naming the current tag, and *, match; a weak tag never does (a strong comparison); a malformed field: 400", async () => {
    const etag = String((await v1("GET", path)).headers.etag);
    expect((await v1("PATCH", path, { Name: "L1" }, { "if-match": `"x", ${etag}` })).status).toBe(
      200,
    );
    expect((await v1("PATCH", path, { Name: "L2" }, { "if-match": "*" })).status).toBe(200);
    const now = String((await v1("GET", path)).headers.etag);
    expect((await v1("PATCH", path, { Name: "L3" }, { "if-match": `W/${now}` })).status).toBe(412);
    const bad = await v1("PATCH", path, { Name: "L4" }, { "if-match": "no-quotes" });
    expect(bad.status, bad.text).toBe(400);
    expect((await stored())?.name).toBe("L2");
  });

  it("DELETE with a stale ETag: 412 and the group stays; with the current one: deleted", async () => {
    const etag = String((await v1("GET", path)).headers.etag);
    await v1("PATCH", path, { Name: "Changed meanwhile" });
    expect((await v1("DELETE", path, undefined, { "if-match": etag })).status).toBe(412);
    expect(await stored()).not.toBeNull();
    const current = String((await v1("GET", path)).headers.etag);
    expect((await v1("DELETE", path, undefined, { "if-match": current })).status).toBe(200);
    expect(await stored()).toBeNull();
  });

  it("a group that does not exist: 404, If-Match or not", async () => {
    const missing = "a0000000-0000-4000-8000-0000000000ff";
    const res = await v1(
      "PATCH",
      `/counteragentGroups/${missing}`,
      { Name: "X" },
      { "if-match": "*" },
    );
    expect(res.status).toBe(404);
  });

  it("two writers with the same ETag at once: one wins, the other loses the race with 412 (the check and the write are one conditional update)", async () => {
    const etag = String((await v1("GET", path)).headers.etag);
    for (let round = 0; round < 5; round++) {
      const tag = round === 0 ? etag : String((await v1("GET", path)).headers.etag);
      const answers = await Promise.all(
        ["Writer one", "Writer two"].map((name, i) =>
          v1("PATCH", path, { Name: `${name} ${round}` }, { "if-match": tag }).then((res) => ({
            i,
            status: res.status,
          })),
        ),
      );
      expect(answers.map((a) => a.status).sort()).toEqual([200, 412]);
      const winner = answers.find((a) => a.status === 200)?.i === 0 ? "Writer one" : "Writer two";
      expect((await stored())?.name).toBe(`${winner} ${round}`);
    }
  });

  it("the legacy path honours If-Match too: 412 with X-Service-ErrorCode, and answers no ETag", async () => {
    const etag = String((await v1("GET", path)).headers.etag);
    await v1("PATCH", path, { Name: "Changed" });
    const res = await legacy(h, {
      method: "POST",
      path: `/UpdateCounteragentGroup?boxId=${BOX}&counteragentGroupId=${GROUP}`,
      headers: {
        authorization: AUTH,
        "content-type": "application/json",
        accept: "application/json",
        "if-match": etag,
      },
      body: JSON.stringify({ Name: "Legacy" }),
    });
    expect(res.status).toBe(412);
    expect(res.headers["x-service-errorcode"]).toBe("CounteragentGroup.EtagMismatch");
    const get = await legacy(h, {
      method: "GET",
      path: `/GetCounteragentGroup?boxId=${BOX}&counteragentGroupId=${GROUP}`,
      headers: { authorization: AUTH, accept: "application/json" },
    });
    expect(get.status).toBe(200);
    expect(get.headers.etag).toBeUndefined();
  });
});
