/**
 * fetchLimited against every misbehaviour of the test peer: the short cause
 * each ends with, that the client let go of the connection, that nothing was
 * left unhandled, and (in a fresh child process, where an uncaught error
 * would be fatal) that the process lives through all of them.
 */
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  fetchLimited,
  type LimitedResponse,
  OutboundError,
  type OutboundFailure,
} from "../../src/outbound";
import {
  type Peer,
  runInFreshProcess,
  SCENARIOS,
  type Scenario,
  startPeer,
  watchUnhandled,
} from "../support/misbehaving-peer";

const TIMEOUT_MS = 1_000;
const MAX_BYTES = 64 * 1024;
const limits = {
  timeoutMs: TIMEOUT_MS,
  maxBytes: MAX_BYTES,
  headers: { accept: "application/json" },
};

const unhandled = watchUnhandled({ beforeAll, afterAll });

let peer: Peer | undefined;
afterEach(async () => {
  // Late events (a reset, a parse error after the answer) would show up here.
  await new Promise((r) => setTimeout(r, 100));
  await peer?.close();
  peer = undefined;
  expect(unhandled).toEqual([]);
});

/** Runs one call; the error (an OutboundError, nothing else) or the response, and how long it took. */
async function call(url: string, extra: { signal?: AbortSignal; maxBytes?: number } = {}) {
  const started = performance.now();
  let response: LimitedResponse | undefined;
  let error: unknown;
  try {
    response = await fetchLimited(url, { ...limits, ...extra });
  } catch (e) {
    error = e;
  }
  if (error !== undefined) expect(error).toBeInstanceOf(OutboundError);
  return { response, error: error as OutboundError | undefined, ms: performance.now() - started };
}

/** Scenario, failure kind, cause, and whether the peer never closes (so the client must). */
const failures: [Scenario, OutboundFailure, string, boolean][] = [
  ["big-200", "too-large", `body over ${MAX_BYTES} bytes`, false],
  ["big-503", "status", "answered HTTP 503", false],
  ["big-404", "status", "answered HTTP 404", false],
  ["truncated", "truncated", "connection closed mid-body", false],
  ["cut-chunk", "truncated", "connection closed mid-body", false],
  ["slow-drip", "timeout", `timed out after ${TIMEOUT_MS} ms`, true],
  ["silent", "timeout", `timed out after ${TIMEOUT_MS} ms`, true],
  ["redirect-302", "redirect", "redirect refused (302)", false],
  ["redirect-307", "redirect", "redirect refused (307)", false],
  ["huge-headers", "protocol", "not a valid HTTP answer (HPE_HEADER_OVERFLOW)", true],
  ["garbage", "protocol", "not a valid HTTP answer (HPE_INVALID_CONSTANT)", true],
  ["close-on-accept", "network", "connection closed before an answer", false],
];

describe("fetchLimited against a misbehaving peer", () => {
  it.each(failures)("%s: fails as %s, '%s'", async (scenario, kind, message, clientMustClose) => {
    peer = await startPeer(scenario);
    const { error, ms } = await call(peer.url);
    expect(error?.kind).toBe(kind);
    expect(error?.message).toBe(message);
    expect(ms).toBeLessThan(TIMEOUT_MS + 500);
    if (kind === "timeout") expect(ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
    expect(await peer.allClosed(), "the connection is closed").toBe(true);
    expect(peer.connections()).toBe(1);
    if (clientMustClose) expect(peer.connectionLog()[0]?.closedBy).toBe("client");
  });

  it("ok: returns the status, headers and body; the connection is closed", async () => {
    peer = await startPeer("ok");
    const { response } = await call(peer.url);
    expect(response?.status).toBe(200);
    expect(response?.headers["content-type"]).toBe("application/json");
    expect(response?.body.toString()).toBe('{"keys":[]}');
    expect(await peer.allClosed()).toBe(true);
    expect(peer.connectionLog()[0]?.closedBy).toBe("client");
  });

  it("overlong: bytes past the declared length are a broken answer (or unread)", async () => {
    peer = await startPeer("overlong");
    const { response, error } = await call(peer.url);
    // Sent in one write, the extra bytes reach the parser with the body: a parse error. Had they
    // come in a later read, the declared 11 bytes would have been the answer. The client closes.
    if (error) expect(error.message).toBe("not a valid HTTP answer (HPE_INVALID_CONSTANT)");
    else expect(response?.body.toString()).toBe('{"keys":[]}');
    expect(await peer.allClosed()).toBe(true);
    expect(peer.connectionLog()[0]?.closedBy).toBe("client");
  });

  it("a redirect is not followed", async () => {
    peer = await startPeer("redirect-302");
    await call(peer.url);
    expect(peer.requestLog().map((r) => r.path)).toEqual(["/"]);
  });

  it("a declared 500 MB body is refused before it is read", async () => {
    peer = await startPeer("big-200", { bodyBytes: 500_000_000 });
    const { error, ms } = await call(peer.url);
    expect(error?.message).toBe(`body over ${MAX_BYTES} bytes`);
    expect(ms).toBeLessThan(500);
    expect(await peer.allClosed()).toBe(true);
    // The peer was still sending: the client hung up first.
    expect(peer.connectionLog()[0]?.closedBy).toBe("client");
  });

  it("an undeclared body is cut off at the cap", async () => {
    peer = await startPeer("big-200", { bodyBytes: 500_000_000, undeclared: true });
    const { error } = await call(peer.url);
    expect(error?.kind).toBe("too-large");
    expect(await peer.allClosed()).toBe(true);
    expect(peer.connectionLog()[0]?.closedBy).toBe("client");
  });

  it("the caller's signal aborts a call in progress, and one already aborted never connects", async () => {
    peer = await startPeer("slow-drip");
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error("shutting down")), 300);
    const { error, ms } = await call(peer.url, { signal: controller.signal });
    expect(error?.kind).toBe("aborted");
    expect(ms).toBeLessThan(TIMEOUT_MS);
    expect(await peer.allClosed()).toBe(true);

    const again = await call(peer.url, { signal: controller.signal });
    expect(again.error?.kind).toBe("aborted");
    expect(peer.connections()).toBe(1);
  });

  it("a refused connection is a network failure", async () => {
    const closed = await startPeer("ok");
    const url = closed.url;
    await closed.close();
    const { error } = await call(url);
    expect(error?.kind).toBe("network");
    expect(error?.message).toBe("connection failed (ECONNREFUSED)");
  });

  it("a process that meets every scenario in turn stays alive", async () => {
    const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
    const program = `
      const { startPeer, SCENARIOS } = await import(${JSON.stringify(here("../support/misbehaving-peer.ts"))});
      const { fetchLimited } = await import(${JSON.stringify(here("../../src/outbound.ts"))});
      const peer = await startPeer("ok");
      const causes = [];
      for (const s of SCENARIOS) {
        for (let i = 0; i < 3; i++) {
          await fetchLimited(peer.urlFor(s), { timeoutMs: 300, maxBytes: 65536 }).then(
            () => causes.push("ok"), (e) => causes.push(e.message));
        }
      }
      await new Promise((r) => setTimeout(r, 300));
      const allClosed = await peer.allClosed();
      await peer.close();
      console.log(JSON.stringify({ alive: true, calls: causes.length, allClosed }));
    `;
    const { code, out, err } = await runInFreshProcess(program);
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(JSON.parse(out)).toEqual({ alive: true, calls: SCENARIOS.length * 3, allClosed: true });
  });
});
