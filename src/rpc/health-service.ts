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
import { depsOf, shutdownKey } from "./context";

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
  const healthy = await depsOf(ctx).healthy();
  return create(HealthCheckResponseSchema, {
    status: healthy ? Status.SERVING : Status.NOT_SERVING,
  });
}

export const healthService: ServiceImpl<typeof Health> = {
  check: (req, ctx) => status(req.service, ctx),
  async *watch(req, ctx) {
    // One answer, then the stream stays open until the client leaves or the server shuts down.
    yield await status(req.service, ctx);
    const shutdown = ctx.values.get(shutdownKey);
    await new Promise<void>((resolve) => {
      if (ctx.signal.aborted || shutdown.aborted) return resolve();
      ctx.signal.addEventListener("abort", () => resolve(), { once: true });
      shutdown.addEventListener("abort", () => resolve(), { once: true });
    });
    if (shutdown.aborted) {
      yield create(HealthCheckResponseSchema, { status: Status.NOT_SERVING });
    }
  },
};

export { Health };
