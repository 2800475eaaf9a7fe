/** grpc.health.v1: SERVING while the database answers and the service is not stopping. */
import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  Health,
  type HealthCheckResponse,
  HealthCheckResponseSchema,
  HealthListResponseSchema,
  HealthCheckResponse_ServingStatus as Status,
} from "../../gen/grpc/health/v1/health_pb";
import { SHUTDOWN } from "../call/context";
import { depsOf } from "./context";

async function status(
  known: ReadonlySet<string>,
  service: string,
  ctx: HandlerContext,
): Promise<HealthCheckResponse> {
  if (service !== "" && !known.has(service)) {
    throw new ConnectError(`unknown service "${service.slice(0, 100)}"`, Code.NotFound);
  }
  const healthy = await depsOf(ctx).healthy();
  return create(HealthCheckResponseSchema, {
    status: healthy ? Status.SERVING : Status.NOT_SERVING,
  });
}

/** Health of the whole server ("") and of each of `services` by name. */
export function createHealthService(services: ReadonlySet<string>): ServiceImpl<typeof Health> {
  return {
    check: (req, ctx) => status(services, req.service, ctx),
    // Every name Check knows, "" included, from one look at the database.
    list: async (_req, ctx) => {
      const healthy = await depsOf(ctx).healthy();
      const one = () =>
        create(HealthCheckResponseSchema, {
          status: healthy ? Status.SERVING : Status.NOT_SERVING,
        });
      return create(HealthListResponseSchema, {
        statuses: Object.fromEntries(["", ...services].map((name) => [name, one()])),
      });
    },
    watch: (req, ctx) => watch(services, req.service, ctx),
  };
}

async function* watch(
  services: ReadonlySet<string>,
  service: string,
  ctx: HandlerContext,
): AsyncIterable<HealthCheckResponse> {
  // One answer, then the stream stays open until the client leaves, the
  // deadline passes or the server shuts down (connect's shutdownSignal aborts
  // the call's signal with SHUTDOWN).
  yield await status(services, service, ctx);
  await new Promise<void>((resolve) => {
    if (ctx.signal.aborted) return resolve();
    ctx.signal.addEventListener("abort", () => resolve(), { once: true });
  });
  if (ctx.signal.reason === SHUTDOWN) {
    yield create(HealthCheckResponseSchema, { status: Status.NOT_SERVING });
  }
}

export { Health };
