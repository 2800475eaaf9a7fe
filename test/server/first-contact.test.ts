/**
 * What a newcomer meets first: `/` leads to the API page, the OpenAPI
 * document names a server a generated client can call, the page shows the
 * demo credentials when the demo data is loaded, and answers whose body
 * depends on Accept say so in Vary.
 */
import http2 from "node:http2";
import { describe, expect, it } from "vitest";
import { authHeader, BOX, USERS } from "../support/fixture";
import { legacy, startHarness, useHarness } from "../support/harness";

const h = useHarness();

describe("GET / leads to the docs", () => {
  it("302 to /docs, with a body that says where things are (for curl, which does not follow)", async () => {
    const res = await legacy(h, { method: "GET", path: "/" });
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe("/docs");
    expect(res.headers["content-type"]).toBe("text/plain; charset=utf-8");
    expect(res.text).toContain("/docs");
    expect(res.text).toContain("/openapi.json");
    const head = await legacy(h, { method: "HEAD", path: "/" });
    expect(head.status).toBe(302);
    expect(head.headers.location).toBe("/docs");
    expect(head.body.length).toBe(0);
  });
  it("any other method: 405 naming GET", async () => {
    const res = await legacy(h, { method: "POST", path: "/" });
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe("GET, HEAD");
    expect(res.headers["x-service-errorcode"]).toBe("Http.MethodNotAllowed");
  });
  it("/docs answers the page the redirect names", async () => {
    const res = await legacy(h, { method: "GET", path: "/docs" });
    expect(res.status).toBe(200);
    expect(res.text).toContain('<div id="swagger-ui">');
  });
});

describe("the server URL of /openapi.json", () => {
  const serversOf = async (host: string | undefined) => {
    const res = await legacy(h, {
      method: "GET",
      path: "/openapi.json",
      headers: host === undefined ? {} : { host },
    });
    expect(res.status).toBe(200);
    return JSON.parse(res.text).servers as { url: string }[];
  };

  // docs/security.md, "Host": a document that repeated the request's Host could be
  // poisoned in a shared cache (fff96f0 named http://<Host> with only Vary: Accept-Encoding).
  it("is the address the service listens on, whatever the Host says", async () => {
    for (const host of [undefined, "evil.example", "api.example.com:8443", "[::1]:8080", 'a"b']) {
      expect(await serversOf(host), String(host)).toEqual([{ url: `http://127.0.0.1:${h.port}` }]);
    }
  });

  it("over h2c too: :authority is not repeated", async () => {
    const session = http2.connect(h.baseUrl);
    try {
      const { status, text } = await new Promise<{ status: unknown; text: string }>(
        (resolve, reject) => {
          const req = session.request({
            ":path": "/openapi.json",
            ":authority": "docs.example:81",
          });
          let status: unknown;
          const chunks: Buffer[] = [];
          req.on("response", (headers) => {
            status = headers[":status"];
          });
          req.on("data", (chunk: Buffer) => chunks.push(chunk));
          req.on("end", () => resolve({ status, text: Buffer.concat(chunks).toString("utf8") }));
          req.on("error", reject);
        },
      );
      expect(status).toBe(200);
      expect(JSON.parse(text).servers).toEqual([{ url: `http://127.0.0.1:${h.port}` }]);
    } finally {
      session.close();
    }
  });

  it("listening on every address (0.0.0.0), with no PUBLIC_URL: a relative URL", async () => {
    const wide = await startHarness(undefined, undefined, undefined, { listenHost: "0.0.0.0" });
    try {
      const res = await legacy(wide, {
        method: "GET",
        path: "/openapi.json",
        headers: { host: "evil.example" },
      });
      expect(JSON.parse(res.text).servers).toEqual([{ url: "/" }]);
    } finally {
      await wide.close();
    }
  });

  it("PUBLIC_URL, when set, whatever the Host", async () => {
    const fixed = await startHarness(undefined, undefined, undefined, {
      publicUrl: "https://api.example.com/docflow",
    });
    try {
      for (const host of [undefined, "elsewhere.example"]) {
        const res = await legacy(fixed, {
          method: "GET",
          path: "/openapi.json",
          headers: host ? { host } : {},
        });
        expect(JSON.parse(res.text).servers).toEqual([{ url: "https://api.example.com/docflow" }]);
      }
    } finally {
      await fixed.close();
    }
  });
});

describe("/docs shows the demo credentials only when the demo data is loaded", () => {
  it("not here (no demo data)", async () => {
    const res = await legacy(h, { method: "GET", path: "/docs" });
    expect(res.text).not.toContain("demo data");
  });
  it("a table of them, escaped, above the page", async () => {
    const demo = await startHarness(undefined, undefined, undefined, {
      demoCredentials: [
        ["ServiceAuth", "ServiceAuth svcauth_api_client_id=k, svcauth_token=t"],
        ["odd <label>", 'a&b"c'],
      ],
    });
    try {
      const res = await legacy(demo, { method: "GET", path: "/docs" });
      expect(res.status).toBe(200);
      expect(res.text).toContain("demo data");
      expect(res.text).toContain(
        "<th>ServiceAuth</th><td><code>ServiceAuth svcauth_api_client_id=k, svcauth_token=t</code></td>",
      );
      expect(res.text).toContain("<th>odd &#60;label&#62;</th><td><code>a&#38;b&#34;c</code></td>");
      expect(res.text.indexOf("demo data")).toBeLessThan(res.text.indexOf('id="swagger-ui"'));
    } finally {
      await demo.close();
    }
  });
});

describe("Vary: Accept on every legacy answer whose body depends on it", () => {
  const path = `/GetSubscriptions?boxId=${BOX}&userId=${USERS.admin.userId}`;
  it.each([
    ["legacy JSON", { accept: "application/json" }],
    ["legacy protobuf (no Accept)", {}],
  ])("a 200 in %s", async (_name, headers) => {
    const res = await legacy(h, {
      method: "GET",
      path,
      headers: { authorization: authHeader("admin"), ...headers },
    });
    expect(res.status).toBe(200);
    expect(res.headers.vary).toBe("Accept, Accept-Encoding");
  });
  it.each([
    ["problem+json", { accept: "application/json" }, "application/problem+json"],
    ["text", {}, "text/plain; charset=utf-8"],
  ])("an error as %s", async (_name, headers, type) => {
    const res = await legacy(h, { method: "GET", path, headers });
    expect(res.status).toBe(401);
    expect(res.headers["content-type"]).toBe(type);
    // Written by the transcoder's exchange, which compresses any answer by Accept-Encoding.
    expect(res.headers.vary).toBe("Accept, Accept-Encoding");
  });
  it("a 404 of an unknown path too", async () => {
    const res = await legacy(h, { method: "GET", path: "/NoSuchOperation" });
    expect(res.status).toBe(404);
    expect(res.headers.vary).toBe("Accept");
  });
});
