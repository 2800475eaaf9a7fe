/**
 * Admission control at the front door (docs/api.md §4.1, docs/operations.md
 * "Overload"), on every protocol: a call over the instance's capacity is
 * refused before any work with 503 and Retry-After (legacy) or unavailable
 * with grpc-retry-pushback-ms; a client over its share while another waits
 * gets 429 or resource_exhausted; health and /metrics answer all along; a
 * call whose deadline passes never reaches storage.
 *
 * The instance is made full on purpose: its limit is 2, and two Restore calls
 * are held by a test hook between their read and their write.
 */
import http from "node:http";
import { create, toBinary } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterEach, describe, expect, it, vi } from "vitest";
import { DocumentService } from "../../gen/docflow/api/v1/documents_pb";
import { SubscriptionService } from "../../gen/docflow/api/v1/subscriptions_pb";
import { Health, HealthCheckResponse_ServingStatus } from "../../gen/grpc/health/v1/health_pb";
import type { AdmissionConfig } from "../../src/admission/admission";
import { createMetrics } from "../../src/observability/metrics";
import { createObserver } from "../../src/observability/observer";
import {
  authHeader,
  BOX,
  baseFixture,
  KEY,
  SDK_ALIASES,
  sdkAuthHeader,
  USERS,
} from "../support/fixture";
import {
  callRpc,
  type Harness,
  legacy,
  startHarness,
  TEST_TIMEOUTS,
  useHarness,
} from "../support/harness";
import { envelope, h2Request } from "../support/wire";

const SECOND_KEY = "second-api-key";
/** A client that spells ServiceAuth the Java SDK's way (SERVICE_AUTH_ALIASES). */
const SDK_KEY = "sdk-api-key";
const HELD = "m-held";
const SLOW = "m-slow";

/** The base fixture, with two more API clients and messages the admin may restore. */
function fixture() {
  const base = baseFixture();
  const [box, ...rest] = base.boxes;
  const deleted = (messageId: string) => ({
    messageId,
    isDeleted: true,
    documents: [
      {
        documentId: `${messageId}-d`,
        departmentId: "00000000-0000-0000-0000-000000000000",
        isDeleted: true,
      },
    ],
  });
  return {
    ...base,
    apiClients: [
      ...base.apiClients,
      { apiKey: SECOND_KEY, name: "Second client" },
      { apiKey: SDK_KEY, name: "SDK client" },
    ],
    boxes: [
      {
        ...box,
        employees: [
          {
            userId: USERS.admin.userId,
            isAdministrator: true,
            canManageCounteragents: true,
            canDeleteRestoreDocuments: true,
            documentAccessLevel: "AllDocuments",
          },
          ...(box?.employees ?? []).slice(1),
        ],
        messages: [deleted(HELD), deleted(SLOW)],
      },
      ...rest,
    ],
  };
}

/**
 * While closed, Restore calls of HELD wait here, between their read and their
 * write, until released; SLOW always waits 400 ms.
 */
function createGate() {
  let entered = 0;
  let closed = false;
  let open: () => void = () => undefined;
  let opened = Promise.resolve();
  return {
    get entered() {
      return entered;
    },
    close() {
      closed = true;
      opened = new Promise<void>((resolve) => {
        open = resolve;
      });
    },
    async hold(messageId: string) {
      if (messageId === SLOW) {
        await new Promise((r) => setTimeout(r, 400));
        return;
      }
      if (messageId !== HELD || !closed) return;
      entered++;
      await opened;
    },
    release() {
      closed = false;
      entered = 0;
      open();
    },
  };
}

/** Two calls at once; `maxQueued` may wait (0: a call over the limit is refused at once). */
const admissionOf = (maxQueued: number): AdmissionConfig => ({
  enabled: true,
  floor: 2,
  max: 2,
  sloMs: 250,
  queueTargetMs: 100,
  maxQueued,
  fairShares: true,
  retryAfterS: 1,
});

const gate = createGate();
const commands: string[] = [];
/** Full, and no room to wait: a call over the limit is refused at once. */
const h = useHarness(fixture, TEST_TIMEOUTS, {
  markHooks: { beforeSave: (ref) => gate.hold(ref.messageId) },
  admission: admissionOf(0),
  // Debug lines: each call's route, admission decision and timings (tested below).
  logLevel: "debug",
  serviceAuthAliases: SDK_ALIASES,
  observer: createObserver(createMetrics(), undefined),
  onCommand: (event) => commands.push(event.commandName),
});
/** The same service, but calls may wait (one, then the next is refused): for shares and deadlines. */
const patient = useHarness(fixture, TEST_TIMEOUTS, {
  markHooks: { beforeSave: (ref) => gate.hold(ref.messageId) },
  admission: admissionOf(1),
  onCommand: (event) => commands.push(event.commandName),
});

/** Full, no room to wait, and refusals held whenever they take any of the core (pacer.ts). */
const paced = useHarness(fixture, TEST_TIMEOUTS, {
  markHooks: { beforeSave: (ref) => gate.hold(ref.messageId) },
  admission: { ...admissionOf(0), paceAboveShare: 0 },
});

const restoreHeld = (target: Harness, key = KEY) =>
  legacy(target, {
    method: "POST",
    path: `/Restore?boxId=${BOX}&messageId=${HELD}`,
    headers: { authorization: authHeader("admin", key) },
  });

/** Fills the instance: two Restore calls held inside the pipeline. */
async function fill(target: Harness, key = KEY): Promise<Promise<unknown>[]> {
  gate.close();
  const held = [restoreHeld(target, key), restoreHeld(target, key)];
  for (let i = 0; i < 200 && gate.entered < 2; i++) await new Promise((r) => setTimeout(r, 10));
  expect(gate.entered).toBe(2);
  return held;
}

let holding: Promise<unknown>[] = [];
afterEach(async () => {
  gate.release();
  await Promise.all(holding);
  holding = [];
  // HELD deleted again for the next test (the held Restore restored it).
  for (const target of [h, patient, paced]) {
    await legacy(target, {
      method: "POST",
      path: `/Delete?boxId=${BOX}&messageId=${HELD}`,
      headers: { authorization: authHeader("admin") },
    });
  }
});

const subscriptionsPath = `/GetSubscriptions?boxId=${BOX}&userId=${USERS.clerk.userId}`;
const getSubscriptions = SubscriptionService.method.getSubscriptions;
const subscriptionsRequest = () =>
  create(getSubscriptions.input, { boxId: BOX, userId: USERS.clerk.userId });

/** One successful call of each client first: the service learns who they are. */
async function learnClients(target: Harness): Promise<void> {
  for (const key of [KEY, SECOND_KEY]) {
    const res = await legacy(target, {
      method: "GET",
      path: subscriptionsPath,
      headers: { authorization: authHeader("admin", key) },
    });
    expect(res.status).toBe(200);
  }
}

describe("over capacity: refused before any work, with when to come back", () => {
  it("legacy: 503, Retry-After, Service.Overloaded, a short text", async () => {
    holding = await fill(h);
    const before = commands.length;
    const res = await legacy(h, {
      method: "GET",
      path: subscriptionsPath,
      headers: { authorization: authHeader("admin") },
    });
    expect(res.status).toBe(503);
    expect(res.headers["retry-after"]).toBe("1");
    expect(res.headers["x-service-errorcode"]).toBe("Service.Overloaded");
    expect(res.headers["content-type"]).toBe("text/plain; charset=utf-8");
    expect(res.text).toBe("the service is over its capacity; retry after 1 s");
    // Refused before any work: not even authentication read the database.
    expect(commands.length).toBe(before);
  });

  it("legacy with Accept: application/json: the same as problem+json", async () => {
    holding = await fill(h);
    const res = await legacy(h, {
      method: "GET",
      path: subscriptionsPath,
      headers: { authorization: authHeader("admin"), accept: "application/json" },
    });
    expect(res.status).toBe(503);
    expect(res.headers["retry-after"]).toBe("1");
    expect(res.headers["content-type"]).toBe("application/problem+json");
    expect(JSON.parse(res.text)).toEqual({
      type: "about:blank",
      title: "Service Unavailable",
      status: 503,
      detail: "the service is over its capacity; retry after 1 s",
      errorCode: "Service.Overloaded",
    });
  });

  it.each(["connect-json", "connect-binary"] as const)(
    "%s: HTTP 503, code unavailable, Retry-After",
    async (protocol) => {
      holding = await fill(h);
      const binary = protocol === "connect-binary";
      const res = await post(
        h,
        `/${SubscriptionService.typeName}/GetSubscriptions`,
        {
          "content-type": binary ? "application/proto" : "application/json",
          "connect-protocol-version": "1",
          authorization: authHeader("admin"),
        },
        binary ? Buffer.alloc(0) : Buffer.from("{}"),
      );
      expect(res.status).toBe(503);
      expect(res.headers["retry-after"]).toBe("1");
      expect(JSON.parse(res.body.toString("utf8"))).toMatchObject({
        code: "unavailable",
        message: "the service is over its capacity; retry after 1 s",
      });
      // The clients' view: the code they retry on.
      const client = await callRpc(
        h,
        protocol,
        getSubscriptions,
        subscriptionsRequest(),
        authHeader("admin"),
      );
      expect(client).toMatchObject({ ok: false, code: Code.Unavailable, reason: "OVERLOADED" });
    },
  );

  it("gRPC: UNAVAILABLE with grpc-retry-pushback-ms in the trailers", async () => {
    holding = await fill(h);
    const res = await h2Request(
      h.baseUrl,
      {
        ":method": "POST",
        ":path": `/${SubscriptionService.typeName}/GetSubscriptions`,
        "content-type": "application/grpc",
        te: "trailers",
        authorization: authHeader("admin"),
      },
      envelope(Buffer.alloc(0)),
    );
    const trailers = { ...res.headers, ...res.trailers };
    expect(res.headers[":status"]).toBe(200);
    expect(trailers["grpc-status"]).toBe(String(Code.Unavailable));
    expect(trailers["grpc-retry-pushback-ms"]).toBe("1000");
    expect(decodeURIComponent(String(trailers["grpc-message"]))).toBe(
      "the service is over its capacity; retry after 1 s",
    );
    const client = await callRpc(
      h,
      "grpc",
      getSubscriptions,
      subscriptionsRequest(),
      authHeader("admin"),
    );
    expect(client).toMatchObject({ ok: false, code: Code.Unavailable });
  });

  it("gRPC with the JSON codec: the refusal in the request's own content type", async () => {
    holding = await fill(h);
    const res = await h2Request(
      h.baseUrl,
      {
        ":method": "POST",
        ":path": `/${SubscriptionService.typeName}/GetSubscriptions`,
        "content-type": "application/grpc+json",
        te: "trailers",
        authorization: authHeader("admin"),
      },
      envelope(Buffer.from("{}")),
    );
    const trailers = { ...res.headers, ...res.trailers };
    expect(res.headers[":status"]).toBe(200);
    expect(res.headers["content-type"]).toBe("application/grpc+json");
    expect(trailers["grpc-status"]).toBe(String(Code.Unavailable));
    expect(trailers["grpc-retry-pushback-ms"]).toBe("1000");
  });

  it("a request no protocol here serves is answered as such (415) even while calls are refused", async () => {
    holding = await fill(h);
    const res = await post(
      h,
      `/${SubscriptionService.typeName}/GetSubscriptions`,
      { "content-type": "application/grpc-web-text", authorization: authHeader("admin") },
      Buffer.from(Buffer.from(envelope(Buffer.alloc(0))).toString("base64")),
    );
    expect(res.status).toBe(415);
    expect(res.headers["retry-after"]).toBeUndefined();
  });

  it("gRPC-Web: UNAVAILABLE with grpc-retry-pushback-ms in the trailer frame", async () => {
    holding = await fill(h);
    const res = await post(
      h,
      `/${SubscriptionService.typeName}/GetSubscriptions`,
      { "content-type": "application/grpc-web+proto", authorization: authHeader("admin") },
      envelope(Buffer.alloc(0)),
    );
    expect(res.status).toBe(200);
    const trailer = res.body.subarray(5).toString("utf8");
    expect(trailer).toContain(`grpc-status: ${Code.Unavailable}`);
    expect(trailer).toContain("grpc-retry-pushback-ms: 1000");
    const client = await callRpc(
      h,
      "grpc-web",
      getSubscriptions,
      subscriptionsRequest(),
      authHeader("admin"),
    );
    expect(client).toMatchObject({ ok: false, code: Code.Unavailable });
  });

  it("the calls held finish normally once released (the refusals took nothing from them)", async () => {
    holding = await fill(h);
    gate.release();
    const results = (await Promise.all(holding)) as { status: number }[];
    expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    holding = [];
  });
});

describe("health and metrics are never refused, and being busy is not being unready", () => {
  it("while every call is refused: /livez, /readyz, gRPC health and /metrics answer", async () => {
    holding = await fill(h);
    const refused = await legacy(h, {
      method: "GET",
      path: subscriptionsPath,
      headers: { authorization: authHeader("admin") },
    });
    expect(refused.status).toBe(503);
    for (const path of ["/livez", "/readyz", "/healthz"]) {
      const res = await legacy(h, { method: "GET", path });
      expect(res.status, path).toBe(200);
    }
    const health = await callRpc(
      h,
      "grpc",
      Health.method.check,
      create(Health.method.check.input, {}),
    );
    expect(health).toMatchObject({
      ok: true,
      message: { status: HealthCheckResponse_ServingStatus.SERVING },
    });
    const metrics = await legacy(h, { method: "GET", path: "/metrics" });
    expect(metrics.status).toBe(200);
    expect(metrics.text).toMatch(/^docflow_admission_limit 2$/m);
    expect(metrics.text).toMatch(/^docflow_admission_calls\{state="running"\} 2$/m);
    expect(metrics.text).toMatch(
      /^docflow_admission_refusals_total\{reason="overloaded",client="(Test client|_unverified)"\} [1-9]\d*$/m,
    );
    // A refusal may come at once (its predicted wait over the 40 ms target) or after its
    // wait in the queue: both outcomes' series are exposed either way.
    for (const outcome of ["admitted", "refused"]) {
      expect(metrics.text).toMatch(
        new RegExp(
          `^docflow_admission_queue_wait_seconds_count\\{outcome="${outcome}"\\} \\d+$`,
          "m",
        ),
      );
    }
  });

  it("the refusals are counted by client once the client proved who it is", async () => {
    await learnClients(h);
    holding = await fill(h);
    await legacy(h, {
      method: "GET",
      path: subscriptionsPath,
      headers: { authorization: authHeader("admin", SECOND_KEY) },
    });
    const metrics = await legacy(h, { method: "GET", path: "/metrics" });
    expect(metrics.text).toMatch(
      /^docflow_admission_refusals_total\{reason="overloaded",client="Second client"\} [1-9]\d*$/m,
    );
  });

  it("a client that spells ServiceAuth its SDK's way is counted as the client it proved too", async () => {
    const headers = { authorization: sdkAuthHeader("admin", SDK_KEY) };
    const learnt = await legacy(h, { method: "GET", path: subscriptionsPath, headers });
    expect(learnt.status).toBe(200);
    holding = await fill(h);
    const refused = await legacy(h, { method: "GET", path: subscriptionsPath, headers });
    expect(refused.status).toBe(503);
    const metrics = await legacy(h, { method: "GET", path: "/metrics" });
    expect(metrics.text).toMatch(
      /^docflow_admission_refusals_total\{reason="overloaded",client="SDK client"\} [1-9]\d*$/m,
    );
  });
});

describe("refusals that take the core are answered later, and nothing else is", () => {
  /** Legacy calls refused one after another until one is held `ms` or more; its answer and time. */
  async function refuseUntilHeld(ms: number) {
    // The hold changes at most every 50 ms: refusals for up to 3 s.
    for (const until = performance.now() + 3_000; performance.now() < until; ) {
      const started = performance.now();
      const res = await legacy(paced, {
        method: "GET",
        path: subscriptionsPath,
        headers: { authorization: authHeader("admin") },
      });
      expect(res.status).toBe(503);
      const took = performance.now() - started;
      if (took >= ms) return { res, took };
    }
    throw new Error(`no refusal was held ${ms} ms`);
  }

  it("legacy: the refusal is the same 503 with Retry-After, written after a hold that grows while refusals go on, never past the Retry-After", async () => {
    holding = await fill(paced);
    const { res, took } = await refuseUntilHeld(100);
    expect(res.headers["retry-after"]).toBe("1");
    expect(res.headers["x-service-errorcode"]).toBe("Service.Overloaded");
    expect(res.text).toBe("the service is over its capacity; retry after 1 s");
    // The hold is at most the Retry-After (1 s); the rest is the round trip.
    expect(took).toBeLessThan(1_500);
  });

  it("gRPC: UNAVAILABLE with its pushback, held the same way; health answers at once meanwhile", async () => {
    holding = await fill(paced);
    await refuseUntilHeld(100);
    const started = performance.now();
    const refused = callRpc(
      paced,
      "grpc",
      getSubscriptions,
      subscriptionsRequest(),
      authHeader("admin"),
    ).then((r) => ({ r, took: performance.now() - started }));
    const probe = await legacy(paced, { method: "GET", path: "/readyz" });
    const probeTook = performance.now() - started;
    expect(probe.status).toBe(200);
    const { r, took } = await refused;
    expect(r).toMatchObject({ ok: false, code: Code.Unavailable });
    // The probe was answered while the refusal was still held.
    expect(took).toBeGreaterThanOrEqual(100);
    expect(probeTook).toBeLessThan(took);
  });

  it("the calls held finish normally once released, and the process serves on", async () => {
    holding = await fill(paced);
    await refuseUntilHeld(50);
    gate.release();
    const results = (await Promise.all(holding)) as { status: number }[];
    holding = [];
    // Two Restores of one message: one restores it, the other finds it restored.
    expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    const after = await legacy(paced, {
      method: "GET",
      path: subscriptionsPath,
      headers: { authorization: authHeader("admin") },
    });
    expect(after.status).toBe(200);
  });
});

describe("a refusal held when the instance stops is answered, not dropped", () => {
  it("closing the server writes the held refusal at once: 503 with Retry-After, well before its hold ends", async () => {
    const own = await startHarness(fixture(), TEST_TIMEOUTS, undefined, {
      markHooks: { beforeSave: (ref) => gate.hold(ref.messageId) },
      admission: { ...admissionOf(0), paceAboveShare: 0 },
    });
    try {
      holding = await fill(own);
      const refuse = () => {
        const started = performance.now();
        return legacy(own, {
          method: "GET",
          path: subscriptionsPath,
          headers: { authorization: authHeader("admin") },
        }).then((res) => ({ res, took: performance.now() - started }));
      };
      // Refusals until one is held 300 ms or more: the hold is then at least that.
      for (const until = performance.now() + 3_000; performance.now() < until; ) {
        const { took } = await refuse();
        if (took >= 300) break;
      }
      const pending = refuse();
      await new Promise((r) => setTimeout(r, 20));
      const closing = performance.now();
      const closed = own.server.close();
      gate.release();
      const { res } = await pending;
      const answeredAfterClose = performance.now() - closing;
      expect(res.status).toBe(503);
      expect(res.headers["retry-after"]).toBe("1");
      // Without: it waited out its hold (300 ms or more) while the server closed.
      expect(answeredAfterClose).toBeLessThan(200);
      await closed;
      await Promise.all(holding);
      holding = [];
    } finally {
      await own.close();
    }
  });
});

describe("each client has a share while others wait", () => {
  it("a client over its share gets 429 (legacy) and resource_exhausted (RPC); the waiting client runs next", async () => {
    await learnClients(patient);
    // The first client holds both slots; the second waits for one.
    holding = await fill(patient);
    const waiting = legacy(patient, {
      method: "GET",
      path: subscriptionsPath,
      headers: { authorization: authHeader("admin", SECOND_KEY) },
    });
    await new Promise((r) => setTimeout(r, 50));
    const over = await legacy(patient, {
      method: "GET",
      path: subscriptionsPath,
      headers: { authorization: authHeader("admin") },
    });
    expect(over.status).toBe(429);
    expect(over.headers["retry-after"]).toBe("1");
    expect(over.headers["x-service-errorcode"]).toBe("Service.ClientOverShare");
    expect(over.text).toBe("this client is over its share of the service; retry after 1 s");
    for (const protocol of ["grpc", "connect-binary", "grpc-web"] as const) {
      const rpc = await callRpc(
        patient,
        protocol,
        getSubscriptions,
        subscriptionsRequest(),
        authHeader("admin"),
      );
      expect(rpc, protocol).toMatchObject({
        ok: false,
        code: Code.ResourceExhausted,
        reason: "CLIENT_OVER_SHARE",
      });
    }
    gate.release();
    expect((await waiting).status).toBe(200);
  });
});

describe("deadlines: no call outlives its deadline, and none reaches storage after it", () => {
  it("a gRPC call whose deadline passes while it waits: DEADLINE_EXCEEDED, nothing read", async () => {
    holding = await fill(patient);
    const before = commands.length;
    const res = await h2Request(
      patient.baseUrl,
      {
        ":method": "POST",
        ":path": `/${SubscriptionService.typeName}/GetSubscriptions`,
        "content-type": "application/grpc",
        te: "trailers",
        "grpc-timeout": "100m",
        authorization: authHeader("admin"),
      },
      envelope(Buffer.alloc(0)),
    );
    const trailers = { ...res.headers, ...res.trailers };
    expect(trailers["grpc-status"]).toBe(String(Code.DeadlineExceeded));
    expect(commands.length).toBe(before);
  });

  it("a call whose deadline passes inside the pipeline sends nothing more: the Restore is not written", async () => {
    const res = await h2Request(
      patient.baseUrl,
      {
        ":method": "POST",
        ":path": `/${DocumentService.typeName}/Restore`,
        "content-type": "application/grpc",
        te: "trailers",
        "grpc-timeout": "150m",
        authorization: authHeader("admin"),
      },
      envelope(
        toBinary(
          DocumentService.method.restore.input,
          create(DocumentService.method.restore.input, { boxId: BOX, messageId: SLOW }),
        ),
      ),
    );
    const trailers = { ...res.headers, ...res.trailers };
    expect(trailers["grpc-status"]).toBe(String(Code.DeadlineExceeded));
    // The hook held it 400 ms; its write would have come after the deadline. Give it the time.
    await new Promise((r) => setTimeout(r, 500));
    const message = await patient.db
      .collection("messages")
      .findOne({ boxId: BOX, messageId: SLOW });
    expect(message?.isDeleted).toBe(true);
  });
});

/** A raw HTTP/1.1 POST: status, headers and body as sent. */
function post(
  target: Harness,
  path: string,
  headers: Record<string, string>,
  body: Buffer,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: "127.0.0.1",
        port: target.port,
        method: "POST",
        path,
        headers: { ...headers, "content-length": String(body.length) },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks),
          }),
        );
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

describe("LOG_LEVEL=debug: each call's route, admission decision and timings", () => {
  const lines = (msg: string) =>
    h.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === msg);

  it('a call let in: one debug line with its route, "admitted", the wait and the duration', async () => {
    const before = lines("call").length;
    const res = await legacy(h, {
      method: "GET",
      path: subscriptionsPath,
      headers: { authorization: authHeader("admin") },
    });
    expect(res.status).toBe(200);
    const line = await vi.waitUntil(() => lines("call")[before], { timeout: 2_000 });
    expect(line).toMatchObject({
      level: "debug",
      route: "/GetSubscriptions",
      protocol: "legacy",
      status: 200,
      admission: "admitted",
      waitedMs: 0,
    });
    expect(line.requestId).toBe(res.headers["x-request-id"]);
    expect(typeof line.durationMs).toBe("number");
  });

  it("a call refused at the door: a debug line with its route, status and code", async () => {
    holding = await fill(h);
    const before = lines("call refused at the door").length;
    const res = await legacy(h, {
      method: "GET",
      path: subscriptionsPath,
      headers: { authorization: authHeader("admin") },
    });
    expect(res.status).toBe(503);
    const line = await vi.waitUntil(() => lines("call refused at the door")[before], {
      timeout: 2_000,
    });
    expect(line).toMatchObject({
      level: "debug",
      route: "/GetSubscriptions",
      status: 503,
      code: "unavailable",
    });
    expect(typeof line.durationMs).toBe("number");
  });

  it("at info, neither line is written", async () => {
    const res = await legacy(patient, {
      method: "GET",
      path: subscriptionsPath,
      headers: { authorization: authHeader("admin") },
    });
    expect(res.status).toBe(200);
    await patient.waitForLog((l) => l.msg === "request" && l.status === 200);
    expect(patient.logs.some((l) => l.includes('"level":"debug"'))).toBe(false);
  });
});
