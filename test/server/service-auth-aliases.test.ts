/**
 * docs/api.md §5, SERVICE_AUTH_ALIASES: an SDK's own spelling of the
 * ServiceAuth header (the Java SDK's `DiadocAuth ddauth_api_client_id=…,ddauth_token=…`)
 * is read as ServiceAuth on every protocol when configured, and refused when
 * not; a 401 names every scheme the service takes, on every protocol.
 */
import http from "node:http";
import { create, toBinary } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SubscriptionService } from "../../gen/docflow/api/v1/subscriptions_pb";
import { createBearerAuthenticator } from "../../src/auth/bearer-verifier";
import { fileKeySource } from "../../src/auth/jwks";
import { createLogger } from "../../src/log";
import {
  authHeader,
  BOX,
  DISABLED_KEY,
  ENDED_BOX,
  KEY,
  OTHER_BOX,
  SDK_ALIASES,
  sdkAuthHeader,
  USERS,
  type UserName,
} from "../support/fixture";
import { type Harness, legacy, startHarness, TEST_CACHE, TEST_TIMEOUTS } from "../support/harness";
import { call, type Outcome, PROTOCOLS, type Protocol } from "../support/protocols";

const get = SubscriptionService.method.getSubscriptions;
const req = (boxId: string, userId: string) => create(get.input, { boxId, userId });
const REALM = 'realm="docflow-api"';

/** SERVICE_AUTH_ALIASES=DiadocAuth:ddauth. */
let on: Harness;
/** The same, with Bearer tokens on as well. */
let withBearer: Harness;
/** Neither: the default. */
let off: Harness;

beforeAll(async () => {
  const log = createLogger("silent", () => undefined);
  // Bearer on, with keys no token here is signed with: only the words of the 401s matter.
  const bearer = createBearerAuthenticator(
    {
      issuer: "https://idp.test",
      audience: "docflow-api",
      algorithms: ["RS256"],
      clockSkewS: 0,
      maxLifetimeS: 86_400,
      userClaim: "sub",
    },
    fileKeySource({ keys: [] }),
    log,
  );
  [on, withBearer, off] = await Promise.all([
    startHarness(undefined, TEST_TIMEOUTS, TEST_CACHE, { serviceAuthAliases: SDK_ALIASES }),
    startHarness(undefined, TEST_TIMEOUTS, TEST_CACHE, {
      serviceAuthAliases: SDK_ALIASES,
      bearer,
    }),
    startHarness(),
  ]);
});

afterAll(async () => {
  await Promise.all([on?.close(), withBearer?.close(), off?.close()]);
});

/** What a refusal tells the caller, the same on every protocol. */
const refusalOf = (outcome: Outcome<unknown>) =>
  outcome.ok
    ? outcome
    : { status: outcome.status, errorCode: outcome.errorCode, message: outcome.message };

describe("with SERVICE_AUTH_ALIASES=DiadocAuth:ddauth, the SDK's spelling is ServiceAuth", () => {
  describe.each(PROTOCOLS)("over %s", (protocol) => {
    it("the SDK's header, byte for byte as it sends it, is accepted", async () => {
      const res = await call(
        on,
        protocol,
        get,
        req(BOX, USERS.admin.userId),
        sdkAuthHeader("admin"),
      );
      expect(res.ok).toBe(true);
    });

    it("and read the same leniently: any case, spaces, quotes, a base64 token", async () => {
      for (const [user, header] of [
        ["admin", `diadocauth DDAUTH_API_CLIENT_ID=${KEY}, ddauth_token=${USERS.admin.token}`],
        ["admin", `DiadocAuth ddauth_token="${USERS.admin.token}" ,ddauth_api_client_id=${KEY}`],
        ["b64", sdkAuthHeader("b64")],
      ] as const) {
        const res = await call(on, protocol, get, req(BOX, USERS[user].userId), header);
        expect(res.ok, header).toBe(true);
      }
    });

    it("the canonical spelling keeps working beside it", async () => {
      const res = await call(on, protocol, get, req(BOX, USERS.admin.userId), authHeader("admin"));
      expect(res.ok).toBe(true);
    });

    it("wrong credentials under the alias are the same 401 as under ServiceAuth", async () => {
      for (const [user, key] of [
        ["admin", "no-such-key"],
        ["admin", DISABLED_KEY],
        ["expired", KEY],
      ] as const) {
        const sdk = await call(
          on,
          protocol,
          get,
          req(BOX, USERS[user].userId),
          sdkAuthHeader(user, key),
        );
        const own = await call(
          on,
          protocol,
          get,
          req(BOX, USERS[user].userId),
          authHeader(user, key),
        );
        expect(sdk).toMatchObject({ ok: false, status: 401, errorCode: "Http.Unauthorized" });
        expect(refusalOf(sdk)).toEqual(refusalOf(own));
      }
    });

    it("a header mixing the two spellings, or without its token, is a 401", async () => {
      for (const [header, message] of [
        [
          `DiadocAuth ddauth_api_client_id=${KEY},svcauth_token=${USERS.admin.token}`,
          "the Authorization header mixes spellings: svcauth_token with the DiadocAuth scheme",
        ],
        [
          `ServiceAuth svcauth_api_client_id=${KEY}, ddauth_token=${USERS.admin.token}`,
          "the Authorization header mixes spellings: ddauth_token with the ServiceAuth scheme",
        ],
        // What the SDK sends before AuthManager.setCredentials gave it a token.
        [
          `DiadocAuth ddauth_api_client_id=${KEY}`,
          "the Authorization header needs ddauth_api_client_id and ddauth_token",
        ],
      ]) {
        const res = await call(on, protocol, get, req(BOX, USERS.admin.userId), header);
        expect(res, header).toMatchObject({ ok: false, status: 401, message });
      }
    });
  });

  it.each(PROTOCOLS)(
    "%s: every status of the rights matrix is the same in both spellings",
    async (protocol) => {
      const users: UserName[] = ["admin", "clerk", "outsider"];
      const boxes = [BOX, OTHER_BOX, ENDED_BOX, ""];
      const targets = [USERS.admin.userId, "u-nobody"];
      const mismatches: string[] = [];
      const seen = new Set<number>();
      for (const user of users) {
        for (const box of boxes) {
          for (const target of targets) {
            const status = (r: Outcome<unknown>) => (r.ok ? 200 : r.status);
            const a = status(await call(on, protocol, get, req(box, target), authHeader(user)));
            const b = status(await call(on, protocol, get, req(box, target), sdkAuthHeader(user)));
            seen.add(a);
            if (a !== b) mismatches.push(`${user} ${box} ${target}: ${a} vs ${b}`);
          }
        }
      }
      expect(mismatches).toEqual([]);
      // The matrix reaches the order of checks past authentication, not one status everywhere.
      expect([...seen].sort()).toEqual([200, 400, 402, 403, 404]);
    },
  );
});

describe("without SERVICE_AUTH_ALIASES, the SDK's spelling is refused as before", () => {
  it.each(PROTOCOLS)("%s: 401, naming ServiceAuth alone", async (protocol) => {
    const res = await call(
      off,
      protocol,
      get,
      req(BOX, USERS.admin.userId),
      sdkAuthHeader("admin"),
    );
    expect(res).toMatchObject({
      ok: false,
      status: 401,
      errorCode: "Http.Unauthorized",
      message: "the Authorization header must use the ServiceAuth scheme",
    });
    expect(await challengeOver(off, protocol, sdkAuthHeader("admin"))).toBe(`ServiceAuth ${REALM}`);
    expect(await challengeOver(off, protocol)).toBe(`ServiceAuth ${REALM}`);
  });
});

/** WWW-Authenticate of a refused GetSubscriptions, where each protocol carries it. */
async function challengeOver(
  target: Harness,
  protocol: Protocol,
  authorization?: string,
): Promise<string | undefined> {
  const headers: Record<string, string> = authorization ? { authorization } : {};
  const request = req(BOX, USERS.admin.userId);
  if (protocol === "legacy-protobuf" || protocol === "legacy-json") {
    const res = await legacy(target, {
      method: "GET",
      path: `/GetSubscriptions?boxId=${BOX}&userId=${USERS.admin.userId}`,
      headers: protocol === "legacy-json" ? { ...headers, accept: "application/json" } : headers,
    });
    expect(res.status).toBe(401);
    const value = res.headers["www-authenticate"];
    return Array.isArray(value) ? value.join("\n") : value;
  }
  if (protocol === "grpc") {
    // A real gRPC client: the challenge comes in the trailers.
    const client = new grpc.Client(`127.0.0.1:${target.port}`, grpc.credentials.createInsecure());
    const metadata = new grpc.Metadata();
    if (authorization) metadata.set("authorization", authorization);
    return new Promise((resolve) => {
      client.makeUnaryRequest(
        `/${get.parent.typeName}/${get.name}`,
        (m: typeof request) => Buffer.from(toBinary(get.input, m)),
        (b: Buffer) => b,
        request,
        metadata,
        (error) => {
          client.close();
          expect(error?.code).toBe(grpc.status.UNAUTHENTICATED);
          const values = error?.metadata?.get("www-authenticate") ?? [];
          resolve(values.length === 1 ? String(values[0]) : values.join("\n"));
        },
      );
    });
  }
  const transport =
    protocol === "grpc-web"
      ? createGrpcWebTransport({ baseUrl: target.baseUrl, httpVersion: "1.1" })
      : createConnectTransport({
          baseUrl: target.baseUrl,
          httpVersion: "1.1",
          useBinaryFormat: protocol === "connect-binary",
        });
  try {
    await transport.unary(get, undefined, undefined, headers, request);
  } catch (error) {
    return ConnectError.from(error).metadata.get("www-authenticate") ?? undefined;
  }
  throw new Error(`${protocol}: not refused`);
}

describe("a 401 names the schemes the service takes, on every protocol", () => {
  const serviceAuthFamily = `ServiceAuth ${REALM}, DiadocAuth ${REALM}`;
  const everyScheme = `${serviceAuthFamily}, Bearer ${REALM}`;

  describe.each(PROTOCOLS)("over %s", (protocol) => {
    it("no credentials: ServiceAuth and DiadocAuth; Bearer too when it is on", async () => {
      expect(await challengeOver(on, protocol)).toBe(serviceAuthFamily);
      expect(await challengeOver(withBearer, protocol)).toBe(everyScheme);
    });

    it("a scheme the service does not take: every scheme, in the challenge and the message", async () => {
      const header = "Basic dXNlcjpwYXNz";
      expect(await challengeOver(on, protocol, header)).toBe(serviceAuthFamily);
      expect(await call(on, protocol, get, req(BOX, USERS.admin.userId), header)).toMatchObject({
        status: 401,
        message: "the Authorization header must use the ServiceAuth (or DiadocAuth) scheme",
      });
      expect(await challengeOver(withBearer, protocol, header)).toBe(everyScheme);
      expect(
        await call(withBearer, protocol, get, req(BOX, USERS.admin.userId), header),
      ).toMatchObject({
        status: 401,
        message:
          "the Authorization header must use the ServiceAuth (or DiadocAuth) scheme or Bearer",
      });
    });

    it("refused credentials in either spelling: the same challenge, the ServiceAuth family's", async () => {
      for (const target of [on, withBearer]) {
        for (const header of [
          sdkAuthHeader("admin", "no-such-key"),
          authHeader("admin", "no-such-key"),
        ]) {
          expect(await challengeOver(target, protocol, header), header).toBe(serviceAuthFamily);
        }
      }
    });
  });

  it("two Authorization lines: 401, challenging the ServiceAuth family (legacy)", async () => {
    const res = await new Promise<{ status: number; challenge: unknown }>((resolve, reject) => {
      const r = http.request({
        host: "127.0.0.1",
        port: on.port,
        method: "GET",
        path: `/GetSubscriptions?boxId=${BOX}&userId=${USERS.admin.userId}`,
        agent: false,
      });
      r.setHeader("authorization", [sdkAuthHeader("admin"), sdkAuthHeader("admin")]);
      r.on("response", (response) => {
        response.resume();
        response.on("end", () =>
          resolve({
            status: response.statusCode ?? 0,
            challenge: response.headers["www-authenticate"],
          }),
        );
      });
      r.on("error", reject);
      r.end();
    });
    expect(res).toEqual({ status: 401, challenge: serviceAuthFamily });
  });
});
