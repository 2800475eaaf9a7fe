/** docs/api.md §5.1 Bearer tokens beside ServiceAuth, on every protocol, with keys made at test start. */
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { create, toBinary } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import {
  type CryptoKey,
  exportJWK,
  generateKeyPair,
  type JWK,
  type JWTPayload,
  SignJWT,
} from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SubscriptionService } from "../../gen/docflow/api/v1/subscriptions_pb";
import { createBearerAuthenticator } from "../../src/auth/bearer-verifier";
import { remoteKeySource } from "../../src/auth/jwks";
import { createLogger } from "../../src/log";
import { authHeader, BOX, ENDED_BOX, OTHER_BOX, USERS, type UserName } from "../support/fixture";
import { type Harness, startHarness, TEST_CACHE, TEST_TIMEOUTS } from "../support/harness";
import { call, PROTOCOLS } from "../support/protocols";

const get = SubscriptionService.method.getSubscriptions;
const req = (boxId: string, userId: string) => create(get.input, { boxId, userId });
const ISSUER = "https://idp.test/realms/docflow";
const AUDIENCE = "docflow-api";
const COOLDOWN_MS = 300;
/**
 * The JWKS cache's clock for the main harness: the cooldown passes only when
 * a test moves it, so no test depends on how fast the machine is.
 */
let keyClock = 0;

interface SigningKey {
  readonly kid: string;
  readonly alg: string;
  readonly privateKey: CryptoKey;
  readonly jwk: JWK;
}

async function makeKey(alg: "RS256" | "ES256", withAlg = true): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const kid = `${alg}-${randomUUID()}-${"t".repeat(40)}`;
  const jwk = { ...(await exportJWK(publicKey)), kid, use: "sig", ...(withAlg ? { alg } : {}) };
  return { kid, alg, privateKey, jwk };
}

/** The issuer's JWKS endpoint: a local server whose document and fetch count the tests control. */
async function startJwksServer(initial: JWK[]) {
  const state = { keys: initial, fetches: 0 };
  const server = http.createServer((_req, res) => {
    state.fetches++;
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ keys: state.keys }));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`;
  return {
    state,
    url,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const issued: string[] = [];
const nowS = () => Math.floor(Date.now() / 1000);

async function sign(
  key: SigningKey,
  claims: JWTPayload & Record<string, unknown>,
  header: Record<string, unknown> = {},
): Promise<string> {
  const token = await new SignJWT({
    iss: ISSUER,
    aud: AUDIENCE,
    iat: nowS(),
    exp: nowS() + 300,
    scope: "openid docflow",
    client_id: "sdk-app",
    ...claims,
  })
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: "at+jwt", ...header })
    .sign(key.privateKey);
  issued.push(token);
  return token;
}

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

let rsa: SigningKey;
let ec: SigningKey;
let rotated: SigningKey;
let jwks: Awaited<ReturnType<typeof startJwksServer>>;
let h: Harness;
let off: Harness;
const allLogs: string[][] = [];

beforeAll(async () => {
  rsa = await makeKey("RS256", false);
  ec = await makeKey("ES256");
  rotated = await makeKey("RS256");
  jwks = await startJwksServer([rsa.jwk, ec.jwk]);
  const log = createLogger("info", (line) => logs.push(line));
  const logs: string[] = [];
  allLogs.push(logs);
  const bearer = createBearerAuthenticator(
    {
      issuer: ISSUER,
      audience: AUDIENCE,
      algorithms: ["RS256", "PS256", "ES256"],
      clockSkewS: 30,
      maxLifetimeS: 86_400,
      userClaim: "sub",
      requiredScope: "docflow",
      allowedClientIds: ["sdk-app", "sdk-app-2"],
    },
    remoteKeySource({ url: jwks.url, cooldownMs: COOLDOWN_MS, log, clock: () => keyClock }),
    log,
  );
  h = await startHarness(undefined, TEST_TIMEOUTS, TEST_CACHE, { bearer });
  allLogs.push(h.logs, logs);
  off = await startHarness();
  allLogs.push(off.logs);
});

afterAll(async () => {
  // Logs of the whole suite carry no token and no part of one.
  const all = allLogs.flat().join("\n");
  for (const token of issued) {
    for (const part of token.split(".")) {
      if (part.length >= 8) expect(all).not.toContain(part);
    }
  }
  await h?.close();
  await off?.close();
  await jwks?.close();
});

const bearer = (token: string) => `Bearer ${token}`;

describe("valid tokens are accepted on every protocol", () => {
  it.each(PROTOCOLS)(
    "%s: RS256 (key without alg), ES256, aud array, lowercase bearer",
    async (protocol) => {
      const tokens = [
        bearer(await sign(rsa, { sub: USERS.admin.userId })),
        bearer(await sign(ec, { sub: USERS.admin.userId, aud: ["other", AUDIENCE] })),
        `bearer ${await sign(ec, { sub: USERS.admin.userId, scope: undefined, scp: ["docflow"], client_id: undefined, azp: "sdk-app-2" }, { typ: undefined })}`,
        bearer(await sign(rsa, { sub: USERS.admin.userId, exp: nowS() - 10 })),
        bearer(await sign(rsa, { sub: USERS.admin.userId, nbf: nowS() + 10 })),
      ];
      for (const header of tokens) {
        const res = await call(h, protocol, get, req(BOX, USERS.admin.userId), header);
        expect(res.ok, protocol).toBe(true);
      }
    },
  );
});

describe("401 invalid_token / invalid_request on every protocol", () => {
  const cases: [string, () => Promise<string>][] = [
    [
      "expired beyond the skew",
      async () => bearer(await sign(rsa, { sub: "u-admin", exp: nowS() - 60 })),
    ],
    [
      "nbf in the future beyond the skew",
      async () => bearer(await sign(rsa, { sub: "u-admin", nbf: nowS() + 60 })),
    ],
    ["wrong aud", async () => bearer(await sign(rsa, { sub: "u-admin", aud: "someone-else" }))],
    [
      "an ID token (aud is the client id)",
      async () => bearer(await sign(rsa, { sub: "u-admin", aud: "sdk-app", typ: "JWT" })),
    ],
    [
      "wrong iss",
      async () => bearer(await sign(rsa, { sub: "u-admin", iss: "https://evil.test" })),
    ],
    [
      "iss with a trailing slash",
      async () => bearer(await sign(rsa, { sub: "u-admin", iss: `${ISSUER}/` })),
    ],
    [
      "client not allowed",
      async () => bearer(await sign(rsa, { sub: "u-admin", client_id: "other-app" })),
    ],
    [
      "alg none",
      async () => {
        const t = `${b64url({ alg: "none", kid: rsa.kid })}.${b64url({ iss: ISSUER, aud: AUDIENCE, sub: "u-admin", exp: nowS() + 60 })}.`;
        return bearer(t);
      },
    ],
    [
      "HS256 signed with the public key",
      async () => {
        const secret = new TextEncoder().encode(JSON.stringify(rsa.jwk));
        const t = await new SignJWT({
          iss: ISSUER,
          aud: AUDIENCE,
          sub: "u-admin",
          exp: nowS() + 60,
        })
          .setProtectedHeader({ alg: "HS256", kid: rsa.kid })
          .sign(secret);
        issued.push(t);
        return bearer(t);
      },
    ],
    [
      "flipped signature bit",
      async () => {
        const [a, b, c = ""] = (await sign(rsa, { sub: "u-admin" })).split(".");
        const sig = Buffer.from(c, "base64url");
        sig[0] = (sig[0] ?? 0) ^ 1;
        return bearer(`${a}.${b}.${sig.toString("base64url")}`);
      },
    ],
    [
      "payload changed to another user",
      async () => {
        const [a, , c] = (await sign(rsa, { sub: "u-clerk" })).split(".");
        const payload = b64url({
          iss: ISSUER,
          aud: AUDIENCE,
          sub: "u-admin",
          exp: nowS() + 60,
          scope: "docflow",
          client_id: "sdk-app",
        });
        return bearer(`${a}.${payload}.${c}`);
      },
    ],
    ["missing user claim", async () => bearer(await sign(rsa, { sub: undefined }))],
    ["empty user claim", async () => bearer(await sign(rsa, { sub: "" }))],
    [
      "non-string user claim",
      async () => bearer(await sign(rsa, { sub: 42 as unknown as string })),
    ],
    [
      "unknown kid",
      async () => bearer(await sign(rsa, { sub: "u-admin" }, { kid: "no-such-kid" })),
    ],
    [
      "a 10 KiB token",
      async () => bearer(await sign(rsa, { sub: "u-admin", pad: "x".repeat(10 * 1024) })),
    ],
    ["a token made of dots", async () => "Bearer a.b"],
    ["a JWE", async () => "Bearer eyJhbGciOiJSU0EtT0FFUCJ9.ZW5j.aXY.Y2lwaGVy.dGFn"],
  ];
  describe.each(PROTOCOLS)("over %s", (protocol) => {
    it.each(cases)("%s", async (_name, header) => {
      const res = await call(h, protocol, get, req(BOX, USERS.admin.userId), await header());
      expect(res).toMatchObject({ ok: false, status: 401, errorCode: "Http.Unauthorized" });
    });
    it.each(["Bearer", "Bearer ", "Bearer a b"])("malformed header %j", async (header) => {
      const res = await call(h, protocol, get, req(BOX, USERS.admin.userId), header);
      expect(res).toMatchObject({ ok: false, status: 401 });
    });
    it("an unknown user is 403 at the box step", async () => {
      const res = await call(
        h,
        protocol,
        get,
        req(BOX, "u-admin"),
        bearer(await sign(rsa, { sub: "u-nobody" })),
      );
      expect(res).toMatchObject({ ok: false, status: 403 });
    });
    it("a missing scope is 403", async () => {
      const res = await call(
        h,
        protocol,
        get,
        req(BOX, "u-admin"),
        bearer(await sign(rsa, { sub: "u-admin", scope: "openid" })),
      );
      expect(res).toMatchObject({ ok: false, status: 403 });
    });
    it("Bearer while Bearer is off: 401, and ServiceAuth still works", async () => {
      const t = bearer(await sign(rsa, { sub: "u-admin" }));
      expect(await call(off, protocol, get, req(BOX, "u-admin"), t)).toMatchObject({ status: 401 });
      expect((await call(off, protocol, get, req(BOX, "u-admin"), authHeader("admin"))).ok).toBe(
        true,
      );
      expect((await call(h, protocol, get, req(BOX, "u-admin"), authHeader("admin"))).ok).toBe(
        true,
      );
    });
  });
});

/** A raw HTTP/1.1 request with exactly the given header lines. */
function raw(
  target: Harness,
  path: string,
  lines: readonly (readonly [string, string])[],
  method = "GET",
  body?: Buffer,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    const r = http.request({ host: "127.0.0.1", port: target.port, method, path, agent: false });
    const auth = lines.filter(([k]) => k === "authorization").map(([, v]) => v);
    for (const [k, v] of lines) if (k !== "authorization") r.setHeader(k, v);
    if (auth.length > 0) r.setHeader("authorization", auth.length === 1 ? (auth[0] ?? "") : auth);
    r.on("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          text: Buffer.concat(chunks).toString(),
        }),
      );
    });
    r.on("error", reject);
    r.end(body);
  });
}

const legacyPath = `/GetSubscriptions?boxId=${BOX}&userId=${USERS.admin.userId}`;
const connectPath = "/docflow.api.v1.SubscriptionService/GetSubscriptions";
const connectBody = Buffer.from(JSON.stringify({ boxId: BOX, userId: USERS.admin.userId }));

describe("WWW-Authenticate and one scheme per request", () => {
  it("no credentials challenges both schemes with no error code (legacy, Connect)", async () => {
    const both = 'ServiceAuth realm="docflow-api", Bearer realm="docflow-api"';
    const l = await raw(h, legacyPath, []);
    expect(l.status).toBe(401);
    expect(l.headers["www-authenticate"]).toBe(both);
    const c = await raw(
      h,
      connectPath,
      [["content-type", "application/json"]],
      "POST",
      connectBody,
    );
    expect(c.status).toBe(401);
    expect(c.headers["www-authenticate"]).toBe(both);
    expect((await raw(off, legacyPath, [])).headers["www-authenticate"]).toBe(
      'ServiceAuth realm="docflow-api"',
    );
  });

  it("a bad token: invalid_token; a malformed header: invalid_request; never token text", async () => {
    const t = await sign(rsa, { sub: "u-admin", exp: nowS() - 600 });
    for (const [path, extra, method, body] of [
      [legacyPath, [], "GET", undefined],
      [connectPath, [["content-type", "application/json"]], "POST", connectBody],
    ] as const) {
      const bad = await raw(h, path, [...extra, ["authorization", bearer(t)]], method, body);
      expect(bad.status).toBe(401);
      expect(bad.headers["www-authenticate"]).toBe(
        'Bearer realm="docflow-api", error="invalid_token"',
      );
      for (const part of t.split(".")) expect(bad.text).not.toContain(part);
      const malformed = await raw(
        h,
        path,
        [...extra, ["authorization", "Bearer a b"]],
        method,
        body,
      );
      expect(malformed.headers["www-authenticate"]).toBe(
        'Bearer realm="docflow-api", error="invalid_request"',
      );
    }
  });

  it("missing scope: 403 insufficient_scope (legacy)", async () => {
    const t = await sign(rsa, { sub: "u-admin", scope: "openid" });
    const res = await raw(h, legacyPath, [["authorization", bearer(t)]]);
    expect(res.status).toBe(403);
    expect(res.headers["www-authenticate"]).toContain('error="insufficient_scope"');
  });

  it("two Authorization lines are 401 with Bearer on or off, whatever the first one is", async () => {
    const t = bearer(await sign(rsa, { sub: "u-admin" }));
    for (const target of [h, off]) {
      for (const lines of [
        [t, t],
        [authHeader("admin"), t],
        [authHeader("admin"), authHeader("admin")],
      ]) {
        const l = await raw(
          target,
          legacyPath,
          lines.map((v) => ["authorization", v] as [string, string]),
        );
        expect(l.status).toBe(401);
        const c = await raw(
          target,
          connectPath,
          [
            ["content-type", "application/json"],
            ...lines.map((v) => ["authorization", v] as [string, string]),
          ],
          "POST",
          connectBody,
        );
        expect(c.status).toBe(401);
      }
    }
    const l = await raw(h, legacyPath, [
      ["authorization", t],
      ["authorization", t],
    ]);
    expect(l.headers["www-authenticate"]).toBe(
      'Bearer realm="docflow-api", error="invalid_request"',
    );
  });
});

describe("two authorization metadata values over gRPC (h2c)", () => {
  // grpc-js refuses to send two values; curl sends both header lines.
  it("are unauthenticated (grpc-status 16), with the challenge in the trailers", async () => {
    const t = bearer(await sign(rsa, { sub: "u-admin" }));
    const body = toBinary(get.input, req(BOX, "u-admin"));
    const frame = Buffer.alloc(5 + body.length);
    frame.writeUInt32BE(body.length, 1);
    Buffer.from(body).copy(frame, 5);
    const file = join(mkdtempSync(join(tmpdir(), "docflow-grpc-")), "request.bin");
    writeFileSync(file, frame);
    // The answer comes before the body is read (docs/security.md), and the stream is then
    // reset with NO_ERROR (RFC 9113 §8.1): curl 7.88 exits 92 on that reset if its upload
    // was still under way, with the whole answer read. The answer is what counts.
    const { stdout } = await promisify(execFile)("curl", [
      "-s",
      "-i",
      "--http2-prior-knowledge",
      "-X",
      "POST",
      "-H",
      "content-type: application/grpc",
      "-H",
      "te: trailers",
      "-H",
      `authorization: ${t}`,
      "-H",
      `authorization: ${t}`,
      "--data-binary",
      `@${file}`,
      `${h.baseUrl}/${get.parent.typeName}/${get.name}`,
    ]).catch((error: { code?: number; stdout?: string }) => {
      if (error.code === 92 && error.stdout) return { stdout: error.stdout };
      throw error;
    });
    expect(stdout).toMatch(/^grpc-status: 16\r?$/m);
    expect(stdout).toMatch(
      /^www-authenticate: Bearer realm="docflow-api", error="invalid_request"\r?$/m,
    );
  });
});

describe("parity: the rights matrix gives the same status with ServiceAuth and Bearer", () => {
  const users: UserName[] = ["admin", "clerk", "colleague", "outsider", "muted"];
  const boxes = [BOX, OTHER_BOX, ENDED_BOX, "b0000000-0000-4000-8000-00000000ffff", ""];
  const targets = [USERS.admin.userId, USERS.clerk.userId, "u-nobody", ""];
  it.each(PROTOCOLS)("%s", async (protocol) => {
    const mismatches: string[] = [];
    const seen = new Set<number>();
    for (const user of users) {
      const token = bearer(await sign(rsa, { sub: USERS[user].userId }));
      for (const box of boxes) {
        for (const target of targets) {
          const a = await call(h, protocol, get, req(box, target), authHeader(user));
          const b = await call(h, protocol, get, req(box, target), token);
          const status = (r: typeof a) => (r.ok ? 200 : r.status);
          seen.add(status(a));
          if (status(a) !== status(b))
            mismatches.push(`${user} ${box} ${target}: ${status(a)} vs ${status(b)}`);
        }
      }
    }
    expect(mismatches).toEqual([]);
    // The matrix reaches every outcome of the order of checks, not one 401 everywhere.
    expect([...seen].sort()).toEqual([200, 400, 402, 403, 404]);
  });
});

describe("JWKS: fetching, caching, cooldown, rotation, outage", () => {
  it("a burst of tokens with random kids makes one fetch; a rotated key is picked up after the cooldown", async () => {
    keyClock += COOLDOWN_MS;
    const before = jwks.state.fetches;
    const burst = await Promise.all(
      Array.from({ length: 20 }, async () =>
        call(
          h,
          "connect-binary",
          get,
          req(BOX, "u-admin"),
          bearer(await sign(rsa, { sub: "u-admin" }, { kid: randomUUID() })),
        ),
      ),
    );
    for (const res of burst) expect(res).toMatchObject({ status: 401 });
    expect(jwks.state.fetches - before).toBe(1);

    jwks.state.keys = [rsa.jwk, ec.jwk, rotated.jwk];
    const t = bearer(await sign(rotated, { sub: "u-admin" }));
    expect(await call(h, "legacy-json", get, req(BOX, "u-admin"), t)).toMatchObject({
      status: 401,
    });
    // Still within the cooldown: no second fetch, still 401.
    keyClock += COOLDOWN_MS - 1;
    expect(await call(h, "legacy-json", get, req(BOX, "u-admin"), t)).toMatchObject({
      status: 401,
    });
    expect(jwks.state.fetches - before).toBe(1);
    keyClock += 1;
    expect((await call(h, "legacy-json", get, req(BOX, "u-admin"), t)).ok).toBe(true);
    expect(jwks.state.fetches - before).toBe(2);
    expect((await call(h, "grpc", get, req(BOX, "u-admin"), t)).ok).toBe(true);
  });

  it("issuer unreachable with no cached key: 500 / unavailable, logged once per cooldown, never 401", async () => {
    const logs: string[] = [];
    allLogs.push(logs);
    const log = createLogger("info", (line) => logs.push(line));
    const dead = http.createServer();
    await new Promise<void>((r) => dead.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(dead.address() as AddressInfo).port}/jwks`;
    await new Promise<void>((r) => dead.close(() => r()));
    const down = await startHarness(undefined, TEST_TIMEOUTS, TEST_CACHE, {
      bearer: createBearerAuthenticator(
        {
          issuer: ISSUER,
          audience: AUDIENCE,
          algorithms: ["RS256"],
          clockSkewS: 0,
          maxLifetimeS: 86_400,
          userClaim: "sub",
        },
        remoteKeySource({ url, cooldownMs: 60_000, log }),
        log,
      ),
    });
    allLogs.push(down.logs);
    try {
      const t = bearer(await sign(rsa, { sub: "u-admin" }));
      for (const protocol of PROTOCOLS) {
        const res = await call(down, protocol, get, req(BOX, "u-admin"), t);
        expect(res, protocol).toMatchObject({ ok: false, status: 500 });
      }
      const rpc = await call(down, "grpc", get, req(BOX, "u-admin"), t);
      expect(rpc.ok).toBe(false);
      expect(logs.filter((l) => l.includes("JWKS fetch failed"))).toHaveLength(1);
    } finally {
      await down.close();
    }
  });
});

describe("WWW-Authenticate over gRPC (trailers) and on ServiceAuth failures", () => {
  const grpcChallenge = (target: Harness, authorization?: string) =>
    new Promise<string | undefined>((resolve) => {
      const client = new grpc.Client(`127.0.0.1:${target.port}`, grpc.credentials.createInsecure());
      const metadata = new grpc.Metadata();
      if (authorization) metadata.set("authorization", authorization);
      client.makeUnaryRequest(
        `/${get.parent.typeName}/${get.name}`,
        (m: ReturnType<typeof req>) => Buffer.from(toBinary(get.input, m)),
        (b: Buffer) => b,
        req(BOX, "u-admin"),
        metadata,
        (error) => {
          client.close();
          resolve(error?.metadata?.get("www-authenticate")[0]?.toString());
        },
      );
    });

  it("every 401 names its scheme on gRPC", async () => {
    expect(await grpcChallenge(h)).toBe(
      'ServiceAuth realm="docflow-api", Bearer realm="docflow-api"',
    );
    expect(await grpcChallenge(h, "Bearer a.b")).toBe(
      'Bearer realm="docflow-api", error="invalid_token"',
    );
    expect(await grpcChallenge(h, "ServiceAuth svcauth_token=x")).toBe(
      'ServiceAuth realm="docflow-api"',
    );
  });

  it("a refused ServiceAuth header challenges ServiceAuth on the legacy path", async () => {
    const res = await raw(h, legacyPath, [["authorization", "ServiceAuth svcauth_token=x"]]);
    expect(res.status).toBe(401);
    expect(res.headers["www-authenticate"]).toBe('ServiceAuth realm="docflow-api"');
  });
});
