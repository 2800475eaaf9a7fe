/**
 * The legacy paths as a profile of the transcoder (docs/transcoding.md,
 * docs/api.md §3): in the one route table with the standard bindings, their
 * literals matched whatever their case, never with a trailing "/", a wrong
 * method the legacy 405 — as before the transcoder.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { loadFixture } from "../../src/fixtures/load";
import { authHeader, BOX, baseFixture, USERS } from "../support/fixture";
import { legacy, useHarness } from "../support/harness";

const h = useHarness();
beforeEach(async () => {
  await loadFixture(h.db, baseFixture());
});

const query = `boxId=${BOX}&userId=${USERS.clerk.userId}`;
const json = { authorization: authHeader("admin"), accept: "application/json" };

describe("legacy paths in the transcoder's table", () => {
  it("a literal path matches whatever its case, with the same answer", async () => {
    const declared = await legacy(h, {
      method: "GET",
      path: `/GetSubscriptions?${query}`,
      headers: json,
    });
    const lower = await legacy(h, {
      method: "GET",
      path: `/getsubscriptions?${query}`,
      headers: json,
    });
    expect(declared.status).toBe(200);
    expect(lower.status).toBe(200);
    expect(lower.body.toString("utf8")).toBe(declared.body.toString("utf8"));
  });

  it("a trailing slash is no legacy path: 404", async () => {
    const res = await legacy(h, {
      method: "GET",
      path: `/GetSubscriptions/?${query}`,
      headers: json,
    });
    expect(res.status).toBe(404);
    expect(res.headers["x-service-errorcode"]).toBeDefined();
  });

  it("another method: the legacy 405, naming the path as declared", async () => {
    const res = await legacy(h, { method: "PUT", path: `/getSubscriptions?${query}`, headers: {} });
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe("GET");
    expect(res.body.toString("utf8")).toBe("use GET for /GetSubscriptions");
  });
});

describe("the legacy paths read their body through the exchange: the server's size limit applies", () => {
  const small = useHarness(undefined, undefined, { maxRequestBytes: 64 });
  beforeEach(async () => {
    await loadFixture(small.db, baseFixture());
  });
  const update = (body: string) =>
    legacy(small, {
      method: "POST",
      path: `/UpdateSubscriptions?${query}`,
      headers: { ...json, "content-type": "application/json" },
      body,
    });
  // The same body with the id padded to exactly `size` bytes.
  const bodyOf = (size: number) => {
    const text = JSON.stringify({ Subscriptions: [{ Id: "", IsSubscribed: "true" }] });
    return text.replace('""', `"${"x".repeat(size - text.length)}"`);
  };

  it("at the limit the body is decoded (the unknown id is the domain's 400); one byte over: 413", async () => {
    expect(Buffer.byteLength(bodyOf(64))).toBe(64);
    const at = await update(bodyOf(64));
    expect(at.status).toBe(400);
    expect(at.headers["x-service-errorcode"]).toBe("Subscriptions.UnknownId");
    const over = await update(bodyOf(65));
    expect(over.status).toBe(413);
    expect(over.headers["x-service-errorcode"]).toBe("Http.PayloadTooLarge");
  });
});
