/**
 * Round trips to MongoDB per RPC, from command monitoring (any engine): the
 * budget of every operation, TotalCount counted once per walk, every hinted
 * index exists, every read projects.
 */
import { createHash } from "node:crypto";
import { create, toBinary } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CounteragentService } from "../../gen/docflow/api/v1/counteragents_pb";
import { DocumentService } from "../../gen/docflow/api/v1/documents_pb";
import { SubscriptionService } from "../../gen/docflow/api/v1/subscriptions_pb";
import { SubscriptionSchema } from "../../gen/docflow/legacy/subscriptions_pb";
import { Collections, IndexNames } from "../../src/storage/collections";
import {
  CommandRecorder,
  describeCommand,
  hintsOf,
  type RecordedCommand,
} from "../support/commands";
import { adminBoxFixture, KEY } from "../support/fixture";
import { type Harness, legacy, startHarness, TEST_CACHE, TEST_TIMEOUTS } from "../support/harness";
import { call, expectOk } from "../support/protocols";
import { envelope, envelopes, h2Request } from "../support/wire";

const BOX = "b7000000-0000-4000-8000-000000000001";
const GROUP = "g-walk";
const DOOMED = "g-doomed";
const EMPTY = "g-empty";
const MEMBERS = Array.from({ length: 10 }, (_, i) => `m-${String(i).padStart(2, "0")}`);
const AUTH = `ServiceAuth svcauth_api_client_id=${KEY}, svcauth_token=admin-token`;

function fixture() {
  return adminBoxFixture(
    BOX,
    [
      { counteragentGroupId: GROUP, name: "Walk" },
      { counteragentGroupId: DOOMED, name: "Doomed" },
      { counteragentGroupId: EMPTY, name: "Empty" },
    ],
    [
      ...MEMBERS.map((counteragentBoxId, i) => ({
        counteragentBoxId,
        counteragentGroupId: GROUP,
        joinedGroupAt: new Date(Date.UTC(2026, 0, 1 + i)).toISOString(),
      })),
      { counteragentBoxId: "invites", counteragentGroupId: GROUP, status: "InvitesMe" },
      { counteragentBoxId: "x-1", counteragentGroupId: DOOMED },
      { counteragentBoxId: "x-2", counteragentGroupId: DOOMED },
      { counteragentBoxId: "loner" },
    ],
  );
}

const rpc = CounteragentService.method;
const page = (h: Harness, options: { after?: string; count?: number; group?: string } = {}) =>
  call(
    h,
    "legacy-protobuf",
    rpc.getCounteragentsFromGroup,
    create(rpc.getCounteragentsFromGroup.input, {
      boxId: BOX,
      counteragentGroupId: options.group ?? GROUP,
      count: options.count ?? 3,
      ...(options.after ? { afterIndexKey: options.after } : {}),
    }),
    AUTH,
  );

/** A page key as the earlier version issued it (no TotalCount). */
function version1Key(groupId: string, joinedGroupAt: Date, counteragentBoxId: string): string {
  const payload = Buffer.concat([
    Buffer.from([1]),
    Buffer.alloc(8),
    Buffer.from(counteragentBoxId),
  ]);
  payload.writeBigInt64BE(BigInt(joinedGroupAt.getTime()), 1);
  const check = createHash("sha256")
    .update(`${BOX}\u0000${groupId}\u0000`)
    .update(payload)
    .digest()
    .subarray(0, 6);
  return Buffer.concat([payload, check]).toString("base64url");
}

/**
 * Every operation once, as a client calls it: [name, the call, what to do
 * before it, unrecorded]. Order matters (state moves on).
 */
function operations(h: Harness): [string, () => Promise<unknown>, (() => Promise<void>)?][] {
  const docs = DocumentService.method;
  const subs = SubscriptionService.method;
  const ok = async <T>(p: Promise<T>) => {
    const r = (await p) as { ok: boolean };
    expect(r, JSON.stringify(r)).toMatchObject({ ok: true });
    return r;
  };
  let secondPageKey = "";
  let lastKey = "";
  let createdId = "";
  return [
    [
      "GetCounteragentsFromGroup, first page",
      async () => {
        const first = expectOk(await page(h));
        secondPageKey = first.AfterIndexKey;
        return first;
      },
    ],
    ["GetCounteragentsFromGroup, a later page", () => ok(page(h, { after: secondPageKey }))],
    [
      "GetCounteragentsFromGroup, the empty page after the last",
      () => ok(page(h, { after: lastKey })),
      // The walk's last page, fetched before: its key leads to the empty page.
      async () => {
        lastKey = expectOk(await page(h, { count: 100 })).AfterIndexKey;
      },
    ],
    [
      "GetCounteragentsFromGroup, a page with a key of the earlier version",
      () => ok(page(h, { after: version1Key(GROUP, new Date(Date.UTC(2026, 0, 2)), "m-01") })),
    ],
    [
      "Delete",
      () =>
        ok(
          call(
            h,
            "legacy-protobuf",
            docs.delete,
            create(docs.delete.input, { boxId: BOX, messageId: "msg" }),
            AUTH,
          ),
        ),
    ],
    [
      "Restore",
      () =>
        ok(
          call(
            h,
            "legacy-protobuf",
            docs.restore,
            create(docs.restore.input, { boxId: BOX, messageId: "msg" }),
            AUTH,
          ),
        ),
    ],
    [
      "GetSubscriptions",
      () =>
        ok(
          call(
            h,
            "legacy-protobuf",
            subs.getSubscriptions,
            create(subs.getSubscriptions.input, { boxId: BOX, userId: "u-admin" }),
            AUTH,
          ),
        ),
    ],
    [
      "UpdateSubscriptions",
      () =>
        ok(
          call(
            h,
            "legacy-protobuf",
            subs.updateSubscriptions,
            create(subs.updateSubscriptions.input, {
              boxId: BOX,
              userId: "u-admin",
              subscriptions: {
                Subscriptions: [create(SubscriptionSchema, { Id: "News", IsSubscribed: false })],
              },
            }),
            AUTH,
          ),
        ),
    ],
    [
      "CreateCounteragentGroup",
      async () => {
        const r = await call(
          h,
          "legacy-protobuf",
          rpc.createCounteragentGroup,
          create(rpc.createCounteragentGroup.input, {
            boxId: BOX,
            group: { Name: `New ${Math.random()}` },
          }),
          AUTH,
        );
        createdId = expectOk(r).CounteragentGroupId;
      },
    ],
    [
      "UpdateCounteragentGroup",
      () =>
        ok(
          call(
            h,
            "legacy-protobuf",
            rpc.updateCounteragentGroup,
            create(rpc.updateCounteragentGroup.input, {
              boxId: BOX,
              counteragentGroupId: createdId,
              changes: { Name: `Renamed ${Math.random()}` },
            }),
            AUTH,
          ),
        ),
    ],
    [
      "GetCounteragentGroup",
      () =>
        ok(
          call(
            h,
            "legacy-protobuf",
            rpc.getCounteragentGroup,
            create(rpc.getCounteragentGroup.input, { boxId: BOX, counteragentGroupId: GROUP }),
            AUTH,
          ),
        ),
    ],
    [
      "GetCounteragentGroups",
      () =>
        ok(
          call(
            h,
            "legacy-protobuf",
            rpc.getCounteragentGroups,
            create(rpc.getCounteragentGroups.input, { boxId: BOX }),
            AUTH,
          ),
        ),
    ],
    [
      "AddCounteragentToGroup",
      () =>
        ok(
          call(
            h,
            "legacy-protobuf",
            rpc.addCounteragentToGroup,
            create(rpc.addCounteragentToGroup.input, {
              boxId: BOX,
              counteragentBoxId: "loner",
              counteragentGroupId: createdId,
            }),
            AUTH,
          ),
        ),
    ],
    [
      "DeleteCounteragentGroup (two members)",
      () =>
        ok(
          call(
            h,
            "legacy-protobuf",
            rpc.deleteCounteragentGroup,
            create(rpc.deleteCounteragentGroup.input, { boxId: BOX, counteragentGroupId: DOOMED }),
            AUTH,
          ),
        ),
    ],
  ];
}

/**
 * The budget: the commands each operation sends with the credentials, rights
 * and box in the cache (docs/operations.md, "Caching"), as `<command> <collection>`. Calls
 * running in parallel are compared in any order. A change that adds a round
 * trip fails here; one that removes a round trip updates this table and the
 * one in docs/performance.md, "Round trips per call".
 */
const BUDGETS: Record<string, string[]> = {
  "GetCounteragentsFromGroup, first page": ["aggregate counteragents", "find counteragents"],
  "GetCounteragentsFromGroup, a later page": ["find counteragents"],
  "GetCounteragentsFromGroup, the empty page after the last": [
    "find counteragentGroups",
    "find counteragents",
  ],
  "GetCounteragentsFromGroup, a page with a key of the earlier version": [
    "aggregate counteragents",
    "find counteragents",
    "find counteragents",
  ],
  Delete: ["find messages", "update messages"],
  Restore: ["find messages", "update messages"],
  GetSubscriptions: ["find employees"],
  UpdateSubscriptions: ["findAndModify employees"],
  CreateCounteragentGroup: ["insert counteragentGroups"],
  UpdateCounteragentGroup: ["find counteragentGroups", "update counteragentGroups"],
  GetCounteragentGroup: ["find counteragentGroups"],
  GetCounteragentGroups: ["aggregate counteragentGroups", "find counteragentGroups"],
  AddCounteragentToGroup: [
    "find counteragentGroups",
    "find counteragentGroups",
    "find counteragents",
    "update counteragents",
  ],
  "DeleteCounteragentGroup (two members)": [
    "delete counteragentGroups",
    "find counteragentGroups",
    "find counteragents",
    "find counteragents",
    "update counteragentGroups",
    "update counteragents",
  ],
};

/** What a call costs on top when nothing is cached: API client, token, the caller's rights, the box. */
const AUTH_READS = ["find apiClients", "find boxes", "find employees", "find tokens"];

const names = (commands: readonly RecordedCommand[]) => commands.map(describeCommand).sort();

describe.each([
  { cache: "warm", extra: [] as string[] },
  { cache: "off", extra: AUTH_READS },
])("round trips per RPC, auth cache $cache", ({ cache, extra }) => {
  const recorder = new CommandRecorder();
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(
      fixture(),
      TEST_TIMEOUTS,
      cache === "warm" ? TEST_CACHE : { ttlMs: 0, maxEntries: 0 },
      { onCommand: recorder.listener },
    );
    // Fill the cache as any earlier call would have.
    expectOk(await page(h, { group: EMPTY }));
  });
  afterAll(async () => {
    await h?.close();
  });

  it("every operation sends exactly its budget of commands", async () => {
    const seen: Record<string, string[]> = {};
    for (const [name, run, prepare] of operations(h)) {
      await prepare?.();
      const { commands } = await recorder.during(run);
      seen[name] = names(commands);
    }
    const expected = Object.fromEntries(
      Object.entries(BUDGETS).map(([name, list]) => [name, [...list, ...extra].sort()]),
    );
    expect(seen).toEqual(expected);
  });
});

describe("TotalCount is counted once per walk", () => {
  const recorder = new CommandRecorder();
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(fixture(), TEST_TIMEOUTS, TEST_CACHE, { onCommand: recorder.listener });
    expectOk(await page(h, { group: EMPTY }));
  });
  afterAll(async () => {
    await h?.close();
  });

  it("every page reports the first page's count; later pages send one find and no count", async () => {
    const counteragents = h.db.collection(Collections.counteragents);
    const seen: string[] = [];
    const totals: number[] = [];
    let after: string | undefined;
    let round = 0;
    do {
      const { result, commands } = await recorder.during(() => page(h, { after }));
      const response = expectOk(result);
      seen.push(...response.CounteragentBoxId);
      totals.push(response.TotalCount);
      after = response.AfterIndexKey || undefined;
      if (round === 0) {
        expect(names(commands)).toEqual(["aggregate counteragents", "find counteragents"]);
      } else {
        expect(commands.some((c) => c.name === "aggregate" || c.name === "count")).toBe(false);
        // A later page is one find, or a find and the group lookup for the empty page at the end.
        expect(names(commands)).toEqual(
          response.CounteragentBoxId.length > 0
            ? ["find counteragents"]
            : ["find counteragentGroups", "find counteragents"],
        );
      }
      // Between pages the group changes: a member leaves, one stops being IsMyCounteragent.
      if (round === 1) {
        await counteragents.deleteOne({ boxId: BOX, counteragentBoxId: "m-09" });
        await counteragents.updateOne(
          { boxId: BOX, counteragentBoxId: "m-08" },
          { $set: { status: "RejectsMe" } },
        );
      }
      round++;
    } while (after !== undefined && round < 20);
    // The count of when the walk started, on every page (the empty last page too).
    expect(totals).toEqual(totals.map(() => MEMBERS.length));
    expect(seen).toEqual(MEMBERS.slice(0, 8));
    // A new walk counts again and sees the change.
    expect(expectOk(await page(h)).TotalCount).toBe(MEMBERS.length - 2);
  });

  it("the response's TotalCount is always on the wire, also when it is 0", async () => {
    // An empty group: no ids, no key, and TotalCount 0 still sent (field 2, varint 0).
    const res = await legacy(h, {
      method: "GET",
      path: `/GetCounteragentsFromGroup?boxId=${BOX}&counteragentGroupId=${EMPTY}`,
      headers: { authorization: AUTH },
    });
    expect(res.status).toBe(200);
    expect(res.body.toString("hex")).toBe("1000");
    const grpc = await h2Request(
      h.baseUrl,
      {
        ":method": "POST",
        ":path": `/${rpc.getCounteragentsFromGroup.parent.typeName}/${rpc.getCounteragentsFromGroup.name}`,
        "content-type": "application/grpc",
        te: "trailers",
        authorization: AUTH,
      },
      envelope(
        toBinary(
          rpc.getCounteragentsFromGroup.input,
          create(rpc.getCounteragentsFromGroup.input, { boxId: BOX, counteragentGroupId: EMPTY }),
        ),
      ),
    );
    expect(grpc.trailers?.["grpc-status"]).toBe("0");
    expect(envelopes(grpc.body).map((e) => e.data.toString("hex"))).toEqual(["1000"]);
  });
});

describe("hints and projections", () => {
  const recorder = new CommandRecorder();
  let h: Harness;
  let all: RecordedCommand[] = [];
  beforeAll(async () => {
    h = await startHarness(fixture(), TEST_TIMEOUTS, TEST_CACHE, { onCommand: recorder.listener });
    recorder.clear();
    for (const [, run, prepare] of operations(h)) {
      await prepare?.();
      await run();
    }
    all = [...recorder.recorded];
  });
  afterAll(async () => {
    await h?.close();
  });

  it("every index the code hints at exists after start-up (the embedded engine accepts any hint)", async () => {
    const hinted = new Map<string, Set<string>>();
    for (const c of all) {
      for (const hint of hintsOf(c)) {
        const key = typeof hint === "string" ? hint : JSON.stringify(hint);
        hinted.set(c.collection, (hinted.get(c.collection) ?? new Set()).add(key));
      }
    }
    // Not vacuous: the listing, the group order and the unique keys are hinted.
    expect([...(hinted.get(Collections.counteragents) ?? [])].sort()).toEqual(
      [IndexNames.groupListing, IndexNames.counteragentKey].sort(),
    );
    expect([...(hinted.get(Collections.counteragentGroups) ?? [])].sort()).toEqual(
      [IndexNames.groupOrder, IndexNames.groupKey].sort(),
    );
    for (const [collection, hints] of hinted) {
      const indexes = await h.db.collection(collection).listIndexes().toArray();
      const known = new Set(indexes.flatMap((i) => [i.name, JSON.stringify(i.key)]));
      for (const hint of hints) expect(known, `${collection}: hint ${hint}`).toContain(hint);
    }
  });

  it("every index name the code refers to exists after start-up", async () => {
    const byName = new Map<string, string>();
    for (const collection of Object.values(Collections)) {
      for (const index of await h.db.collection(collection).listIndexes().toArray()) {
        byName.set(index.name, collection);
      }
    }
    for (const name of Object.values(IndexNames)) expect(byName.has(name), name).toBe(true);
  });

  it("every read projects only the fields it uses", () => {
    const finds = all.filter((c) => c.name === "find");
    expect(finds.length).toBeGreaterThan(10);
    for (const c of finds) {
      expect(c.command.projection, JSON.stringify(c.command)).toBeTypeOf("object");
      expect(Object.keys(c.command.projection).length).toBeGreaterThan(0);
    }
  });
});
