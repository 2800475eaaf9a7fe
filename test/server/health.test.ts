/** docs/api.md §9 health checks: GET /healthz and grpc.health.v1, without credentials. */
import { create } from "@bufbuild/protobuf";
import { Code, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { describe, expect, it } from "vitest";
import { Health, HealthCheckResponse_ServingStatus } from "../../gen/grpc/health/v1/health_pb";
import { callRpc, legacy, startHarness, useHarness } from "../support/harness";

const h = useHarness();

describe("GET /healthz", () => {
  it("answers 200 {status: ok} while the database answers", async () => {
    const res = await legacy(h, { method: "GET", path: "/healthz" });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text)).toEqual({ status: "ok" });
  });
  it("other methods get 405", async () => {
    const res = await legacy(h, { method: "POST", path: "/healthz" });
    expect(res.status).toBe(405);
  });
});

describe("grpc.health.v1.Health/Check", () => {
  it.each(["grpc", "connect-json"] as const)(
    "SERVING over %s, with no credentials",
    async (protocol) => {
      const res = await callRpc(
        h,
        protocol,
        Health.method.check,
        create(Health.method.check.input, { service: "" }),
      );
      expect(res).toMatchObject({
        ok: true,
        message: { status: HealthCheckResponse_ServingStatus.SERVING },
      });
    },
  );
  it("a service of ours by name is SERVING", async () => {
    const res = await callRpc(
      h,
      "grpc",
      Health.method.check,
      create(Health.method.check.input, { service: "docflow.api.v1.SubscriptionService" }),
    );
    expect(res).toMatchObject({
      ok: true,
      message: { status: HealthCheckResponse_ServingStatus.SERVING },
    });
  });
  it("an unknown service is NOT_FOUND", async () => {
    const res = await callRpc(
      h,
      "grpc",
      Health.method.check,
      create(Health.method.check.input, { service: "nope.Service" }),
    );
    expect(res).toMatchObject({ ok: false, code: Code.NotFound });
  });
});

describe("grpc.health.v1.Health/List", () => {
  it('every service Check knows and the server itself (""): SERVING, with no credentials', async () => {
    const res = await callRpc(h, "grpc", Health.method.list, create(Health.method.list.input));
    expect(res.ok).toBe(true);
    const statuses = res.ok ? res.message.statuses : {};
    expect(Object.keys(statuses)).toEqual(
      expect.arrayContaining([
        "",
        "docflow.api.v1.SubscriptionService",
        "docflow.api.v1.DocumentService",
      ]),
    );
    for (const name of Object.keys(statuses)) {
      expect(statuses[name]?.status, name).toBe(HealthCheckResponse_ServingStatus.SERVING);
    }
  });
});

describe("grpc.health.v1.Health/Watch", () => {
  it("answers at once, then says NOT_SERVING and ends when the server shuts down", async () => {
    const own = await startHarness();
    const client = createClient(Health, createGrpcTransport({ baseUrl: own.baseUrl }));
    const seen: HealthCheckResponse_ServingStatus[] = [];
    const watching = (async () => {
      for await (const res of client.watch({ service: "" })) seen.push(res.status);
    })();
    while (seen.length === 0) await new Promise((r) => setTimeout(r, 10));
    expect(seen).toEqual([HealthCheckResponse_ServingStatus.SERVING]);
    await own.close();
    await watching;
    expect(seen).toEqual([
      HealthCheckResponse_ServingStatus.SERVING,
      HealthCheckResponse_ServingStatus.NOT_SERVING,
    ]);
  });
});
