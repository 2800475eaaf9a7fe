/** grpc.health.v1: SERVING while the database answers and the service is not stopping. */
import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  Health,
  type HealthCheckResponse,
  HealthCheckResponseSchema,
  HealthCheckResponse_ServingStatus as Status,
} from "../../gen/grpc/health/v1/health_pb";
import { appOf } from "./context";

/** "" is the whole server; the others are our services. */
const KNOWN_SERVICES: ReadonlySet<string> = new Set([
  "",
  "docflow.api.v1.DocumentService",
  "docflow.api.v1.CounteragentService",
  "docflow.api.v1.SubscriptionService",
]);

async function status(service: string, ctx: HandlerContext): Promise<HealthCheckResponse> {
  if (!KNOWN_SERVICES.has(service)) {
    throw new ConnectError(`unknown service "${service.slice(0, 100)}"`, Code.NotFound);
  }
  const healthy = await appOf(ctx).healthy();
  return create(HealthCheckResponseSchema, {
    status: healthy ? Status.SERVING : Status.NOT_SERVING,
  });
}

export const healthService: ServiceImpl<typeof Health> = {
  check: (req, ctx) => status(req.service, ctx),
  async *watch(req, ctx) {
    // One answer, then the stream stays open until the client or the server ends it.
    yield await status(req.service, ctx);
    await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve()));
  },
};

export { Health };
