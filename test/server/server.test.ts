/** docs/api.md §3: one port serves HTTP/1.1 and cleartext HTTP/2, for every protocol. */
import http2 from "node:http2";
import { create, fromBinary } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { describe, expect, it } from "vitest";
import { SubscriptionService } from "../../gen/docflow/api/v1/subscriptions_pb";
import { EmployeeSubscriptionsSchema } from "../../gen/docflow/legacy/subscriptions_pb";
import { authHeader, BOX, USERS } from "../support/fixture";
import { useHarness } from "../support/harness";

const h = useHarness();

const request = create(SubscriptionService.method.getSubscriptions.input, {
  boxId: BOX,
  userId: USERS.admin.userId,
});
const headers = { authorization: authHeader("admin") };

describe("one port, HTTP/1.1 and h2c", () => {
  it.each([
    [
      "Connect JSON over h2c",
      () => createConnectTransport({ baseUrl: h.baseUrl, httpVersion: "2" }),
    ],
    [
      "Connect binary over h2c",
      () => createConnectTransport({ baseUrl: h.baseUrl, httpVersion: "2", useBinaryFormat: true }),
    ],
    ["gRPC-Web over h2c", () => createGrpcWebTransport({ baseUrl: h.baseUrl, httpVersion: "2" })],
    [
      "Connect JSON over HTTP/1.1",
      () => createConnectTransport({ baseUrl: h.baseUrl, httpVersion: "1.1" }),
    ],
  ])("%s", async (_name, transport) => {
    const client = createClient(SubscriptionService, transport());
    const res = await client.getSubscriptions(request, { headers });
    expect(res.Subscriptions).toHaveLength(10);
  });

  it("legacy paths over h2c", async () => {
    const session = http2.connect(h.baseUrl);
    try {
      const { status, body } = await new Promise<{ status: number; body: Buffer }>(
        (resolve, reject) => {
          const stream = session.request({
            ":method": "GET",
            ":path": `/GetSubscriptions?boxId=${BOX}&userId=${USERS.admin.userId}`,
            ...headers,
          });
          const chunks: Buffer[] = [];
          let status = 0;
          stream.on("response", (h2) => {
            status = Number(h2[":status"]);
          });
          stream.on("data", (c: Buffer) => chunks.push(c));
          stream.on("end", () => resolve({ status, body: Buffer.concat(chunks) }));
          stream.on("error", reject);
          stream.end();
        },
      );
      expect(status).toBe(200);
      expect(fromBinary(EmployeeSubscriptionsSchema, body).Subscriptions).toHaveLength(10);
    } finally {
      session.close();
    }
  });
});
