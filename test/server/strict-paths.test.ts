/** The request target is matched exactly as sent: anything that is not a known path is a 404 and runs nothing. */
import net from "node:net";
import * as grpc from "@grpc/grpc-js";
import { beforeEach, describe, expect, it } from "vitest";
import { loadFixture } from "../../src/fixtures/load";
import { authHeader, BOX, baseFixture, USERS } from "../support/fixture";
import { legacy, useHarness } from "../support/harness";

const MESSAGE = "m-deleted";
const fixture = () => {
  const base = baseFixture();
  const [box, ...rest] = base.boxes;
  return {
    ...base,
    boxes: [
      {
        ...box,
        employees: [
          ...(box?.employees ?? []).filter((e) => e.userId !== USERS.admin.userId),
          {
            userId: USERS.admin.userId,
            isAdministrator: true,
            canManageCounteragents: true,
            canDeleteRestoreDocuments: true,
            documentAccessLevel: "AllDocuments",
          },
        ],
        messages: [{ messageId: MESSAGE, isDeleted: true, documents: [] }],
      },
      ...rest,
    ],
  };
};
const h = useHarness(fixture);
beforeEach(async () => {
  await h.db.collection("messages").deleteMany({});
  await loadFixture(h.db, fixture());
});

/** Sends a request target byte for byte, as curl --path-as-is would. */
function raw(target: string, method = "POST"): Promise<{ status: number; head: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(h.port, "127.0.0.1");
    let text = "";
    socket.on("data", (c: Buffer) => {
      text += c.toString("latin1");
      const end = text.indexOf("\r\n\r\n");
      if (end >= 0) {
        socket.destroy();
        resolve({ status: Number(text.slice(9, 12)), head: text.slice(0, end) });
      }
    });
    socket.on("error", reject);
    socket.write(
      `${method} ${target} HTTP/1.1\r\nHost: x\r\nAuthorization: ${authHeader("admin")}\r\nContent-Length: 0\r\n\r\n`,
    );
  });
}

const isStillDeleted = async () =>
  (await h.db.collection("messages").findOne({ boxId: BOX, messageId: MESSAGE }))?.isDeleted;

describe("strict request targets", () => {
  const query = `boxId=${BOX}&messageId=${MESSAGE}`;

  it("the exact legacy path works (the control case)", async () => {
    expect((await raw(`/Restore?${query}`)).status).toBe(200);
    expect(await isStillDeleted()).toBe(false);
  });

  it.each([
    ["//evil.example/Restore", `//evil.example/Restore?${query}`],
    ["//[", "//["],
    ["/Restore/", `/Restore/?${query}`],
    ["/%52estore", `/%52estore?${query}`],
    ["/Restore%20", `/Restore%20?${query}`],
    ["/./Restore", `/./Restore?${query}`],
    ["/x/../Restore", `/x/../Restore?${query}`],
    ["absolute form", `http://127.0.0.1/Restore?${query}`],
    ["/Restore;x", `/Restore;x?${query}`],
  ])("%s: 404 Http.NotFound, nothing runs", async (_name, target) => {
    const res = await raw(target);
    expect(res.status).toBe(404);
    expect(res.head).toMatch(/x-service-errorcode: Http\.NotFound/i);
    expect(await isStillDeleted()).toBe(true);
  });

  it("the log records the path as it was sent, not a reinterpretation", async () => {
    await raw(`//evil.example/Restore?${query}`);
    const line = h.logs.map((l) => JSON.parse(l)).findLast((l) => l.msg === "request");
    expect(line).toMatchObject({ path: "//evil.example/Restore", status: 404 });
    expect(line.route).toBeUndefined();
  });
});

describe("answers of the front", () => {
  it("HEAD on an RPC path: 405 with Allow (POST for a write, POST and GET for a read)", async () => {
    const write = await legacy(h, {
      method: "HEAD",
      path: "/docflow.api.v1.SubscriptionService/UpdateSubscriptions",
    });
    expect(write.status).toBe(405);
    expect(write.headers.allow).toBe("POST");
    const read = await legacy(h, {
      method: "HEAD",
      path: "/docflow.api.v1.SubscriptionService/GetSubscriptions",
    });
    expect(read.status).toBe(405);
    expect(read.headers.allow).toBe("POST, GET");
  });

  it("Accept: application/problem+json gets problem+json errors", async () => {
    const res = await legacy(h, {
      method: "GET",
      path: "/NoSuchOperation",
      headers: { accept: "application/problem+json" },
    });
    expect(res.status).toBe(404);
    expect(res.headers["content-type"]).toBe("application/problem+json");
    expect(JSON.parse(res.text)).toMatchObject({ status: 404, errorCode: "Http.NotFound" });
  });

  it("a 404 under /docs carries X-Service-ErrorCode", async () => {
    const res = await legacy(h, { method: "GET", path: "/docs/nope.js" });
    expect(res.status).toBe(404);
    expect(res.headers["x-service-errorcode"]).toBe("Http.NotFound");
  });

  it("a gRPC call of an unknown method: 200, grpc-status 12 (UNIMPLEMENTED), naming the method", async () => {
    const client = new grpc.Client(`127.0.0.1:${h.port}`, grpc.credentials.createInsecure());
    const error = await new Promise<grpc.ServiceError | null>((resolve) =>
      client.makeUnaryRequest(
        "/docflow.api.v1.NoSuchService/Nope",
        (b: Buffer) => b,
        (b: Buffer) => b,
        Buffer.alloc(0),
        (e) => resolve(e),
      ),
    );
    client.close();
    expect(error?.code).toBe(grpc.status.UNIMPLEMENTED);
    expect(error?.details).toContain("/docflow.api.v1.NoSuchService/Nope");
  });

  it("a Connect call of an unknown procedure gets Connect's 404", async () => {
    const res = await legacy(h, {
      method: "POST",
      path: "/docflow.api.v1.NoSuchService/Nope",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(res.status).toBe(404);
  });
});
