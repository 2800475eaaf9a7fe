/**
 * docs/security.md, "Outbound fetches": every fetch the service makes of
 * another server (the issuer's key set, the trace exporter) against a server
 * that misbehaves in every way test/support/misbehaving-peer.ts knows: lying
 * lengths, an error status with a large body, a close mid-body, a slow drip,
 * a redirect, garbage. Each fails with its cause, logged once; every
 * connection is let go; nothing is left unhandled; and a process that meets
 * them all lives on (fff96f0's key-set fetch made the process exit on the
 * first three).
 */
import { fileURLToPath } from "node:url";
import { ExportResultCode } from "@opentelemetry/core";
import {
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { JwksUnavailable, remoteKeySource } from "../../src/auth/jwks";
import { createLogger } from "../../src/log";
import type { TracingConfig } from "../../src/observability/otel-config";
import { otlpExporter } from "../../src/observability/tracing";
import {
  type Peer,
  runInFreshProcess,
  SCENARIOS,
  type Scenario,
  startPeer,
  watchUnhandled,
} from "../support/misbehaving-peer";

const unhandled = watchUnhandled({ beforeAll, afterAll });

let peer: Peer | undefined;
afterEach(async () => {
  await peer?.close();
  peer = undefined;
  expect(unhandled).toEqual([]);
});

/** Every scenario but the well-behaved one: each must fail the fetch. */
const HOSTILE = SCENARIOS.filter((s) => s !== "ok" && s !== "overlong");

describe("the issuer's key set (BEARER_JWKS_URL) from a server that misbehaves", () => {
  it.each(HOSTILE)(
    "%s: no keys (500 / unavailable, never a 401), one log line with the cause, the connection let go",
    async (scenario: Scenario) => {
      peer = await startPeer(scenario, { dripMs: 50 });
      const lines: string[] = [];
      const keys = remoteKeySource({
        url: peer.url,
        cooldownMs: 60_000,
        log: createLogger("info", (line) => lines.push(line)),
      });
      const lookup = keys({ alg: "RS256", kid: "k1" }, { payload: "", signature: "" });
      await expect(lookup).rejects.toBeInstanceOf(JwksUnavailable);
      const failures = lines
        .map((l) => JSON.parse(l))
        .filter((l) => l.msg === "bearer: JWKS fetch failed");
      expect(failures).toHaveLength(1);
      expect(failures[0].errorMessage).toMatch(
        /^(answered HTTP \d+|body over 65536 bytes|timed out after 3000 ms|redirect refused \(30[27]\)|connection closed mid-body|connection closed before an answer|not a valid HTTP answer \(HPE_\w+\)|is not JSON|has no "keys" array)$/,
      );
      expect(await peer.allClosed(2_000)).toBe(true);
    },
  );

  it("a well-behaved server's keys are used (the control)", async () => {
    peer = await startPeer("ok", { okBody: JSON.stringify({ keys: [] }) });
    const keys = remoteKeySource({ url: peer.url, cooldownMs: 0, log: createLogger("silent") });
    // An empty key set: fetched, parsed, and no key matches.
    await expect(keys({ alg: "RS256", kid: "k1" }, { payload: "", signature: "" })).rejects.toThrow(
      /no applicable key/i,
    );
    expect(peer.requests()).toBeGreaterThanOrEqual(1);
  });
});

/** A few finished spans to export. */
function spans(): ReadableSpan[] {
  const memory = new InMemorySpanExporter();
  const provider = new TracerProvider({
    spanProcessors: [new SimpleSpanProcessor({ exporter: memory })],
  });
  const tracer = provider.getTracer("outbound-peers");
  for (let i = 0; i < 3; i++) tracer.startSpan(`span-${i}`).end();
  return memory.getFinishedSpans();
}

const tracingTo = (url: string, protocol: TracingConfig["protocol"]): TracingConfig => ({
  url,
  protocol,
  headers: {},
  timeoutMs: 1_000,
  sampler: "always_on",
  samplerRatio: 1,
  propagators: ["tracecontext"],
  serviceName: "outbound-peers",
  resourceAttributes: {},
  batch: {
    scheduledDelayMillis: 1_000,
    exportTimeoutMillis: 1_000,
    maxQueueSize: 100,
    maxExportBatchSize: 10,
  },
});

describe("the trace exporter (OTEL_EXPORTER_OTLP_ENDPOINT) against a collector that misbehaves", () => {
  // A slow drip is the one the exporter's own timeout (an idle timer) never ends.
  it.each([
    "slow-drip",
    "silent",
    "big-503",
    "big-404",
    "redirect-307",
    "garbage",
    "close-on-accept",
  ] as const)(
    "%s: every export ends (fails) within its deadline, its connection let go",
    async (scenario) => {
      peer = await startPeer(scenario, { dripMs: 50 });
      for (const protocol of ["http/protobuf", "http/json"] as const) {
        const exporter = await otlpExporter(tracingTo(`${peer.url}/v1/traces`, protocol));
        const results = await Promise.all(
          [1, 2, 3].map(
            () =>
              new Promise<number>((resolve) => exporter.export(spans(), (r) => resolve(r.code))),
          ),
        );
        expect(results).toEqual([
          ExportResultCode.FAILED,
          ExportResultCode.FAILED,
          ExportResultCode.FAILED,
        ]);
        await exporter.shutdown();
      }
      expect(await peer.allClosed(2_000)).toBe(true);
    },
  );

  it("a collector that answers 200 is exported to (the control)", async () => {
    peer = await startPeer("ok");
    const exporter = await otlpExporter(tracingTo(`${peer.url}/v1/traces`, "http/json"));
    const code = await new Promise<number>((resolve) =>
      exporter.export(spans(), (r) => resolve(r.code)),
    );
    expect(code).toBe(ExportResultCode.SUCCESS);
    await exporter.shutdown();
  });
});

describe("a process whose key set and collector both misbehave in every way lives on", () => {
  it("every scenario, key set and exporter, in a fresh process: it exits 0, every connection closed", async () => {
    const here = (file: string) => JSON.stringify(fileURLToPath(new URL(file, import.meta.url)));
    const program = `
      const { startPeer, SCENARIOS } = await import(${here("../support/misbehaving-peer.ts")});
      const { remoteKeySource } = await import(${here("../../src/auth/jwks.ts")});
      const { createLogger } = await import(${here("../../src/log.ts")});
      const { otlpExporter } = await import(${here("../../src/observability/tracing.ts")});
      const sdk = await import("@opentelemetry/sdk-trace");
      const memory = new sdk.InMemorySpanExporter();
      const provider = new sdk.TracerProvider({ spanProcessors: [new sdk.SimpleSpanProcessor({ exporter: memory })] });
      provider.getTracer("t").startSpan("s").end();
      const spans = memory.getFinishedSpans();
      const log = createLogger("silent");
      const peer = await startPeer("ok", { dripMs: 50 });
      let failed = 0;
      let exported = 0;
      // Each scenario once; the three that made fff96f0's process exit, three times.
      const runs = [...SCENARIOS, "big-200", "big-503", "big-404", "big-200", "big-503", "big-404"];
      for (const s of runs) {
        const exporter = await otlpExporter({ ...${JSON.stringify(tracingTo("", "http/json"))}, url: peer.urlFor(s) });
        const keys = remoteKeySource({ url: peer.urlFor(s), cooldownMs: 0, log });
        await keys({ alg: "RS256", kid: "k" }, { payload: "", signature: "" }).catch(() => failed++);
        await new Promise((r) => exporter.export(spans, r));
        exported++;
        await exporter.shutdown();
      }
      await new Promise((r) => setTimeout(r, 300));
      const allClosed = await peer.allClosed(3000);
      await peer.close();
      console.log(JSON.stringify({ alive: true, failed, exported, allClosed }));
    `;
    const { code, out, err } = await runInFreshProcess(program);
    expect(err).toBe("");
    expect(code).toBe(0);
    // Every key lookup fails ("ok" serves an empty key set); every export ends.
    expect(JSON.parse(out)).toEqual({
      alive: true,
      failed: SCENARIOS.length + 6,
      exported: SCENARIOS.length + 6,
      allClosed: true,
    });
  });
});
