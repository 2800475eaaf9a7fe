/**
 * The typescript-fetch client that openapi-generator makes from the service's
 * own /openapi.json (run.sh generates it into .gen/typescript-fetch, checks it
 * with this file under tsconfig.json, then runs this file with node:test on
 * the project's Node 24 against the service at DOCFLOW_URL).
 *
 * Every one of the eleven legacy operations is called through the generated
 * API classes. Set by hand: basePath, the credentials (the document's
 * ServiceAuth scheme, through the generated Configuration's apiKey) and one
 * default header, `Accept: application/json` (Configuration `headers`): the
 * generated code sends no Accept of its own, and fetch's default `*∕*` gets
 * binary protobuf. A `pre` middleware records what the client hands to fetch;
 * it changes nothing.
 *
 * Checked: the models and their types (counts are numbers, index keys are
 * strings, IsSubscribed is the string "true" or "false"), both listings walked
 * to the end (AfterIndexKey passed back until the empty page; TotalCount equals
 * the number of items walked), and that 400, 401, 403, 404 and 409 reject with
 * the generator's ResponseError carrying the status, X-Service-ErrorCode and a
 * problem+json body that the generated ProblemFromJSON reads.
 *
 * The demo data is left as found (what is restored is deleted again, created
 * groups are deleted, subscriptions are set back).
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { test } from "node:test";
import {
  BASE_PATH,
  Configuration,
  CounteragentServiceApi,
  CounteragentServiceV1Api,
  type DocflowLegacyCounteragentFromGroupResponse,
  type DocflowLegacyCounteragentGroup,
  type DocflowLegacySubscription,
  DocumentServiceApi,
  DocumentServiceV1Api,
  instanceOfProblem,
  type Problem,
  ProblemFromJSON,
  ResponseError,
  SubscriptionServiceApi,
} from "./.gen/typescript-fetch/index";

const BASE = process.env.DOCFLOW_URL ?? "";
assert.ok(BASE, "DOCFLOW_URL names the service");
const API_KEY = "demo-api-key";
const BOX = "11111111-1111-4111-8111-111111111111";
const OTHER_BOX = "22222222-2222-4222-8222-222222222222"; // no such box: a 403, as for a box of others
const ADMIN = { userId: "aaaaaaaa-0000-4000-8000-000000000001", token: "demo-admin-token" };
const CLERK = { userId: "aaaaaaaa-0000-4000-8000-000000000002", token: "demo-clerk-token" };
const NO_EMPLOYEE = "aaaaaaaa-0000-4000-8000-000000000099";
const SALES = "dddddddd-0000-4000-8000-000000000001";
const DEFAULT_GROUP = "00000000-0000-0000-0000-000000000000";
const PARTNERS = "99999999-0000-4000-8000-000000000001"; // 8 members, 6 of them IsMyCounteragent
const EMPTY_GROUP = "99999999-0000-4000-8000-000000000002"; // "New suppliers": no members
const NO_GROUP = "99999999-0000-4000-8000-000000000099";
const DELETED_MESSAGE = "eeeeeeee-0000-4000-8000-000000000001";
const DELETED_TEMPLATE = "eeeeeeee-0000-4000-8000-000000000002"; // its document lies in Accounting
const LIVE_MESSAGE = "eeeeeeee-0000-4000-8000-000000000003";
const ACCOUNTING_DOCUMENT = "ffffffff-0000-4000-8000-000000000032"; // of LIVE_MESSAGE
const NO_MESSAGE = "eeeeeeee-0000-4000-8000-000000000099";
const MOVABLE = "cccccccc-0000-4000-8000-000000000011"; // IsMyCounteragent, default group; Python moves …10
const INVITES_ME = "cccccccc-0000-4000-8000-000000000004"; // cannot be moved: 409
const NO_COUNTERAGENT = "cccccccc-0000-4000-8000-000000000099";
const BLANK = " "; // a 400 at the server
const FORGED_KEY = "A".repeat(24); // the shape of an AfterIndexKey, never issued: a 400
const CATALOG = [
  "CounteragentInvitation",
  "CounteragentInvitationResponses",
  "NewIncomingDocuments",
  "CounteragentSignatures",
  "CounteragentSignatureDenials",
  "ResolutionRequests",
  "ResolutionResults",
  "EmployeeRequests",
  "News",
  "ChatMessages",
];

interface Sent {
  readonly method: string;
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body: unknown;
}

/** The generated API classes on one Configuration, and what they handed to fetch. */
function client(token: string | null = ADMIN.token) {
  const sent: Sent[] = [];
  const configuration = new Configuration({
    basePath: BASE,
    headers: { Accept: "application/json" },
    ...(token === null
      ? {}
      : { apiKey: `ServiceAuth svcauth_api_client_id=${API_KEY}, svcauth_token=${token}` }),
    middleware: [
      {
        pre: async ({ url, init }) => {
          sent.push({
            method: init.method ?? "GET",
            url,
            headers: { ...(init.headers as Record<string, string>) },
            body: init.body,
          });
        },
      },
    ],
  });
  return {
    sent,
    last: () => {
      const last = sent.at(-1);
      assert.ok(last, "nothing was sent");
      return last;
    },
    subscriptions: new SubscriptionServiceApi(configuration),
    documents: new DocumentServiceApi(configuration),
    counteragents: new CounteragentServiceApi(configuration),
  };
}
type Client = ReturnType<typeof client>;

/** The call rejects with ResponseError: status, X-Service-ErrorCode and a Problem read by the generated code. */
async function expectError(
  call: () => Promise<unknown>,
  status: number,
  errorCode: string,
): Promise<Problem> {
  let caught: unknown;
  try {
    await call();
  } catch (error) {
    caught = error;
  }
  assert.ok(
    caught instanceof ResponseError,
    `expected a ResponseError for ${status}, got ${caught}`,
  );
  const { response } = caught;
  assert.equal(response.status, status);
  assert.equal(response.headers.get("X-Service-ErrorCode"), errorCode);
  assert.equal(response.headers.get("Content-Type"), "application/problem+json");
  const json: unknown = await response.json();
  assert.ok(typeof json === "object" && json !== null && instanceOfProblem(json), "not a Problem");
  const problem = ProblemFromJSON(json);
  assert.equal(typeof problem.status, "number");
  assert.equal(problem.status, status);
  assert.equal(problem.errorCode, errorCode);
  assert.equal(problem.type, "about:blank");
  assert.ok(typeof problem.title === "string" && problem.title.length > 0);
  assert.ok(typeof problem.detail === "string" && problem.detail.length > 0);
  if (status === 401) {
    assert.match(response.headers.get("WWW-Authenticate") ?? "", /^ServiceAuth /);
  }
  return problem;
}

// ------------------------------------------------------------------ what the client sends

test("the document names the service as its server", () => {
  assert.equal(BASE_PATH, BASE); // servers[0].url: the URL the document was fetched from
});

test("sends the Accept of the Configuration, Content-Type from the document", async () => {
  const c = client();
  const raw = await c.subscriptions.getSubscriptionsRaw({ boxId: BOX, userId: CLERK.userId });
  assert.equal(raw.raw.status, 200);
  assert.equal(raw.raw.headers.get("Content-Type"), "application/json; charset=utf-8"); // not protobuf
  assert.equal((await raw.value()).subscriptions.length, CATALOG.length);
  let sent = c.last();
  assert.equal(sent.method, "GET");
  assert.deepEqual(sent.headers, {
    Accept: "application/json",
    Authorization: `ServiceAuth svcauth_api_client_id=${API_KEY}, svcauth_token=${ADMIN.token}`,
  });
  await c.subscriptions.updateSubscriptions({
    boxId: BOX,
    userId: CLERK.userId,
    docflowLegacySubscriptionsToUpdate: {},
  });
  sent = c.last();
  assert.equal(sent.headers["Content-Type"], "application/json");
  assert.equal(sent.headers.Accept, "application/json");
  assert.equal(sent.body, "{}");
  await expectError(
    () => c.documents.restore({ boxId: BOX, messageId: LIVE_MESSAGE }),
    409,
    "Restore.AlreadyRestored",
  );
  sent = c.last();
  assert.equal(sent.method, "POST");
  assert.equal(sent.headers.Accept, "application/json");
  assert.equal(sent.headers["Content-Type"], undefined);
  assert.equal(sent.body, undefined);
});

// ------------------------------------------------------------------ subscriptions

test("GetSubscriptions", async () => {
  const res = await client().subscriptions.getSubscriptions({ boxId: BOX, userId: CLERK.userId });
  // Always written, so required: the generated types have no `| undefined` here (tsc checks).
  const subscriptions: DocflowLegacySubscription[] = res.subscriptions;
  assert.deepEqual(
    subscriptions.map((s) => s.id),
    CATALOG,
  );
  for (const s of subscriptions) {
    assert.ok(
      s.isSubscribed === "true" || s.isSubscribed === "false",
      `IsSubscribed ${s.isSubscribed}`,
    );
  }
  const flags = Object.fromEntries(subscriptions.map((s) => [s.id, s.isSubscribed === "true"]));
  assert.equal(flags.News, false);
  assert.equal(flags.ChatMessages, false);
  assert.equal(flags.EmployeeRequests, true);
});

test("UpdateSubscriptions, and back", async () => {
  const c = client(CLERK.token);
  const update = (news: "true" | "false", resolutions: "true" | "false") =>
    c.subscriptions.updateSubscriptions({
      boxId: BOX,
      userId: CLERK.userId,
      docflowLegacySubscriptionsToUpdate: {
        subscriptions: [
          { id: "News", isSubscribed: news },
          { id: "ResolutionRequests", isSubscribed: resolutions },
        ],
      },
    });
  let res = await update("true", "false");
  assert.deepEqual(JSON.parse(String(c.last().body)), {
    Subscriptions: [
      { Id: "News", IsSubscribed: "true" },
      { Id: "ResolutionRequests", IsSubscribed: "false" },
    ],
  });
  let flags = Object.fromEntries(res.subscriptions.map((s) => [s.id, s.isSubscribed]));
  assert.deepEqual(
    [flags.News, flags.ResolutionRequests, flags.ChatMessages],
    ["true", "false", "false"],
  );
  res = await update("false", "true");
  flags = Object.fromEntries(res.subscriptions.map((s) => [s.id, s.isSubscribed]));
  assert.deepEqual([flags.News, flags.ResolutionRequests], ["false", "true"]);
});

// ------------------------------------------------------------------ documents

test("Restore and Delete a message", async () => {
  const { documents } = client();
  assert.equal(await documents.restore({ boxId: BOX, messageId: DELETED_MESSAGE }), undefined);
  await expectError(
    () => documents.restore({ boxId: BOX, messageId: DELETED_MESSAGE }),
    409,
    "Restore.AlreadyRestored",
  );
  assert.equal(await documents._delete({ boxId: BOX, messageId: DELETED_MESSAGE }), undefined);
  await expectError(
    () => documents._delete({ boxId: BOX, messageId: DELETED_MESSAGE }),
    409,
    "Delete.AlreadyDeleted",
  );
});

// ------------------------------------------------------------------ counteragents

/** Every page of GetCounteragentsFromGroup, AfterIndexKey passed back until the empty page. */
async function walk(
  c: Client,
  group: string,
  count: number,
): Promise<DocflowLegacyCounteragentFromGroupResponse[]> {
  const pages: DocflowLegacyCounteragentFromGroupResponse[] = [];
  let afterIndexKey: string | undefined;
  for (;;) {
    const page = await c.counteragents.getCounteragentsFromGroup({
      boxId: BOX,
      counteragentGroupId: group,
      count,
      ...(afterIndexKey === undefined ? {} : { afterIndexKey }),
    });
    assert.ok(Number.isInteger(page.totalCount), `TotalCount ${page.totalCount}`);
    const boxes: string[] = page.counteragentBoxId;
    assert.ok(Array.isArray(boxes), "CounteragentBoxId is always there");
    for (const box of boxes) assert.equal(typeof box, "string");
    assert.ok(boxes.length <= count);
    pages.push(page);
    if (boxes.length === 0) {
      assert.equal(page.afterIndexKey, undefined, "an empty page has no AfterIndexKey");
      return pages;
    }
    assert.equal(typeof page.afterIndexKey, "string");
    assert.ok((page.afterIndexKey ?? "").length >= 22);
    assert.ok(pages.length <= 50, "the walk does not end");
    afterIndexKey = page.afterIndexKey;
  }
}

for (const [group, count, total] of [
  [PARTNERS, 4, 6],
  [PARTNERS, 1, 6],
  [EMPTY_GROUP, 10, 0],
] as const) {
  test(`GetCounteragentsFromGroup walks ${group} to the end, ${count} a page`, async () => {
    const c = client();
    const pages = await walk(c, group, count);
    const boxes = pages.flatMap((p) => p.counteragentBoxId);
    assert.deepEqual(new Set(pages.map((p) => p.totalCount)), new Set([total]));
    assert.equal(boxes.length, total);
    assert.equal(new Set(boxes).size, total);
    assert.equal(pages.length, Math.ceil(total / count) + 1);
    if (total > count) {
      assert.ok(c.sent[1]?.url.includes(`afterIndexKey=${pages[0]?.afterIndexKey}`));
    }
  });
}

test("GetCounteragentsFromGroup of the default group", async () => {
  const boxes = (await walk(client(), DEFAULT_GROUP, 2)).flatMap((p) => p.counteragentBoxId);
  assert.ok(boxes.includes(MOVABLE));
  assert.ok(!boxes.includes("cccccccc-0000-4000-8000-000000000012")); // IsInvitedByMe
});

test("a counteragent group from creation to deletion", async () => {
  const c = client();
  const { counteragents } = c;
  const name = `OpenAPI TypeScript ${randomUUID().slice(0, 8)}`;
  const created = await counteragents.createCounteragentGroup({
    boxId: BOX,
    docflowLegacyCounteragentGroupToCreate: {
      name: `  ${name} `,
      departments: { departmentIds: [SALES, SALES] },
    },
  });
  assert.equal(c.last().headers["Content-Type"], "application/json");
  const group = created.counteragentGroupId;
  assert.match(group, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(created.name, name);
  assert.deepEqual(created.departments?.departmentIds, [SALES]);

  const got = await counteragents.getCounteragentGroup({ boxId: BOX, counteragentGroupId: group });
  assert.deepEqual(
    [got.counteragentGroupId, got.name, got.departments?.departmentIds],
    [group, name, [SALES]],
  );

  assert.equal(
    await counteragents.addCounteragentToGroup({
      boxId: BOX,
      counteragentBoxId: MOVABLE,
      counteragentGroupId: group,
    }),
    undefined,
  );
  const [first] = await walk(c, group, 10);
  assert.deepEqual([first?.counteragentBoxId, first?.totalCount], [[MOVABLE], 1]);

  let updated = await counteragents.updateCounteragentGroup({
    boxId: BOX,
    counteragentGroupId: group,
    docflowLegacyCounteragentGroupToUpdate: {
      name: `${name} renamed`,
      groupDepartments: { anyDepartment: "true" },
    },
  });
  assert.deepEqual(JSON.parse(String(c.last().body)), {
    Name: `${name} renamed`,
    GroupDepartments: { AnyDepartment: "true" },
  });
  assert.equal(updated.name, `${name} renamed`);
  assert.equal(updated.departments, undefined); // any department

  updated = await counteragents.updateCounteragentGroup({
    boxId: BOX,
    counteragentGroupId: group,
    docflowLegacyCounteragentGroupToUpdate: {
      groupDepartments: { anyDepartment: "false", departments: { departmentIds: [SALES] } },
    },
  });
  assert.equal(updated.name, `${name} renamed`);
  assert.deepEqual(updated.departments?.departmentIds, [SALES]);

  // GetCounteragentGroups, one group a page, to the empty page past the end.
  const walked: string[] = [];
  for (let page = 1; ; page++) {
    assert.ok(page <= 100, "the walk does not end");
    const listed = await counteragents.getCounteragentGroups({ boxId: BOX, page, count: 1 });
    assert.ok(Number.isInteger(listed.totalCount));
    const groups: DocflowLegacyCounteragentGroup[] = listed.groups;
    if (groups.length === 0) {
      assert.equal(listed.totalCount, walked.length);
      break;
    }
    assert.equal(groups.length, 1);
    walked.push(groups[0]?.counteragentGroupId ?? "");
  }
  assert.equal(new Set(walked).size, walked.length);
  for (const id of [PARTNERS, EMPTY_GROUP, group]) assert.ok(walked.includes(id), id);
  const everything = await counteragents.getCounteragentGroups({ boxId: BOX });
  assert.deepEqual(
    everything.groups.map((g) => g.counteragentGroupId),
    walked,
  );

  assert.equal(
    await counteragents.deleteCounteragentGroup({ boxId: BOX, counteragentGroupId: group }),
    undefined,
  );
  await expectError(
    () => counteragents.getCounteragentGroup({ boxId: BOX, counteragentGroupId: group }),
    404,
    "CounteragentGroup.NotFound",
  );
  const boxes = (await walk(c, DEFAULT_GROUP, 10)).flatMap((p) => p.counteragentBoxId);
  assert.equal(boxes.at(-1), MOVABLE); // back in the default group, last in line
});

// ------------------------------------------------------------------ errors of every operation

interface Args {
  box?: string;
  user?: string;
  message?: string;
  doc?: string | undefined;
  group?: string;
  key?: string;
  name?: string;
  deps?: string[];
  who?: string;
  subs?: [string, "true" | "false"][];
}

const OPERATIONS = [
  "GetSubscriptions",
  "UpdateSubscriptions",
  "Restore",
  "Delete",
  "GetCounteragentsFromGroup",
  "CreateCounteragentGroup",
  "UpdateCounteragentGroup",
  "DeleteCounteragentGroup",
  "GetCounteragentGroup",
  "GetCounteragentGroups",
  "AddCounteragentToGroup",
] as const;
type Operation = (typeof OPERATIONS)[number];

/** Each operation by name, as a function of the arguments that vary. */
function calls(c: Client): Record<Operation, (a: Args) => Promise<unknown>> {
  const { subscriptions: s, documents: d, counteragents: g } = c;
  return {
    GetSubscriptions: (a) =>
      s.getSubscriptions({ boxId: a.box ?? BOX, userId: a.user ?? CLERK.userId }),
    UpdateSubscriptions: (a) =>
      s.updateSubscriptions({
        boxId: a.box ?? BOX,
        userId: a.user ?? CLERK.userId,
        docflowLegacySubscriptionsToUpdate: {
          subscriptions: (a.subs ?? []).map(([id, isSubscribed]) => ({
            id: id as "News",
            isSubscribed,
          })),
        },
      }),
    Restore: (a) =>
      d.restore({
        boxId: a.box ?? BOX,
        messageId: a.message ?? DELETED_TEMPLATE,
        ...(a.doc === undefined ? {} : { documentId: a.doc }),
      }),
    Delete: (a) =>
      d._delete({
        boxId: a.box ?? BOX,
        messageId: a.message ?? LIVE_MESSAGE,
        ...("doc" in a
          ? a.doc === undefined
            ? {}
            : { documentId: a.doc }
          : { documentId: ACCOUNTING_DOCUMENT }),
      }),
    GetCounteragentsFromGroup: (a) =>
      g.getCounteragentsFromGroup({
        boxId: a.box ?? BOX,
        counteragentGroupId: a.group ?? PARTNERS,
        ...(a.key === undefined ? {} : { afterIndexKey: a.key }),
      }),
    CreateCounteragentGroup: (a) =>
      g.createCounteragentGroup({
        boxId: a.box ?? BOX,
        docflowLegacyCounteragentGroupToCreate: {
          name: a.name ?? "OpenAPI never created",
          ...(a.deps === undefined ? {} : { departments: { departmentIds: a.deps } }),
        },
      }),
    UpdateCounteragentGroup: (a) =>
      g.updateCounteragentGroup({
        boxId: a.box ?? BOX,
        counteragentGroupId: a.group ?? EMPTY_GROUP,
        docflowLegacyCounteragentGroupToUpdate: { name: a.name ?? "New suppliers" },
      }),
    DeleteCounteragentGroup: (a) =>
      g.deleteCounteragentGroup({ boxId: a.box ?? BOX, counteragentGroupId: a.group ?? NO_GROUP }),
    GetCounteragentGroup: (a) =>
      g.getCounteragentGroup({ boxId: a.box ?? BOX, counteragentGroupId: a.group ?? PARTNERS }),
    GetCounteragentGroups: (a) => g.getCounteragentGroups({ boxId: a.box ?? BOX }),
    AddCounteragentToGroup: (a) =>
      g.addCounteragentToGroup({
        boxId: a.box ?? BOX,
        counteragentBoxId: a.who ?? INVITES_ME,
        counteragentGroupId: a.group ?? EMPTY_GROUP,
      }),
  };
}

type Who = "admin" | "clerk" | "nobody";
const TOKENS: Record<Who, string | null> = {
  admin: ADMIN.token,
  clerk: CLERK.token,
  nobody: null,
};

/** [operation, who calls, arguments, status, X-Service-ErrorCode]: every operation's 400, 401 and 403, its 404 and 409 where it has them. */
const ERRORS: [Operation, Who, Args, number, string][] = [
  ["GetSubscriptions", "admin", { user: BLANK }, 400, "Http.BadRequest"],
  [
    "UpdateSubscriptions",
    "admin",
    {
      subs: [
        ["News", "true"],
        ["News", "false"],
      ],
    },
    400,
    "Subscriptions.DuplicateId",
  ],
  ["Restore", "admin", { message: BLANK }, 400, "Http.BadRequest"],
  ["Delete", "admin", { message: BLANK, doc: undefined }, 400, "Http.BadRequest"],
  ["GetCounteragentsFromGroup", "admin", { key: FORGED_KEY }, 400, "Http.BadRequest"],
  [
    "CreateCounteragentGroup",
    "admin",
    { deps: ["no-such-department"] },
    400,
    "CounteragentGroup.UnknownDepartment",
  ],
  [
    "UpdateCounteragentGroup",
    "admin",
    { group: DEFAULT_GROUP, name: "Default renamed" },
    400,
    "CounteragentGroup.DefaultGroup",
  ],
  [
    "DeleteCounteragentGroup",
    "admin",
    { group: DEFAULT_GROUP },
    400,
    "CounteragentGroup.DefaultGroup",
  ],
  ["GetCounteragentGroup", "admin", { group: BLANK }, 400, "Http.BadRequest"],
  ["GetCounteragentGroups", "admin", { box: BLANK }, 400, "Http.BadRequest"],
  ["AddCounteragentToGroup", "admin", { who: BLANK }, 400, "Http.BadRequest"],
  ...OPERATIONS.map((op): [Operation, Who, Args, number, string] => [
    op,
    "nobody",
    {},
    401,
    "Http.Unauthorized",
  ]),
  ...OPERATIONS.map((op): [Operation, Who, Args, number, string] => [
    op,
    "admin",
    { box: OTHER_BOX },
    403,
    "Http.Forbidden",
  ]),
  ["GetSubscriptions", "clerk", { user: ADMIN.userId }, 403, "Http.Forbidden"],
  ["UpdateSubscriptions", "clerk", { user: ADMIN.userId }, 403, "Http.Forbidden"],
  ["Restore", "clerk", {}, 403, "Document.AccessDenied"],
  ["Delete", "clerk", {}, 403, "Document.AccessDenied"],
  ...OPERATIONS.slice(4).map((op): [Operation, Who, Args, number, string] => [
    op,
    "clerk",
    {},
    403,
    "Http.Forbidden",
  ]),
  ["GetSubscriptions", "admin", { user: NO_EMPLOYEE }, 404, "Employee.NotFound"],
  ["UpdateSubscriptions", "admin", { user: NO_EMPLOYEE }, 404, "Employee.NotFound"],
  ["Restore", "admin", { message: NO_MESSAGE }, 404, "Message.NotFound"],
  ["Delete", "admin", { message: NO_MESSAGE, doc: undefined }, 404, "Message.NotFound"],
  ["GetCounteragentsFromGroup", "admin", { group: NO_GROUP }, 404, "CounteragentGroup.NotFound"],
  ["UpdateCounteragentGroup", "admin", { group: NO_GROUP }, 404, "CounteragentGroup.NotFound"],
  ["DeleteCounteragentGroup", "admin", {}, 404, "CounteragentGroup.NotFound"],
  ["GetCounteragentGroup", "admin", { group: NO_GROUP }, 404, "CounteragentGroup.NotFound"],
  ["AddCounteragentToGroup", "admin", { who: NO_COUNTERAGENT }, 404, "Counteragent.NotFound"],
  ["Restore", "admin", { message: LIVE_MESSAGE }, 409, "Restore.AlreadyRestored"],
  ["Delete", "admin", { message: DELETED_MESSAGE, doc: undefined }, 409, "Delete.AlreadyDeleted"],
  [
    "CreateCounteragentGroup",
    "admin",
    { name: "PARTNERS" },
    409,
    "CounteragentGroup.DuplicateName",
  ],
  [
    "UpdateCounteragentGroup",
    "admin",
    { name: "partners" },
    409,
    "CounteragentGroup.DuplicateName",
  ],
  ["AddCounteragentToGroup", "admin", {}, 409, "Counteragent.NotMyCounteragent"],
];

for (const [op, who, args, status, errorCode] of ERRORS) {
  test(`${status} ${op} (${who} ${JSON.stringify(args)})`, async () => {
    await expectError(() => calls(client(TOKENS[who]))[op](args), status, errorCode);
  });
}

test("every operation of the document, and each of its 400/401/403/404/409, is covered", async () => {
  const doc = (await (await fetch(`${BASE}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
  };
  // The legacy operations here; the resource API (/v1/) by the scenario below.
  assert.deepEqual(
    Object.keys(doc.paths)
      .filter((p) => !p.startsWith("/v1/"))
      .map((p) => p.slice(1))
      .sort(),
    [...OPERATIONS].sort(),
  );
  for (const op of OPERATIONS) {
    const [operation] = Object.values(doc.paths[`/${op}`] ?? {});
    const declared = Object.keys(operation?.responses ?? {})
      .filter((s) => ["400", "401", "403", "404", "409"].includes(s))
      .map(Number)
      .sort();
    const covered = [...new Set(ERRORS.filter((e) => e[0] === op).map((e) => e[3]))].sort();
    assert.deepEqual(covered, declared, `${op}: declared ${declared}, covered ${covered}`);
  }
});

// ------------------------------------------------------------------ the resource API (/v1/, docs/api.md §3.1)

/** A resource API error: the generated ResponseError, its body google.rpc.Status (AIP-193). */
async function rpcStatusOf(call: () => Promise<unknown>, status: number) {
  const error = await call().then(
    () => assert.fail(`expected ${status}, got a success`),
    (e: unknown) => e,
  );
  assert.ok(error instanceof ResponseError, `not a ResponseError: ${String(error)}`);
  assert.equal(error.response.status, status);
  const body = (await error.response.json()) as {
    error: {
      code: number;
      status: string;
      details: { reason: string; metadata: { errorCode: string } }[];
    };
  };
  assert.equal(body.error.code, status);
  return body.error;
}

test("the resource API: create a group (and retry it), page, update with a mask and an ETag, lose a race on a stale one, restore a message", async () => {
  const configuration = new Configuration({
    basePath: BASE,
    headers: { Accept: "application/json" },
    apiKey: `ServiceAuth svcauth_api_client_id=${API_KEY}, svcauth_token=${ADMIN.token}`,
  });
  const v1 = new CounteragentServiceV1Api(configuration);
  const documents = new DocumentServiceV1Api(configuration);

  // Create with a request id (AIP-155): 201, Location names the group, its ETag.
  const name = `Resource API TS ${randomUUID().slice(0, 8)}`;
  const requestId = randomUUID();
  const create = () =>
    v1.createCounteragentGroupV1Raw({
      boxId: BOX,
      requestId,
      docflowLegacyCounteragentGroupToCreateJson: { name },
    });
  const created = await create();
  assert.equal(created.raw.status, 201);
  const group = (await created.value()).counteragentGroupId ?? "";
  assert.ok(group, "the created group has an id");
  assert.equal(created.raw.headers.get("location"), `/v1/boxes/${BOX}/counteragentGroups/${group}`);
  const firstTag = created.raw.headers.get("etag");
  assert.match(firstTag ?? "", /^"[\w-]+"$/);
  // A retry (its answer lost on the way): the same group, not a second one.
  const retried = await create();
  assert.equal(retried.raw.status, 201);
  assert.equal((await retried.value()).counteragentGroupId, group);
  const listed = await v1.getCounteragentGroupsV1({ boxId: BOX });
  assert.equal((listed.groups ?? []).filter((g) => g.name === name).length, 1);

  // Page through a group's counteragents (AIP-158), each nextPageToken passed back to an empty one.
  const boxes: string[] = [];
  let pageToken: string | undefined;
  let total = -1;
  for (let i = 0; i < 10; i++) {
    const page = await v1.getCounteragentsFromGroupV1({
      boxId: BOX,
      counteragentGroupId: PARTNERS,
      pageSize: 4,
      ...(pageToken === undefined ? {} : { pageToken }),
    });
    total = page.totalCount ?? 0;
    boxes.push(...(page.counteragentBoxId ?? []));
    pageToken = page.nextPageToken;
    if (!pageToken) break;
  }
  assert.equal(
    pageToken,
    undefined,
    "the last page has none (proto3 JSON leaves an empty one out)",
  );
  assert.equal(total, 6);
  assert.equal(new Set(boxes).size, 6);

  // :add moves a counteragent in; the group's page shows it.
  await v1.addCounteragentToGroupV1({
    boxId: BOX,
    counteragentGroupId: group,
    counteragentBoxId: MOVABLE,
  });
  const members = await v1.getCounteragentsFromGroupV1({ boxId: BOX, counteragentGroupId: group });
  assert.deepEqual(members.counteragentBoxId, [MOVABLE]);

  // Update with the ETag: 200 and the new ETag.
  const got = await v1.getCounteragentGroupV1Raw({ boxId: BOX, counteragentGroupId: group });
  const tag = got.raw.headers.get("etag") ?? "";
  assert.equal(tag, firstTag);
  // The mask (AIP-134) names Name only: the departments in the body are not written.
  const renamed = await v1.updateCounteragentGroupV1Raw({
    boxId: BOX,
    counteragentGroupId: group,
    ifMatch: tag,
    updateMask: "name",
    docflowLegacyCounteragentGroupToUpdateJson: {
      name: `${name} 2`,
      groupDepartments: { anyDepartment: false, departments: { departmentIds: [SALES] } },
    },
  });
  const renamedGroup = await renamed.value();
  assert.equal(renamedGroup.name, `${name} 2`);
  assert.equal(renamedGroup.departments, undefined);
  const newTag = renamed.raw.headers.get("etag") ?? "";
  assert.notEqual(newTag, tag);

  // The old ETag loses: 412 FAILED_PRECONDITION, nothing written.
  const stale = await rpcStatusOf(
    () =>
      v1.updateCounteragentGroupV1({
        boxId: BOX,
        counteragentGroupId: group,
        ifMatch: tag,
        docflowLegacyCounteragentGroupToUpdateJson: { name: `${name} 3` },
      }),
    412,
  );
  assert.equal(stale.status, "FAILED_PRECONDITION");
  assert.equal(stale.details[0]?.reason, "ETAG_MISMATCH");
  assert.equal(stale.details[0]?.metadata.errorCode, "CounteragentGroup.EtagMismatch");
  assert.equal(
    (await v1.getCounteragentGroupV1({ boxId: BOX, counteragentGroupId: group })).name,
    `${name} 2`,
  );

  // Delete with the stale ETag: 412; with the current one: gone.
  await rpcStatusOf(
    () => v1.deleteCounteragentGroupV1({ boxId: BOX, counteragentGroupId: group, ifMatch: tag }),
    412,
  );
  await v1.deleteCounteragentGroupV1({ boxId: BOX, counteragentGroupId: group, ifMatch: newTag });
  const gone = await rpcStatusOf(
    () => v1.getCounteragentGroupV1({ boxId: BOX, counteragentGroupId: group }),
    404,
  );
  assert.equal(gone.details[0]?.metadata.errorCode, "CounteragentGroup.NotFound");

  // Restore a deleted message (twice: 409), and delete it again: the demo data as it was.
  await documents.restoreMessageV1({ boxId: BOX, messageId: DELETED_MESSAGE });
  const again = await rpcStatusOf(
    () => documents.restoreMessageV1({ boxId: BOX, messageId: DELETED_MESSAGE }),
    409,
  );
  assert.equal(again.details[0]?.metadata.errorCode, "Restore.AlreadyRestored");
  await documents.deleteMessageV1({ boxId: BOX, messageId: DELETED_MESSAGE });
});
