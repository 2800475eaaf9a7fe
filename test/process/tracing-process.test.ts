/**
 * Issue 15: tracing in a real process — spans reach a real OTLP/HTTP receiver
 * (http/json) in this test, are flushed on SIGTERM, export failures change no
 * answer, and every malformed OTEL_* value stops the start with exit 2.
 */
import { readdirSync, readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { startService, useServiceProcesses } from "../support/service-process";

const servers: http.Server[] = [];
useServiceProcesses();
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

const start = (env: Record<string, string>) => startService(env);

interface Received {
  readonly headers: http.IncomingHttpHeaders;
  readonly body: {
    resourceSpans: {
      resource: { attributes: { key: string; value: { stringValue?: string } }[] };
      scopeSpans: { spans: { name: string; kind: number; traceId: string }[] }[];
    }[];
  };
}

/**
 * An OTLP/HTTP receiver for http/json: every export request, kept with the
 * time it arrived. `status`: what it answers (400: every export fails).
 */
async function receiver(
  status = 200,
): Promise<{ url: string; received: Received[]; arrivals: number[] }> {
  const received: Received[] = [];
  const arrivals: number[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.url === "/v1/traces") {
        arrivals.push(Date.now());
        received.push({
          headers: req.headers,
          body: JSON.parse(Buffer.concat(chunks).toString("utf8")) as Received["body"],
        });
      }
      res.writeHead(status, { "content-type": "application/json" });
      res.end("{}");
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    arrivals,
  };
}

describe("spans reach an OTLP/HTTP receiver", () => {
  it("http/json, flushed on SIGTERM (nothing sent before), exit 0", async () => {
    const otlp = await receiver();
    const s = await start({
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_EXPORTER_OTLP_HEADERS: "x-otlp-token=s3cret%20value",
      OTEL_SERVICE_NAME: "docflow-test",
      OTEL_RESOURCE_ATTRIBUTES: "deployment.environment.name=test",
      // Nothing leaves before the shutdown: the flush on SIGTERM is what sends it.
      OTEL_BSP_SCHEDULE_DELAY: "600000",
    });
    expect(s.baseUrl).not.toBe("");
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const res = await fetch(`${s.baseUrl}/openapi.json`, {
      headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    const signalled = Date.now();
    s.child.kill("SIGTERM");
    expect(await s.exited).toBe(0);
    // Every export arrived after the signal: the flush on shutdown sent it.
    expect(otlp.arrivals.length).toBeGreaterThan(0);
    for (const at of otlp.arrivals) expect(at).toBeGreaterThanOrEqual(signalled);
    const spans = otlp.received.flatMap((r) =>
      r.body.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans)),
    );
    expect(spans.map((sp) => sp.name)).toContain("GET /openapi.json");
    const span = spans.find((sp) => sp.name === "GET /openapi.json");
    expect(span?.traceId).toBe(traceId);
    expect(otlp.received[0]?.headers["x-otlp-token"]).toBe("s3cret value");
    const attributes = Object.fromEntries(
      (otlp.received[0]?.body.resourceSpans[0]?.resource.attributes ?? []).map((a) => [
        a.key,
        a.value.stringValue,
      ]),
    );
    expect(attributes).toMatchObject({
      "service.name": "docflow-test",
      "deployment.environment.name": "test",
      "service.version": expect.any(String),
      "service.instance.id": expect.any(String),
    });
    const stdout = s.stdout();
    expect(stdout.indexOf("stopped")).toBeGreaterThan(0);
    // The request log line carried the span's ids.
    const all = stdout
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(all.find((l) => l.msg === "request" && l.path === "/openapi.json")).toMatchObject({
      traceId,
      spanId: expect.any(String),
    });
  });

  it("export failures change no answer and are logged once a minute at most", async () => {
    // A collector that refuses every export (400: not retried), and counts them.
    const refusing = await receiver(400);
    const s = await start({
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${refusing.url}/v1/traces`,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_BSP_SCHEDULE_DELAY: "50",
      OTEL_EXPORTER_OTLP_TIMEOUT: "500",
    });
    // Requests until four exports have failed; every answer is unchanged.
    for (let i = 0; refusing.arrivals.length < 4; i++) {
      expect(i, "four exports within 200 requests").toBeLessThan(200);
      const res = await fetch(`${s.baseUrl}/openapi.json`);
      expect(res.status).toBe(200);
      await res.arrayBuffer();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    s.child.kill("SIGTERM");
    expect(await s.exited).toBe(0);
    // The whole output, after the exit: one line for four (or more) failures.
    const failures = s
      .stdout()
      .split("\n")
      .filter((l) => l.includes("trace export failed"));
    expect(failures).toHaveLength(1);
  });
});

describe("tracing off loads nothing", () => {
  it("no module of ours imports OpenTelemetry statically (tracing.ts imports it when on)", () => {
    const files = readdirSync("src", { recursive: true, encoding: "utf8" }).filter((f) =>
      f.endsWith(".ts"),
    );
    for (const file of files) {
      const text = readFileSync(`src/${file}`, "utf8");
      expect({ file, found: /^import (?!type )[^;]*from "@opentelemetry\//m.test(text) }).toEqual({
        file,
        found: false,
      });
    }
  });
});

describe("a malformed OTEL_* value stops the start: exit 2, one line naming it", () => {
  // Every variable's malformed value is checked in process (test/unit/config-values.test.ts);
  // these two prove the path from a bad value to exit 2 and one stderr line, a secret kept out.
  it.each([
    ["OTEL_EXPORTER_OTLP_ENDPOINT", "not a url"],
    ["OTEL_EXPORTER_OTLP_HEADERS", "secret-token-without-equals"],
  ])("%s=%s", async (name, value) => {
    const s = await start({
      [name]: value,
      ...(name === "OTEL_TRACES_SAMPLER_ARG" && { OTEL_TRACES_SAMPLER: "traceidratio" }),
    });
    expect(await s.exited).toBe(2);
    const lines = s
      .stderr()
      .split("\n")
      .filter((l) => l.includes("  - "));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(name);
    if (name.endsWith("HEADERS")) expect(s.stderr()).not.toContain("secret-token");
  });
});
