/** Browsers and everyday tools as clients: CORS (from CORS_ALLOWED_ORIGINS) and Connect GET for reads. */
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { describe, expect, it } from "vitest";
import { CounteragentService } from "../../gen/docflow/api/v1/counteragents_pb";
import { SubscriptionService } from "../../gen/docflow/api/v1/subscriptions_pb";
import { authHeader, BOX, baseFixture, HEAD, USERS } from "../support/fixture";
import { legacy, TEST_TIMEOUTS, useHarness } from "../support/harness";

const ALLOWED = "http://app.example:3000";
const h = useHarness(baseFixture, TEST_TIMEOUTS, { corsAllowedOrigins: [ALLOWED] });
const rpcPath = "/docflow.api.v1.SubscriptionService/GetSubscriptions";
const legacyPath = `/GetSubscriptions?boxId=${BOX}&userId=${USERS.clerk.userId}`;

const preflight = (path: string, origin: string, headers = "authorization, content-type") =>
  legacy(h, {
    method: "OPTIONS",
    path,
    headers: {
      origin,
      "access-control-request-method": "POST",
      "access-control-request-headers": headers,
    },
  });

describe("CORS", () => {
  it.each([
    ["an RPC path", rpcPath],
    ["a legacy path", "/UpdateSubscriptions"],
  ])(
    "a preflight from an allowed origin on %s: 204 with methods, headers and max-age",
    async (_n, path) => {
      const res = await preflight(path, ALLOWED);
      expect(res.status).toBe(204);
      expect(res.headers["access-control-allow-origin"]).toBe(ALLOWED);
      expect(String(res.headers["access-control-allow-methods"])).toMatch(/POST/);
      expect(String(res.headers["access-control-allow-methods"])).toMatch(/GET/);
      const allowHeaders = String(res.headers["access-control-allow-headers"]).toLowerCase();
      for (const name of [
        "authorization",
        "content-type",
        "connect-protocol-version",
        "connect-timeout-ms",
        "x-grpc-web",
        "x-user-agent",
        "grpc-timeout",
      ]) {
        expect(allowHeaders).toContain(name);
      }
      expect(Number(res.headers["access-control-max-age"])).toBeGreaterThan(0);
      expect(String(res.headers.vary)).toMatch(/Origin/);
      expect(res.headers["access-control-allow-credentials"]).toBeUndefined();
    },
  );

  it("an origin not allowed gets no CORS header: its preflight is the plain 405", async () => {
    const res = await preflight(rpcPath, "http://evil.example");
    expect(res.status).toBe(405);
    expect(res.headers["access-control-allow-origin"]).toBeUndefined();
  });

  it("an actual call from an allowed origin exposes the error code and request id headers", async () => {
    const res = await legacy(h, {
      method: "GET",
      path: legacyPath,
      headers: { origin: ALLOWED, authorization: authHeader("colleague") },
    });
    expect(res.status).toBe(403);
    expect(res.headers["access-control-allow-origin"]).toBe(ALLOWED);
    const exposed = String(res.headers["access-control-expose-headers"]).toLowerCase();
    for (const name of ["x-service-errorcode", "x-request-id", "grpc-status", "grpc-message"]) {
      expect(exposed).toContain(name);
    }
  });

  it("the same call from another origin: the answer as without CORS, no CORS headers", async () => {
    const res = await legacy(h, {
      method: "GET",
      path: legacyPath,
      headers: { origin: "http://evil.example", authorization: authHeader("admin") },
    });
    expect(res.status).toBe(200);
    expect(res.headers["access-control-allow-origin"]).toBeUndefined();
    expect(res.headers["access-control-expose-headers"]).toBeUndefined();
  });
});

describe("Connect GET for reads (idempotency_level = NO_SIDE_EFFECTS)", () => {
  it.each([
    [
      "GetSubscriptions",
      SubscriptionService,
      "getSubscriptions",
      { boxId: BOX, userId: USERS.clerk.userId },
    ],
    [
      "GetCounteragentsFromGroup",
      CounteragentService,
      "getCounteragentsFromGroup",
      { boxId: BOX, counteragentGroupId: HEAD },
    ],
  ] as const)("%s can be called with GET", async (name, service, method, request) => {
    const client = createClient(
      service as typeof SubscriptionService,
      createConnectTransport({ baseUrl: h.baseUrl, httpVersion: "1.1", useHttpGet: true }),
    );
    const call = (
      client as unknown as Record<string, (r: unknown, o: unknown) => Promise<unknown>>
    )[method];
    const requestId = `get-${name}`;
    const res = await call?.(request, {
      headers: { authorization: authHeader("admin"), "x-request-id": requestId },
    });
    expect(res).toBeDefined();
    // This call's own access line (written when the answer closes, perhaps after the client read it).
    const line = await h.waitForLog((l) => l.msg === "request" && l.requestId === requestId);
    expect(line).toMatchObject({ method: "GET", status: 200 });
    expect(line.route).toContain(name);
  });

  it("a write is not: POST only (405 with Allow for GET)", async () => {
    const res = await legacy(h, {
      method: "GET",
      path: "/docflow.api.v1.SubscriptionService/UpdateSubscriptions?connect=v1&encoding=json&message=%7B%7D",
      headers: { authorization: authHeader("admin") },
    });
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe("POST");
  });
});
