/**
 * CORS in a real browser: a page served from a second local origin calls the
 * service with the Connect-ES web client over Connect and gRPC-Web, and with
 * fetch() on a legacy path, and reads an error's code and X-Service-ErrorCode.
 * Run by `npm run test:browser` (Debian's chromium, playwright-core).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { build } from "esbuild";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../support/browser";
import { authHeader, BOX, baseFixture, USERS } from "../support/fixture";
import { type Harness, startHarness, TEST_CACHE, TEST_TIMEOUTS } from "../support/harness";

let h: Harness;
let browser: Browser;
let pages: http.Server;
let pageOrigin: string;

beforeAll(async () => {
  const bundle = await build({
    entryPoints: [new URL("./cors-page.ts", import.meta.url).pathname],
    bundle: true,
    format: "iife",
    platform: "browser",
    write: false,
    logLevel: "silent",
  });
  const script = bundle.outputFiles[0]?.text ?? "";
  pages = http.createServer((req, res) => {
    if (req.url === "/page.js") {
      res.setHeader("content-type", "text/javascript; charset=utf-8");
      res.end(script);
      return;
    }
    res.setHeader("content-type", "text/html; charset=utf-8");
    res.end(
      '<!doctype html><meta charset="utf-8"><title>page</title><script src="/page.js" defer></script>',
    );
  });
  await new Promise<void>((resolve) => pages.listen(0, "127.0.0.1", resolve));
  // "localhost" and "127.0.0.1" are different origins: the page and the API never share one.
  pageOrigin = `http://localhost:${(pages.address() as AddressInfo).port}`;
  h = await startHarness(baseFixture(), TEST_TIMEOUTS, TEST_CACHE, {
    corsAllowedOrigins: [pageOrigin],
  });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await h?.close();
  await new Promise((resolve) => pages?.close(resolve));
});

describe("a page on another origin calls the service", () => {
  it("over Connect and gRPC-Web, reads error codes and X-Service-ErrorCode", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.addInitScript(
      (input) => {
        (globalThis as unknown as { docflowInput: unknown }).docflowInput = input;
      },
      {
        api: h.baseUrl,
        boxId: BOX,
        userId: USERS.clerk.userId,
        admin: authHeader("admin"),
        stranger: authHeader("outsider"),
      },
    );
    await page.goto(`${pageOrigin}/`);
    await page.waitForFunction(
      () => (globalThis as unknown as { docflowResult?: unknown }).docflowResult,
      undefined,
      {
        timeout: 30_000,
      },
    );
    const result = await page.evaluate(
      () => (globalThis as unknown as { docflowResult: unknown }).docflowResult,
    );
    expect(result).toEqual({
      connectSubscriptions: 10,
      connectError: "PermissionDenied",
      grpcWebSubscriptions: 10,
      grpcWebError: "PermissionDenied",
      legacyStatus: 403,
      legacyErrorCode: "Http.Forbidden",
      legacyRequestId: true,
    });
    await context.close();
  });
});
