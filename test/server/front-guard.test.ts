/**
 * The guard at the front: whatever throws while a request is handled becomes
 * a 500 for that request alone (or, when its answer has begun, its stream cut
 * off), logged at error with its cause and request id; the process serves on.
 * A throw is injected at each stage a request passes — the listener, the
 * front's start, a route's match, each kind of route, the observation when
 * the answer closes — by wrapping the stage's module, on a request that asks
 * for it (`x-fail-at`).
 */
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { TEST_TIMEOUTS } from "../support/harness";

/** Which stage throws for a request: its `x-fail-at` header. */
const at = vi.hoisted(() => (req: { headers: Record<string, unknown> }, stage: string) => {
  if (req.headers["x-fail-at"] === stage) throw new Error(`injected failure at ${stage}`);
});

vi.mock("../../src/http/front", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../src/http/front")>();
  return {
    ...original,
    beginRequest: (...args: Parameters<typeof original.beginRequest>) => {
      at(args[0] as never, "front");
      return original.beginRequest(...args);
    },
  };
});
vi.mock("../../src/http/docs", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../src/http/docs")>();
  return {
    ...original,
    createDocsRoutes: (...args: Parameters<typeof original.createDocsRoutes>) => {
      const docs = original.createDocsRoutes(...args);
      return {
        ...docs,
        // A route's match: synchronous, before any route serves.
        route: (path: string) => {
          if (path === "/docs/fail-to-match") throw new Error("injected failure at match");
          return docs.route(path);
        },
      };
    },
  };
});
vi.mock("../../src/protocols/serve", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../src/protocols/serve")>();
  return {
    ...original,
    serveRpc: async (...args: Parameters<typeof original.serveRpc>) => {
      at(args[4] as never, "rpc");
      return original.serveRpc(...args);
    },
  };
});
vi.mock("../../src/legacy/profile", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../src/legacy/profile")>();
  type Exchange = Parameters<ReturnType<typeof original.createLegacyProfile>["fail"]>[0];
  const stage = (exchange: Exchange) => at((exchange as unknown as { req: never }).req, "legacy");
  return {
    ...original,
    createLegacyProfile: (...args: Parameters<typeof original.createLegacyProfile>) => {
      const profile = original.createLegacyProfile(...args);
      return {
        ...profile,
        // The legacy paths' answers: the call's outcome written, or its error.
        answer: (...s: Parameters<typeof profile.answer>) => {
          stage(s[1]);
          return profile.answer(...s);
        },
        fail: (...s: Parameters<typeof profile.fail>) => {
          stage(s[0]);
          return profile.fail(...s);
        },
      };
    },
  };
});
vi.mock("../../src/http/health", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../src/http/health")>();
  return {
    ...original,
    createHealthEndpoints: (...args: Parameters<typeof original.createHealthEndpoints>) => {
      const health = original.createHealthEndpoints(...args);
      return {
        ...health,
        handle: (req: never, res: never, path: string) => {
          at(req, "health");
          return health.handle(req, res, path);
        },
      };
    },
  };
});

const { createObserver } = await import("../../src/observability/observer");
const { startHarness } = await import("../support/harness");
const { createListener } = await import("../../src/http/listener");
const { createLogger } = await import("../../src/log");

/** An observer whose observation throws when the answer closes, for requests that ask. */
const base = createObserver(undefined, undefined);
const observer: typeof base = {
  metricsRoute: base.metricsRoute,
  watchReadiness: base.watchReadiness,
  admission: base.admission,
  watchAdmission: base.watchAdmission,
  watchConnections: base.watchConnections,
  refused: base.refused,
  begin(req, res, path) {
    const observed = base.begin(req, res, path);
    return {
      ...observed,
      get route() {
        return observed.route;
      },
      set route(value) {
        observed.route = value;
      },
      rpc: (system, method) => observed.rpc(system, method),
      end(status, seconds) {
        at(req as never, "observation");
        observed.end(status, seconds);
      },
    };
  },
};

let h: Awaited<ReturnType<typeof startHarness>>;
beforeAll(async () => {
  h = await startHarness(undefined, TEST_TIMEOUTS, undefined, { observer });
});
afterAll(async () => {
  await h?.close();
});

function get(path: string, headers: Record<string, string> = {}, method = "GET") {
  return new Promise<{ status: number; body: string; error?: string }>((resolve) => {
    const req = http.request(
      { host: "127.0.0.1", port: h.port, path, method, headers, agent: false },
      (res) => {
        let body = "";
        res.on("data", (c: Buffer) => (body += c.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
        res.on("error", (e) => resolve({ status: res.statusCode ?? 0, body, error: e.message }));
      },
    );
    req.on("error", (e) => resolve({ status: 0, body: "", error: e.message }));
    req.end();
  });
}

async function expectServing(): Promise<void> {
  expect((await get("/livez")).status).toBe(200);
}

describe("a throw at any stage of the front is that request's 500; the service serves on", () => {
  it.each([
    ["the front's start (request id, observation)", "front", "/livez", "GET"],
    [
      "an RPC route (the adapter)",
      "rpc",
      "/docflow.api.v1.SubscriptionService/GetSubscriptions",
      "POST",
    ],
    ["a legacy route (the bridge)", "legacy", "/GetSubscriptions?boxId=b&userId=u", "GET"],
    ["a health route", "health", "/readyz", "GET"],
  ])("%s", async (_name, stage, path, method) => {
    const requestId = `fail-at-${stage}`;
    const res = await get(
      path,
      { "x-fail-at": stage, "x-request-id": requestId, "content-type": "application/json" },
      method,
    );
    expect(res.status).toBe(500);
    expect(res.body).toBe("unexpected processing error");
    const line = await h.waitForLog(
      (l) => l.msg === "request failed" && l.errorMessage === `injected failure at ${stage}`,
    );
    expect(line).toMatchObject({ level: "error" });
    // The front's own start failed before it took the request id: then there is none to log.
    if (stage !== "front") expect(line.requestId).toBe(requestId);
    expect(JSON.stringify(line)).toContain("stack");
    await expectServing();
  });

  it("a route's match (synchronous, before any route serves)", async () => {
    const res = await get("/docs/fail-to-match");
    expect(res.status).toBe(500);
    await h.waitForLog(
      (l) => l.msg === "request failed" && l.errorMessage === "injected failure at match",
    );
    await expectServing();
  });

  it("the observation when the answer closes: the answer is out, the failure logged, the service serves on", async () => {
    const res = await get("/livez", {
      "x-fail-at": "observation",
      "x-request-id": "fail-at-observation",
    });
    expect(res.status).toBe(200);
    const line = await h.waitForLog((l) => l.msg === "request observation failed");
    expect(line).toMatchObject({ level: "error", requestId: "fail-at-observation" });
    await expectServing();
  });
});

describe("the listener's own guard", () => {
  it("a handler that throws synchronously cuts that request's connection; the next is served", async () => {
    const lines: string[] = [];
    let calls = 0;
    const listener = createListener(
      (_req, res) => {
        calls++;
        if (calls === 1) throw new Error("injected failure at the listener");
        res.end("ok");
      },
      TEST_TIMEOUTS,
      createLogger("info", (l) => lines.push(l)),
    );
    const { port } = await listener.listen(0, "127.0.0.1");
    try {
      const first = await new Promise<string>((resolve) =>
        http
          .get({ host: "127.0.0.1", port, path: "/", agent: false }, () => resolve("answered"))
          .on("error", (e) => resolve(e.message)),
      );
      expect(first).toMatch(/socket hang up|ECONNRESET/);
      const second = await new Promise<string>((resolve) =>
        http.get({ host: "127.0.0.1", port, path: "/", agent: false }, (res) => {
          let body = "";
          res.on("data", (c: Buffer) => (body += c.toString()));
          res.on("end", () => resolve(body));
        }),
      );
      expect(second).toBe("ok");
      expect(
        lines.some(
          (l) =>
            l.includes("request tracking failed") && l.includes("injected failure at the listener"),
        ),
      ).toBe(true);
    } finally {
      await listener.close();
    }
  });
});
