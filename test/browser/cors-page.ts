/**
 * The script of the page test/browser/cors.test.ts serves from a second
 * origin: it calls the service with the Connect-ES web client over Connect
 * and gRPC-Web, and with fetch() on a legacy path, and reports what it saw.
 */
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-web";
import { SubscriptionService } from "../../gen/docflow/api/v1/subscriptions_pb";

interface PageInput {
  readonly api: string;
  readonly boxId: string;
  readonly userId: string;
  readonly admin: string;
  readonly stranger: string;
}

async function run(input: PageInput): Promise<Record<string, unknown>> {
  const request = { boxId: input.boxId, userId: input.userId };
  const out: Record<string, unknown> = {};
  for (const [name, transport] of [
    ["connect", createConnectTransport({ baseUrl: input.api })],
    ["grpcWeb", createGrpcWebTransport({ baseUrl: input.api })],
  ] as const) {
    const client = createClient(SubscriptionService, transport);
    const ok = await client.getSubscriptions(request, {
      headers: { authorization: input.admin },
    });
    out[`${name}Subscriptions`] = ok.Subscriptions.length;
    try {
      await client.getSubscriptions(request, { headers: { authorization: input.stranger } });
      out[`${name}Error`] = "none";
    } catch (error) {
      out[`${name}Error`] = Code[ConnectError.from(error).code];
    }
  }
  const legacy = await fetch(
    `${input.api}/GetSubscriptions?boxId=${input.boxId}&userId=${input.userId}`,
    { headers: { authorization: input.stranger, accept: "application/json" } },
  );
  out.legacyStatus = legacy.status;
  out.legacyErrorCode = legacy.headers.get("x-service-errorcode");
  out.legacyRequestId = legacy.headers.get("x-request-id") !== null;
  return out;
}

const w = globalThis as unknown as { docflowInput: PageInput; docflowResult?: unknown };
run(w.docflowInput).then(
  (result) => {
    w.docflowResult = result;
  },
  (error: unknown) => {
    w.docflowResult = { failed: String(error) };
  },
);
