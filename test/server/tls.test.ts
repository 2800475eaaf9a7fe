/**
 * TLS on the one port (docs/operations.md, "TLS"): HTTP/1.1 and HTTP/2 by
 * ALPN, every protocol over it, TLS 1.2 at least, certificates rotated in
 * place without a restart and without a lost call, mutual TLS when a client
 * CA is set. The certificates are made by openssl for each run (nothing
 * secret is committed).
 */
import { execFile } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import http2 from "node:http2";
import https from "node:https";
import type tls from "node:tls";
import { connect as tlsConnect } from "node:tls";
import { promisify } from "node:util";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SubscriptionService } from "../../gen/docflow/api/v1/subscriptions_pb";
import { readTlsMaterial, TlsFilesError } from "../../src/http/tls";
import { authHeader, BOX, USERS } from "../support/fixture";
import { type Harness, startHarness } from "../support/harness";
import { makeCertificates, type TestCertificates } from "../support/tls-certs";

const run = promisify(execFile);
let certs: TestCertificates;
const file = (name: string) => certs.file(name);

let h: Harness;
let ca: Buffer;
const served = () => ({ certFile: file("served.pem"), keyFile: file("served.key") });
const use = (name: string) => {
  writeFileSync(file("served.pem"), readFileSync(file(`${name}.pem`)));
  writeFileSync(file("served.key"), readFileSync(file(`${name}.key`)));
};

beforeAll(async () => {
  certs = await makeCertificates();
  ca = certs.ca;
  certs.issue("first", "0x1001");
  certs.issue("second", "0x2002");
  certs.issue("client", "0x3003", "extendedKeyUsage=clientAuth");
  use("first");
  h = await startHarness(undefined, undefined, undefined, {
    tls: { files: served(), material: readTlsMaterial(served()), reloadIntervalMs: 100 },
  });
});
afterAll(async () => {
  await h?.close();
});

const base = () => `https://127.0.0.1:${h.port}`;
const subscriptionsPath = `/GetSubscriptions?boxId=${BOX}&userId=${USERS.clerk.userId}`;

/** One HTTPS/1.1 request on a new connection: status, the protocol TLS chose, the server's certificate serial. */
function get(path: string, options: https.RequestOptions = {}) {
  return new Promise<{ status: number; alpn: string | false | null; serial: string; body: string }>(
    (resolve, reject) => {
      const req = https.request(
        `${base()}${path}`,
        { ca, agent: false, headers: { authorization: authHeader("admin") }, ...options },
        (res) => {
          const socket = res.socket as tls.TLSSocket;
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () =>
            resolve({
              status: res.statusCode ?? 0,
              alpn: socket.alpnProtocol,
              serial: socket.getPeerCertificate().serialNumber,
              body: Buffer.concat(chunks).toString("utf8"),
            }),
          );
        },
      );
      req.on("error", reject);
      req.end();
    },
  );
}

describe("TLS on the one port", () => {
  it("HTTP/1.1 over TLS: the legacy paths, /readyz, /openapi.json naming https", async () => {
    const ready = await get("/readyz");
    expect(ready.status).toBe(200);
    expect(ready.alpn).toBe(false); // node's https client offers no ALPN: HTTP/1.1 by the first bytes
    const legacy = await get(subscriptionsPath, {
      ALPNProtocols: ["http/1.1"],
    } as https.RequestOptions);
    expect(legacy.status).toBe(200);
    expect(legacy.alpn).toBe("http/1.1");
    const doc = await get("/openapi.json");
    expect(JSON.parse(doc.body).servers).toEqual([{ url: `https://127.0.0.1:${h.port}` }]);
  });

  it("HTTP/2 by ALPN: a legacy call, then Connect and gRPC from connect-node", async () => {
    const session = http2.connect(base(), { ca });
    try {
      const status = await new Promise<unknown>((resolve, reject) => {
        const req = session.request({
          ":path": subscriptionsPath,
          authorization: authHeader("admin"),
        });
        req.on("response", (headers) => resolve(headers[":status"]));
        req.on("error", reject);
        req.resume();
      });
      expect(status).toBe(200);
      expect((session.socket as tls.TLSSocket).alpnProtocol).toBe("h2");
    } finally {
      session.close();
    }
    for (const transport of [
      createConnectTransport({ baseUrl: base(), httpVersion: "2", nodeOptions: { ca } }),
      createGrpcTransport({ baseUrl: base(), nodeOptions: { ca } }),
    ]) {
      const client = createClient(SubscriptionService, transport);
      const answer = await client.getSubscriptions(
        { boxId: BOX, userId: USERS.clerk.userId },
        { headers: { authorization: authHeader("admin") } },
      );
      expect(answer.Subscriptions.length).toBeGreaterThan(0);
    }
  });

  it("an answer sent before the request body has arrived reaches the client whole; then the stream is reset with NO_ERROR", async () => {
    // A Connect call declaring a body past the limit is answered at once; its answer has
    // no trailers, so it ends with an empty DATA frame, which the reset must not overtake
    // (the Connect conformance suite lost such answers over TLS). 40 at once, so that the
    // TLS socket pushes back.
    const session = http2.connect(base(), { ca });
    session.on("error", () => undefined);
    try {
      const one = () =>
        new Promise<{ status: unknown; body: string; rstCode: number | undefined }>(
          (resolve, reject) => {
            const req = session.request({
              ":method": "POST",
              ":path": `/${SubscriptionService.typeName}/GetSubscriptions`,
              "content-type": "application/proto",
              "content-length": String(2 * 1024 * 1024),
              authorization: authHeader("admin"),
            });
            let status: unknown;
            const chunks: Buffer[] = [];
            req.on("response", (headers) => {
              status = headers[":status"];
            });
            req.on("data", (chunk: Buffer) => chunks.push(chunk));
            req.on("error", reject);
            req.on("close", () =>
              resolve({
                status,
                body: Buffer.concat(chunks).toString("utf8"),
                rstCode: req.rstCode,
              }),
            );
            // The start of the body, never its end.
            req.write(Buffer.alloc(16 * 1024));
          },
        );
      const answers = await Promise.all(Array.from({ length: 40 }, one));
      for (const answer of answers) {
        expect(answer.status).toBe(429);
        expect(JSON.parse(answer.body)).toMatchObject({ code: "resource_exhausted" });
        expect(answer.rstCode).toBe(http2.constants.NGHTTP2_NO_ERROR);
      }
    } finally {
      session.close();
    }
  });

  it("curl over HTTP/1.1 and HTTP/2, trusting the CA", async () => {
    for (const [flag, version] of [
      ["--http1.1", "1.1"],
      ["--http2", "2"],
    ] as const) {
      const { stdout } = await run("curl", [
        "-sS",
        flag,
        "--cacert",
        file("ca.pem"),
        "-H",
        `Authorization: ${authHeader("admin")}`,
        "-H",
        "Accept: application/json",
        "-w",
        "\n%{http_version} %{http_code}",
        `${base()}${subscriptionsPath}`,
      ]);
      const [body, status] = stdout.split("\n");
      expect(status, flag).toBe(`${version} 200`);
      expect(JSON.parse(body as string).Subscriptions.length).toBeGreaterThan(0);
    }
  });

  it("TLS 1.2 at least: a TLS 1.1 client is refused at the handshake", async () => {
    await expect(
      get("/readyz", { maxVersion: "TLSv1.1", minVersion: "TLSv1" } as https.RequestOptions),
    ).rejects.toThrow();
    expect((await get("/readyz")).status).toBe(200);
  });

  it("a cleartext request gets no answer, and the port still serves TLS", async () => {
    const answered = await fetch(`http://127.0.0.1:${h.port}/readyz`).then(
      () => true,
      () => false,
    );
    expect(answered).toBe(false);
    expect((await get("/readyz")).status).toBe(200);
  });
});

/**
 * One connection that asks /livez over HTTPS/1.1, offering `session` to
 * resume; what it got: whether TLS resumed, and the session to offer next.
 */
function connectOnce(
  version: tls.SecureVersion,
  session: Buffer | undefined,
): Promise<{ reused: boolean; session: Buffer | undefined }> {
  return new Promise((resolve, reject) => {
    let next: Buffer | undefined;
    const socket = tlsConnect({
      host: "127.0.0.1",
      port: h.port,
      ca,
      servername: "localhost",
      minVersion: version,
      maxVersion: version,
      ALPNProtocols: ["http/1.1"],
      session,
    });
    // TLS 1.3 hands its ticket after the handshake; TLS 1.2 has it at once.
    socket.on("session", (data: Buffer) => {
      next = data;
    });
    socket.once("secureConnect", () => {
      socket.write("GET /livez HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    });
    socket.resume();
    socket.once("end", () => {
      resolve({ reused: socket.isSessionReused(), session: next ?? socket.getSession() });
      socket.destroy();
    });
    socket.once("error", reject);
  });
}

describe("TLS sessions resume, whichever of the port's listening sockets a connection reaches", () => {
  // fff96f0 gave each of its 128 listening sockets its own TLS server and ticket keys:
  // `openssl s_client -reconnect` resumed 0 of 5. One TLS server now serves them all.
  it.each(["TLSv1.2", "TLSv1.3"] as const)(
    "%s: twenty reconnects with the saved session, every one resumed",
    async (version) => {
      let { session, reused } = await connectOnce(version, undefined);
      expect(reused).toBe(false);
      const outcomes: boolean[] = [];
      for (let i = 0; i < 20; i++) {
        const next = await connectOnce(version, session);
        outcomes.push(next.reused);
        session = next.session ?? session;
      }
      expect(outcomes).toEqual(Array(20).fill(true));
    },
  );

  it("openssl s_client -reconnect (TLS 1.2, the audit's own check): every reconnect reused", async () => {
    const pending = run(
      "openssl",
      [
        "s_client",
        "-connect",
        `127.0.0.1:${h.port}`,
        "-reconnect",
        "-tls1_2",
        "-CAfile",
        file("ca.pem"),
      ],
      { timeout: 20_000 },
    );
    pending.child.stdin?.end();
    const { stdout } = await pending.catch((error: { stdout?: string }) => ({
      stdout: error.stdout ?? "",
    }));
    const reused = stdout.split("\n").filter((l) => l.startsWith("Reused,")).length;
    expect(reused).toBe(5);
  });
});

describe("certificates rotated in place", () => {
  it("a new pair is served without a restart, and no call is lost while it changes", async () => {
    expect((await get("/readyz")).serial).toBe("1001");
    const results: { status: number; serial: string }[] = [];
    let rotated = false;
    const load = (async () => {
      // Calls on new connections until a while after the rotation.
      for (let i = 0; i < 400 && !(rotated && results.at(-1)?.serial === "2002"); i++) {
        results.push(await get(subscriptionsPath));
      }
    })();
    await new Promise((r) => setTimeout(r, 50));
    use("second");
    rotated = true;
    await load;
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(results.at(-1)?.serial).toBe("2002");
    await h.waitForLog((l) => l.msg === "tls certificate reloaded");
  });

  it("halfway through a rotation (a certificate without its key) the previous pair stays", async () => {
    // The served pair is "second" now; write "first"'s certificate with "second"'s key.
    writeFileSync(file("served.pem"), readFileSync(file("first.pem")));
    await h.waitForLog(
      (l) =>
        l.msg === "tls files changed but do not make a valid certificate: keeping the previous one",
    );
    const again = await get("/readyz");
    expect(again.status).toBe(200);
    expect(again.serial).toBe("2002");
    writeFileSync(file("served.key"), readFileSync(file("first.key")));
    for (let i = 0; i < 100 && (await get("/readyz")).serial !== "1001"; i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect((await get("/readyz")).serial).toBe("1001");
  });
});

describe("mutual TLS (TLS_CLIENT_CA_FILE)", () => {
  it("a client without a certificate the CA signed is refused at the handshake; with one, credentials are still checked", async () => {
    const files = { ...served(), clientCaFile: file("ca.pem") };
    const mutual = await startHarness(undefined, undefined, undefined, {
      tls: { files, material: readTlsMaterial(files), reloadIntervalMs: 60_000 },
    });
    try {
      const url = `https://127.0.0.1:${mutual.port}`;
      const call = (options: https.RequestOptions, headers: Record<string, string>) =>
        new Promise<number>((resolve, reject) => {
          const req = https.request(
            `${url}${subscriptionsPath}`,
            { ca, agent: false, headers, ...options },
            (res) => {
              res.resume();
              resolve(res.statusCode ?? 0);
            },
          );
          req.on("error", reject);
          req.end();
        });
      await expect(call({}, { authorization: authHeader("admin") })).rejects.toThrow();
      const withCert = {
        cert: readFileSync(file("client.pem")),
        key: readFileSync(file("client.key")),
      };
      expect(await call(withCert, { authorization: authHeader("admin") })).toBe(200);
      expect(await call(withCert, {})).toBe(401);
    } finally {
      await mutual.close();
    }
  });
});

describe("bad TLS files", () => {
  it("every problem is listed, not only the first: certificate, key and CA all missing", () => {
    let thrown: unknown;
    try {
      readTlsMaterial({
        certFile: file("none.pem"),
        keyFile: file("none.key"),
        clientCaFile: file("none-ca.pem"),
      });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(TlsFilesError);
    expect((thrown as TlsFilesError).problems).toEqual([
      `TLS_CERT_FILE cannot be read: ${file("none.pem")} (ENOENT)`,
      `TLS_KEY_FILE cannot be read: ${file("none.key")} (ENOENT)`,
      `TLS_CLIENT_CA_FILE cannot be read: ${file("none-ca.pem")} (ENOENT)`,
    ]);
  });

  it("a certificate that is not one and a key that is not one: both said", () => {
    let thrown: unknown;
    try {
      readTlsMaterial({ certFile: file("first.key"), keyFile: file("first.pem") });
    } catch (error) {
      thrown = error;
    }
    const problems = (thrown as TlsFilesError).problems;
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/^TLS_CERT_FILE .* is not a PEM certificate: /);
    expect(problems[1]).toMatch(/^TLS_KEY_FILE .* is not a PEM private key: /);
  });

  it("name the variable and the file: unreadable, not a certificate, not a key, not a pair, not a CA", () => {
    expect(() =>
      readTlsMaterial({ certFile: file("nope.pem"), keyFile: file("first.key") }),
    ).toThrow(new TlsFilesError([`TLS_CERT_FILE cannot be read: ${file("nope.pem")} (ENOENT)`]));
    const escaped = (path: string) => path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    expect(() =>
      readTlsMaterial({ certFile: file("first.key"), keyFile: file("first.key") }),
    ).toThrow(
      new RegExp(`^TLS_CERT_FILE \\(${escaped(file("first.key"))}\\) is not a PEM certificate: `),
    );
    expect(() =>
      readTlsMaterial({ certFile: file("first.pem"), keyFile: file("first.pem") }),
    ).toThrow(
      new RegExp(`^TLS_KEY_FILE \\(${escaped(file("first.pem"))}\\) is not a PEM private key: `),
    );
    expect(() =>
      readTlsMaterial({ certFile: file("first.pem"), keyFile: file("second.key") }),
    ).toThrow(
      new RegExp(
        `^TLS_KEY_FILE \\(${escaped(file("second.key"))}\\) is not the private key of the certificate in TLS_CERT_FILE \\(${escaped(file("first.pem"))}\\)`,
      ),
    );
    expect(() =>
      readTlsMaterial({
        certFile: file("first.pem"),
        keyFile: file("first.key"),
        clientCaFile: file("first.ext"),
      }),
    ).toThrow(
      new RegExp(
        `^TLS_CLIENT_CA_FILE \\(${escaped(file("first.ext"))}\\) is not a PEM certificate`,
      ),
    );
  });
});
