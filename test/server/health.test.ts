/** docs/api.md §9 health checks: GET /healthz and grpc.health.v1, without credentials. */
import { create } from "@bufbuild/protobuf";
import { Code, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { describe, expect, it } from "vitest";
import { Health, HealthCheckResponse_ServingStatus } from "../../gen/grpc/health/v1/health_pb";
import { authHeader, BOX, baseFixture, USERS } from "../support/fixture";
import {
  callRpc,
  legacy,
  startHarness,
  TEST_CACHE,
  TEST_TIMEOUTS,
  useHarness,
} from "../support/harness";

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

describe("readiness from the calls' own answers", () => {
  /** HEALTH_TIMEOUT_MS of this test's server: also how recent a call's answer must be. */
  const HEALTH_MS = 1_500;

  it("/readyz and gRPC health send no ping while a call's database work succeeded within HEALTH_TIMEOUT_MS; after that, one ping each", async () => {
    let pings = 0;
    const own = await startHarness(
      baseFixture(),
      { ...TEST_TIMEOUTS, healthMs: HEALTH_MS },
      TEST_CACHE,
      {
        onCommand: (event) => {
          if (event.commandName === "ping") pings++;
        },
      },
    );
    try {
      const readyz = async () => (await legacy(own, { method: "GET", path: "/readyz" })).status;
      const grpcHealth = async () => {
        const res = await callRpc(
          own,
          "grpc",
          Health.method.check,
          create(Health.method.check.input, { service: "" }),
        );
        return res.ok ? res.message.status : undefined;
      };
      // Idle since it started: the probe asks the database.
      pings = 0;
      expect(await readyz()).toBe(200);
      expect(pings).toBe(1);
      // A call whose work the database answered: the probes that follow need no ping.
      const call = await legacy(own, {
        method: "GET",
        path: `/GetSubscriptions?boxId=${BOX}&userId=${USERS.clerk.userId}`,
        headers: { authorization: authHeader("admin"), accept: "application/json" },
      });
      expect(call.status).toBe(200);
      pings = 0;
      expect(await readyz()).toBe(200);
      expect(await grpcHealth()).toBe(HealthCheckResponse_ServingStatus.SERVING);
      expect(pings).toBe(0);
      // That answer grows old: the probe asks again.
      await new Promise((r) => setTimeout(r, HEALTH_MS + 100));
      expect(await readyz()).toBe(200);
      expect(pings).toBe(1);
    } finally {
      await own.close();
    }
  });
});
