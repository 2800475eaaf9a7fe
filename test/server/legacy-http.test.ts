/** docs/api.md §3: the legacy HTTP paths, as existing SDKs and plain HTTP clients use them. */
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { BinaryReader } from "@bufbuild/protobuf/wire";
import { beforeEach, describe, expect, it } from "vitest";
import {
  EmployeeSubscriptionsSchema,
  SubscriptionSchema,
  SubscriptionsToUpdateSchema,
} from "../../gen/docflow/legacy/subscriptions_pb";
import { loadFixture } from "../../src/fixtures/load";
import { authHeader, BOX, baseFixture, USERS } from "../support/fixture";
import { legacy, useHarness } from "../support/harness";

const h = useHarness();
beforeEach(async () => {
  await loadFixture(h.db, baseFixture());
});

const who = (user: keyof typeof USERS) => `boxId=${BOX}&userId=${USERS[user].userId}`;
const auth = { authorization: authHeader("admin") };
const stored = async (userId: string) =>
  (await h.db.collection("employees").findOne({ boxId: BOX, userId }))?.subscriptions;

const protoBody = (entries: [string, boolean][]) =>
  toBinary(
    SubscriptionsToUpdateSchema,
    create(SubscriptionsToUpdateSchema, {
      Subscriptions: entries.map(([Id, IsSubscribed]) =>
        create(SubscriptionSchema, { Id, IsSubscribed }),
      ),
    }),
  );

describe("response format: protobuf unless Accept asks for JSON", () => {
  it("no Accept (existing SDKs): binary protobuf, application/x-protobuf", async () => {
    const res = await legacy(h, {
      method: "GET",
      path: `/GetSubscriptions?${who("clerk")}`,
      headers: auth,
    });
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toBe("application/x-protobuf");
    const msg = fromBinary(EmployeeSubscriptionsSchema, res.body);
    expect(msg.Subscriptions).toHaveLength(10);
    expect(msg.Subscriptions.find((s) => s.Id === "News")?.IsSubscribed).toBe(false);
  });

  it("Accept containing application/json: PascalCase JSON, IsSubscribed as a string", async () => {
    const res = await legacy(h, {
      method: "GET",
      path: `/GetSubscriptions?${who("clerk")}`,
      headers: { ...auth, accept: "text/html, application/json;q=0.9" },
    });
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(res.text).toContain('{"Id":"News","IsSubscribed":"false"}');
    expect(res.text).toContain('{"Id":"CounteragentInvitation","IsSubscribed":"true"}');
    expect(JSON.parse(res.text).Subscriptions).toHaveLength(10);
  });

  it("Accept: */* is not JSON: protobuf", async () => {
    const res = await legacy(h, {
      method: "GET",
      path: `/GetSubscriptions?${who("clerk")}`,
      headers: { ...auth, accept: "*/*" },
    });
    expect(res.headers["content-type"]).toBe("application/x-protobuf");
  });
});

describe("wire: required fields are always on the wire", () => {
  it("all subscriptions false: every Subscription still carries IsSubscribed = 0 (bytes 10 00)", async () => {
    const res = await legacy(h, {
      method: "GET",
      path: `/GetSubscriptions?${who("muted")}`,
      headers: auth,
    });
    const reader = new BinaryReader(res.body);
    let entries = 0;
    while (reader.pos < reader.len) {
      const [field] = reader.tag();
      expect(field).toBe(1);
      const entry = reader.bytes();
      entries++;
      // Id (field 1), then IsSubscribed (field 2, varint) = 0, encoded as 10 00.
      expect(Buffer.from(entry.subarray(entry.length - 2)).toString("hex")).toBe("1000");
    }
    expect(entries).toBe(10);
  });

  it('legacy JSON shows false as the string "false"', async () => {
    const res = await legacy(h, {
      method: "GET",
      path: `/GetSubscriptions?${who("muted")}`,
      headers: { ...auth, accept: "application/json" },
    });
    const list = JSON.parse(res.text).Subscriptions as { IsSubscribed: unknown }[];
    expect(list.map((s) => s.IsSubscribed)).toEqual(Array(10).fill("false"));
  });
});

describe("request body: JSON when Content-Type is application/json, otherwise protobuf", () => {
  it("no Content-Type: the body is protobuf", async () => {
    const res = await legacy(h, {
      method: "POST",
      path: `/UpdateSubscriptions?${who("clerk")}`,
      headers: auth,
      body: protoBody([["ChatMessages", false]]),
    });
    expect(res.status).toBe(200);
    expect(await stored(USERS.clerk.userId)).toEqual({ News: false, ChatMessages: false });
  });

  it("application/octet-stream: protobuf too", async () => {
    const res = await legacy(h, {
      method: "POST",
      path: `/UpdateSubscriptions?${who("clerk")}`,
      headers: { ...auth, "content-type": "application/octet-stream" },
      body: protoBody([["News", true]]),
    });
    expect(res.status).toBe(200);
    expect(await stored(USERS.clerk.userId)).toEqual({ News: true });
  });

  it("JSON accepts IsSubscribed as a string or a boolean and ignores unknown fields", async () => {
    const res = await legacy(h, {
      method: "POST",
      path: `/UpdateSubscriptions?${who("clerk")}`,
      headers: { ...auth, "content-type": "application/json; charset=utf-8" },
      body: JSON.stringify({
        Subscriptions: [
          { Id: "News", IsSubscribed: "true", Note: 1 },
          { Id: "ChatMessages", IsSubscribed: false },
        ],
        Extra: "x",
      }),
    });
    expect(res.status).toBe(200);
    // No Accept: the answer is protobuf even for a JSON request.
    expect(res.headers["content-type"]).toBe("application/x-protobuf");
    expect(await stored(USERS.clerk.userId)).toEqual({ News: true, ChatMessages: false });
  });

  it.each([
    ["not JSON", "{nope", /not valid JSON/],
    [
      'IsSubscribed neither bool nor "true"/"false"',
      '{"Subscriptions":[{"Id":"News","IsSubscribed":"yes"}]}',
      /not a valid SubscriptionsToUpdate/,
    ],
    [
      "Subscriptions not a list",
      '{"Subscriptions":{"Id":"News"}}',
      /not a valid SubscriptionsToUpdate/,
    ],
    ["missing IsSubscribed", '{"Subscriptions":[{"Id":"News"}]}', /IsSubscribed is required/],
    ["missing Id", '{"Subscriptions":[{"IsSubscribed":"true"}]}', /Id is required/],
  ])(
    "bad JSON body (%s): 400 with a clear message, nothing changes",
    async (_name, body, message) => {
      const res = await legacy(h, {
        method: "POST",
        path: `/UpdateSubscriptions?${who("clerk")}`,
        headers: { ...auth, "content-type": "application/json" },
        body,
      });
      expect(res.status).toBe(400);
      expect(res.headers["x-service-errorcode"]).toBe("Http.BadRequest");
      expect(res.text).toMatch(message);
      expect(await stored(USERS.clerk.userId)).toEqual({ News: false });
    },
  );

  it("bad protobuf body: 400, nothing changes", async () => {
    const res = await legacy(h, {
      method: "POST",
      path: `/UpdateSubscriptions?${who("clerk")}`,
      headers: auth,
      body: Buffer.from([0x0a, 0xff, 0xff, 0x01]),
    });
    expect(res.status).toBe(400);
    expect(res.text).toMatch(/not a valid protobuf SubscriptionsToUpdate/);
    expect(await stored(USERS.clerk.userId)).toEqual({ News: false });
  });

  it("a body over 1 MiB is refused with 413", async () => {
    const res = await legacy(h, {
      method: "POST",
      path: `/UpdateSubscriptions?${who("clerk")}`,
      headers: auth,
      body: Buffer.alloc(1024 * 1024 + 1),
    });
    expect(res.status).toBe(413);
  });
});

describe("query parameters", () => {
  it("unknown parameters, bare keys and empty values of optional ones are ignored", async () => {
    const res = await legacy(h, {
      method: "GET",
      path: `/GetSubscriptions?${who("clerk")}&extra&other=1&other=2`,
      headers: auth,
    });
    expect(res.status).toBe(200);
  });

  it.each([
    [
      "bare required key",
      `/GetSubscriptions?boxId&userId=${USERS.clerk.userId}`,
      /boxId is required/,
    ],
    [
      "empty required value",
      `/GetSubscriptions?boxId=&userId=${USERS.clerk.userId}`,
      /boxId is required/,
    ],
    ["missing required key", `/GetSubscriptions?userId=${USERS.clerk.userId}`, /boxId is required/],
    [
      "duplicated key",
      `/GetSubscriptions?${who("clerk")}&boxId=${BOX}`,
      /boxId is given more than once/,
    ],
    [
      "duplicated key, other case",
      `/GetSubscriptions?${who("clerk")}&BOXID=${BOX}`,
      /boxId is given more than once/,
    ],
  ])("%s: 400", async (_name, path, message) => {
    const res = await legacy(h, { method: "GET", path, headers: auth });
    expect(res.status).toBe(400);
    expect(res.headers["x-service-errorcode"]).toBe("Http.BadRequest");
    expect(res.text).toMatch(message);
  });
});

describe("paths and methods", () => {
  it.each([
    ["POST", "/GetSubscriptions", "GET"],
    ["GET", "/UpdateSubscriptions", "POST"],
    ["GET", "/Restore", "POST"],
    ["PUT", "/Delete", "POST"],
    ["POST", "/GetCounteragentsFromGroup", "GET"],
  ])("%s %s: 405 with Allow: %s, before authentication", async (method, path, allow) => {
    const res = await legacy(h, { method, path: `${path}?boxId=${BOX}`, headers: {} });
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe(allow);
    expect(res.headers["x-service-errorcode"]).toBe("Http.MethodNotAllowed");
  });

  it("an unknown path is 404", async () => {
    const res = await legacy(h, { method: "GET", path: "/NoSuchOperation?boxId=1", headers: auth });
    expect(res.status).toBe(404);
    expect(res.headers["x-service-errorcode"]).toBe("Http.NotFound");
  });

  it("legacy paths match case-insensitively, like the original API", async () => {
    const res = await legacy(h, {
      method: "GET",
      path: `/getsubscriptions?${who("clerk")}`,
      headers: auth,
    });
    expect(res.status).toBe(200);
  });
});

describe("errors: short text, or problem+json for JSON clients, with X-Service-ErrorCode", () => {
  it("text/plain for clients that did not ask for JSON", async () => {
    const res = await legacy(h, {
      method: "GET",
      path: `/GetSubscriptions?${who("colleague")}`,
      headers: { authorization: authHeader("clerk") },
    });
    expect(res.status).toBe(403);
    expect(res.headers["content-type"]).toBe("text/plain; charset=utf-8");
    expect(res.headers["x-service-errorcode"]).toBe("Http.Forbidden");
    expect(res.text).toBe("only an administrator of the box or the employee himself may do this");
  });

  it("application/problem+json for JSON clients", async () => {
    const res = await legacy(h, {
      method: "POST",
      path: `/UpdateSubscriptions?${who("clerk")}`,
      headers: {
        authorization: authHeader("clerk"),
        accept: "application/json",
        "content-type": "application/json",
      },
      body: '{"Subscriptions":[{"Id":"Weather","IsSubscribed":"true"}]}',
    });
    expect(res.status).toBe(400);
    expect(res.headers["content-type"]).toBe("application/problem+json");
    expect(res.headers["x-service-errorcode"]).toBe("Subscriptions.UnknownId");
    expect(JSON.parse(res.text)).toEqual({
      type: "about:blank",
      title: "Bad Request",
      status: 400,
      detail: 'unknown subscription Id "Weather"',
      errorCode: "Subscriptions.UnknownId",
    });
  });
});
