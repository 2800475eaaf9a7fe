/**
 * /docs in a real browser (Debian's chromium driven by playwright-core): the
 * page shows the operations, sends an authorized request that gets a 200, and
 * nothing leaves the server's origin. Run by `npm run test:browser`.
 */
import { mkdir } from "node:fs/promises";
import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readTlsMaterial } from "../../src/http/tls";
import { launchChromium } from "../support/browser";
import { authHeader, BOX, USERS } from "../support/fixture";
import { type Harness, startHarness } from "../support/harness";
import { makeCertificates } from "../support/tls-certs";

let h: Harness;
let browser: Browser;
beforeAll(async () => {
  h = await startHarness();
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await h?.close();
});

/**
 * As a person does it on the page: Authorize with the whole ServiceAuth
 * header value, open GetSubscriptions, Try it out, fill boxId and userId,
 * Execute. Returns the operation and the status shown.
 */
async function executeGetSubscriptions(page: Page): Promise<{ op: Locator; status: string }> {
  await page.click("button.authorize");
  await page.fill(".modal-ux input[type=text]", authHeader("admin"));
  await page.click(".modal-ux button.modal-btn.authorize");
  await page.click(".modal-ux button.btn-done");
  const op = page.locator("#operations-SubscriptionService-GetSubscriptions");
  await op.locator(".opblock-summary").click();
  const tryItOut = op.locator("button.try-out__btn");
  if ((await tryItOut.count()) > 0 && (await tryItOut.innerText()).includes("Try it out")) {
    await tryItOut.click();
  }
  await op.locator('tr[data-param-name="boxId"] input').fill(BOX);
  await op.locator('tr[data-param-name="userId"] input').fill(USERS.clerk.userId);
  await op.locator("button.execute").click();
  const status = op.locator(".live-responses-table tr.response .response-col_status").first();
  await status.waitFor({ timeout: 30_000 });
  return { op, status: (await status.innerText()).trim() };
}

describe("GET /docs in a browser", () => {
  it("shows the operations and sends an authorized request; nothing leaves the origin", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 1800 } });
    const page = await context.newPage();
    const requested: string[] = [];
    page.on("request", (request) => requested.push(request.url()));
    // docs/security.md: the page works under its Content-Security-Policy, which refuses
    // anything inline; a refusal would show as a violation event (and a console error).
    const refusals: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "error" && /Content Security Policy/i.test(message.text())) {
        refusals.push(message.text());
      }
    });
    await page.addInitScript({
      content: `window.cspViolations = [];
        document.addEventListener("securitypolicyviolation", (event) => {
          window.cspViolations.push(event.violatedDirective + " " + event.blockedURI);
        });`,
    });

    const answer = await page.goto(`${h.baseUrl}/docs`);
    const headers = answer?.headers() ?? {};
    expect(headers["content-security-policy"]).toContain("script-src 'self'");
    expect(headers["content-security-policy"]).toContain("frame-ancestors 'none'");
    expect(headers["x-frame-options"]).toBe("DENY");
    expect(headers["x-content-type-options"]).toBe("nosniff");
    await page.waitForSelector(".opblock", { timeout: 30_000 });
    for (const path of [
      "/Restore",
      "/Delete",
      "/GetCounteragentsFromGroup",
      "/GetSubscriptions",
      "/UpdateSubscriptions",
      "/CreateCounteragentGroup",
      "/UpdateCounteragentGroup",
      "/DeleteCounteragentGroup",
      "/GetCounteragentGroup",
      "/GetCounteragentGroups",
      "/AddCounteragentToGroup",
    ]) {
      await expect(
        page.locator(`.opblock-summary-path[data-path="${path}"]`).count(),
      ).resolves.toBe(1);
    }

    const { op, status } = await executeGetSubscriptions(page);
    expect(status).toBe("200");
    expect(await op.locator(".live-responses-table").innerText()).toContain(
      '"IsSubscribed": "false"',
    );
    expect(await page.evaluate("window.cspViolations")).toEqual([]);
    expect(refusals).toEqual([]);

    await mkdir("test-results", { recursive: true });
    await page.screenshot({ path: "test-results/docs.png", fullPage: false });

    expect(requested.length).toBeGreaterThan(3);
    const foreign = requested.filter(
      (url) => !url.startsWith(`${h.baseUrl}/`) && !url.startsWith("data:"),
    );
    expect(foreign).toEqual([]);
    expect(requested).toContain(`${h.baseUrl}/openapi.json`);
    await context.close();
  });
});

describe("GET /docs over TLS (HTTP/2 by ALPN)", () => {
  it("loads from the service itself and executes an authorized request", async () => {
    const certs = await makeCertificates();
    certs.issue("server", "0x4004");
    const files = { certFile: certs.file("server.pem"), keyFile: certs.file("server.key") };
    const secure = await startHarness(undefined, undefined, undefined, {
      tls: { files, material: readTlsMaterial(files), reloadIntervalMs: 60_000 },
    });
    // The test CA is not in Chromium's store: its errors are ignored for this context only.
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    try {
      const page = await context.newPage();
      const origin = `https://127.0.0.1:${secure.port}`;
      const response = await page.goto(`${origin}/docs`);
      expect(response?.status()).toBe(200);
      expect((await response?.securityDetails())?.protocol).toMatch(/^TLS 1\.[23]$/);
      const protocol = await page.evaluate(
        "performance.getEntriesByType('navigation')[0].nextHopProtocol",
      );
      expect(protocol).toBe("h2");
      await page.waitForSelector(".opblock", { timeout: 30_000 });
      const { op, status } = await executeGetSubscriptions(page);
      expect(status).toBe("200");
      // The document named the https origin: the request went there.
      expect(await op.locator(".request-url").innerText()).toContain(origin);
    } finally {
      await context.close();
      await secure.close();
    }
  });
});
