/** gRPC server reflection, as tools use it: buf curl lists and calls with no local schema and no credentials. */
import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { authHeader, BOX, USERS } from "../support/fixture";
import { useHarness } from "../support/harness";

const run = promisify(execFile);
const BUF = new URL("../../node_modules/.bin/buf", import.meta.url).pathname;
const h = useHarness();

const bufCurl = (...args: string[]) =>
  run(BUF, ["curl", "--protocol", "grpc", "--http2-prior-knowledge", ...args], { timeout: 60_000 });

describe("server reflection", () => {
  it.each(["grpc-v1", "grpc-v1alpha"])(
    "lists every service and method over %s",
    async (version) => {
      const { stdout } = await bufCurl("--reflect-protocol", version, "--list-methods", h.baseUrl);
      const methods = stdout.trim().split("\n");
      expect(methods).toEqual(
        expect.arrayContaining([
          "docflow.api.v1.SubscriptionService/GetSubscriptions",
          "docflow.api.v1.SubscriptionService/UpdateSubscriptions",
          "docflow.api.v1.DocumentService/Restore",
          "docflow.api.v1.DocumentService/Delete",
          "docflow.api.v1.CounteragentService/GetCounteragentsFromGroup",
          "docflow.api.v1.CounteragentService/CreateCounteragentGroup",
          "grpc.health.v1.Health/Check",
          "grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
          "grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
        ]),
      );
    },
  );

  it("calls an RPC with the schema it got by reflection (no --schema), JSON in and out", async () => {
    const headers = join(mkdtempSync(join(tmpdir(), "docflow-buf-")), "headers.txt");
    // buf curl splits -H values on commas, so the ServiceAuth header goes in a file.
    writeFileSync(headers, `Authorization: ${authHeader("admin")}\n`);
    const { stdout } = await bufCurl(
      "-H",
      `@${headers}`,
      "-d",
      JSON.stringify({ boxId: BOX, userId: USERS.clerk.userId }),
      `${h.baseUrl}/docflow.api.v1.SubscriptionService/GetSubscriptions`,
    );
    const answer = JSON.parse(stdout) as { Subscriptions: { Id: string; IsSubscribed: boolean }[] };
    expect(answer.Subscriptions).toHaveLength(10);
    expect(answer.Subscriptions.find((s) => s.Id === "News")?.IsSubscribed).toBe(false);
  });

  it("lists the services by name", async () => {
    const { stdout } = await bufCurl("--list-services", h.baseUrl);
    expect(stdout.split("\n")).toContain("docflow.api.v1.CounteragentService");
  });
});
