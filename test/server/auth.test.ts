/** docs/api.md §5 authentication and the order of checks of docs/api.md §4, on every protocol. */
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { SubscriptionService } from "../../gen/docflow/api/v1/subscriptions_pb";
import { hashSecret, parseServiceAuth } from "../../src/domain/auth";
import {
  authHeader,
  BOX,
  baseFixture,
  DISABLED_KEY,
  ENDED_BOX,
  KEY,
  OTHER_BOX,
  USERS,
} from "../support/fixture";
import { legacy, startHarness, TEST_TIMEOUTS, useHarness } from "../support/harness";
import { call, PROTOCOLS } from "../support/protocols";

const get = SubscriptionService.method.getSubscriptions;
const req = (boxId: string, userId: string) => create(get.input, { boxId, userId });

const h = useHarness();

describe("the ServiceAuth header is read leniently", () => {
  const token = USERS.admin.token;
  it.each([
    [
      "with a space after the comma",
      `ServiceAuth svcauth_api_client_id=${KEY}, svcauth_token=${token}`,
    ],
    [
      "without a space after the comma",
      `ServiceAuth svcauth_api_client_id=${KEY},svcauth_token=${token}`,
    ],
    [
      "with several spaces",
      `ServiceAuth   svcauth_api_client_id=${KEY} ,   svcauth_token=${token}`,
    ],
    ["scheme in lower case", `serviceauth svcauth_api_client_id=${KEY}, svcauth_token=${token}`],
    ["quoted values", `ServiceAuth svcauth_api_client_id="${KEY}", svcauth_token="${token}"`],
    [
      "parameters in the other order",
      `ServiceAuth svcauth_token=${token}, svcauth_api_client_id=${KEY}`,
    ],
  ])("%s", async (_name, header) => {
    for (const protocol of PROTOCOLS) {
      const res = await call(h, protocol, get, req(BOX, USERS.admin.userId), header);
      expect(res.ok, protocol).toBe(true);
    }
  });

  it("a base64 token with '=', '+' and '/' is taken whole, quoted or not", async () => {
    for (const header of [
      authHeader("b64"),
      `ServiceAuth svcauth_api_client_id=${KEY},svcauth_token="${USERS.b64.token}"`,
    ]) {
      for (const protocol of PROTOCOLS) {
        const res = await call(h, protocol, get, req(BOX, USERS.b64.userId), header);
        expect(res.ok, `${protocol} ${header}`).toBe(true);
      }
    }
  });

  it("parses the values exactly", () => {
    expect(
      parseServiceAuth('ServiceAuth svcauth_api_client_id=k=1, svcauth_token="a+b/c=="'),
    ).toEqual({
      apiKey: "k=1",
      token: "a+b/c==",
    });
  });
});

describe("401: missing or wrong credentials", () => {
  const cases: [string, string | undefined][] = [
    ["no header", undefined],
    ["wrong scheme", `Bearer ${USERS.admin.token}`],
    ["token missing", `ServiceAuth svcauth_api_client_id=${KEY}`],
    ["API key missing", `ServiceAuth svcauth_token=${USERS.admin.token}`],
    ["garbage", "ServiceAuth ,,,"],
    ["unknown API key", authHeader("admin", "no-such-key")],
    ["disabled API client", authHeader("admin", DISABLED_KEY)],
    ["unknown token", `ServiceAuth svcauth_api_client_id=${KEY}, svcauth_token=no-such-token`],
    ["expired token", authHeader("expired")],
  ];
  describe.each(PROTOCOLS)("over %s", (protocol) => {
    it.each(cases)("%s", async (_name, header) => {
      const res = await call(h, protocol, get, req(BOX, USERS.admin.userId), header);
      expect(res).toMatchObject({ ok: false, status: 401, errorCode: "Http.Unauthorized" });
    });
  });
});

describe("order of checks: 405 → 401 → 400 → 403 (box) → 402 → 403 (rights) → 404", () => {
  it("405 before 401: wrong method without credentials", async () => {
    const res = await legacy(h, { method: "DELETE", path: "/GetSubscriptions", headers: {} });
    expect(res.status).toBe(405);
  });

  describe.each(PROTOCOLS)("over %s", (protocol) => {
    it("401 before 400: no credentials and no boxId", async () => {
      expect(await call(h, protocol, get, req("", ""))).toMatchObject({ status: 401 });
    });
    it("400 before 403: another organization's box without userId", async () => {
      expect(await call(h, protocol, get, req(OTHER_BOX, ""), authHeader("clerk"))).toMatchObject({
        status: 400,
      });
    });
    it("403 before 402: no access to a box whose subscription ended learns nothing", async () => {
      expect(
        await call(h, protocol, get, req(ENDED_BOX, USERS.outsider.userId), authHeader("outsider")),
      ).toMatchObject({ status: 403 });
    });
    it("402 before 403 (rights): a non-administrator reading a colleague in a lapsed box", async () => {
      expect(
        await call(h, protocol, get, req(ENDED_BOX, USERS.admin.userId), authHeader("clerk")),
      ).toMatchObject({ status: 402 });
    });
    it("403 (rights) before 404: a non-administrator asking for an unknown user", async () => {
      expect(await call(h, protocol, get, req(BOX, "u-nobody"), authHeader("clerk"))).toMatchObject(
        { status: 403 },
      );
    });
  });

  it("on the legacy path, a malformed request without credentials is 401, not 400", async () => {
    const res = await legacy(h, {
      method: "GET",
      path: `/GetSubscriptions?boxId=${BOX}&boxId=${BOX}`,
      headers: {},
    });
    expect(res.status).toBe(401);
    const body = await legacy(h, {
      method: "POST",
      path: `/UpdateSubscriptions?boxId=${BOX}&userId=u`,
      headers: { "content-type": "application/json" },
      body: "{",
    });
    expect(body.status).toBe(401);
  });
});

/** The request line is logged when the response closes, which may be just after the client has it. */
async function logged(fragment: string): Promise<boolean> {
  for (let i = 0; i < 50 && !h.logs.some((l) => l.includes(fragment)); i++) {
    await new Promise((r) => setTimeout(r, 20));
  }
  return h.logs.some((l) => l.includes(fragment));
}

describe("no secrets in logs", () => {
  it("request logs carry neither API keys nor tokens", async () => {
    await call(h, "legacy-protobuf", get, req(BOX, USERS.admin.userId), authHeader("admin"));
    await call(h, "grpc", get, req(BOX, USERS.admin.userId), authHeader("b64"));
    expect(await logged('"protocol":"grpc"')).toBe(true);
    const all = h.logs.join("\n");
    for (const secret of [KEY, USERS.admin.token, USERS.b64.token, "svcauth"]) {
      expect(all).not.toContain(secret);
    }
    const line = JSON.parse(h.logs.find((l) => l.includes('"protocol":"grpc"')) ?? "{}");
    expect(line).toMatchObject({ msg: "request", method: "POST", protocol: "grpc", status: 200 });
    expect(typeof line.durationMs).toBe("number");
    expect(line.requestId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("X-Request-Id: a caller's id is echoed and logged; otherwise one is made", async () => {
    const mine = await legacy(h, {
      method: "GET",
      path: `/GetSubscriptions?boxId=${BOX}&userId=${USERS.admin.userId}`,
      headers: { authorization: authHeader("admin"), "x-request-id": "trace-42" },
    });
    expect(mine.headers["x-request-id"]).toBe("trace-42");
    expect(await logged('"requestId":"trace-42"')).toBe(true);
    const fresh = await legacy(h, {
      method: "GET",
      path: "/healthz",
      headers: { "x-request-id": "bad id with spaces" },
    });
    expect(fresh.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe("caching of credentials and rights (docs/operations.md: Caching)", () => {
  it("a client disabled in the database is refused once the cache's time to live has passed", async () => {
    const own = await startHarness(baseFixture(), TEST_TIMEOUTS, { ttlMs: 300, maxEntries: 100 });
    try {
      const path = `/GetSubscriptions?boxId=${BOX}&userId=${USERS.admin.userId}`;
      const headers = { authorization: authHeader("admin") };
      expect((await legacy(own, { method: "GET", path, headers })).status).toBe(200);
      await own.db
        .collection("apiClients")
        .updateOne({ _id: hashSecret(KEY) as never }, { $set: { enabled: false } });
      await new Promise((r) => setTimeout(r, 400));
      const res = await legacy(own, { method: "GET", path, headers });
      expect(res.status).toBe(401);
    } finally {
      await own.close();
    }
  });
});
