/**
 * The one request pipeline: every service, behind one chain of interceptors.
 * `routes()` is the one typed list of what we serve; `createPipeline` turns
 * it into the method table every protocol adapter (and the legacy bridge)
 * looks calls up in, and the interceptors `callUnary`/`callStream` run
 * (src/call/: callUnary, callStream).
 */
import type { DescMethod } from "@bufbuild/protobuf";
import type { ConnectRouter, Interceptor } from "@connectrpc/connect";
import { type MethodRoute, recordRoutes } from "../call/route";
import { readInput } from "../call/unary";
import type { Deps } from "../deps";
import { CounteragentService, counteragentService } from "./counteragent-service";
import { DocumentService, documentService } from "./document-service";
import { createHealthService, Health } from "./health-service";
import {
  createAuthInterceptor,
  createDeadlineInterceptor,
  createDepsInterceptor,
  createErrorInterceptor,
  requiredFieldsInterceptor,
} from "./interceptors";
import { outcomeInterceptor } from "./outcome";
import {
  createReflection,
  ServerReflectionV1,
  ServerReflectionV1alpha,
} from "./reflection-service";
import { SubscriptionService, subscriptionService } from "./subscription-service";

/** Services callable without credentials (docs/api.md §5): health, and reflection (it tells what /openapi.json tells). */
export const PUBLIC_SERVICES: ReadonlySet<string> = new Set([
  Health.typeName,
  ServerReflectionV1.typeName,
  ServerReflectionV1alpha.typeName,
]);

/**
 * The services of the API, each implementation type-checked against its
 * service: the one place a new service is registered (health answers for
 * each by name, reflection describes each; both read this list).
 */
export function apiRoutes(router: ConnectRouter): ConnectRouter {
  return router
    .service(SubscriptionService, subscriptionService)
    .service(DocumentService, documentService)
    .service(CounteragentService, counteragentService);
}

/** Everything we serve: the API, health for its services, reflection for all of it. */
export function routes(router: ConnectRouter): ConnectRouter {
  const api = [...new Set(recordRoutes(apiRoutes).map((r) => r.method.parent))];
  apiRoutes(router).service(Health, createHealthService(new Set(api.map((s) => s.typeName))));
  // Reflection describes everything, itself included.
  const { reflectionV1, reflectionV1alpha } = createReflection([
    ...api,
    Health,
    ServerReflectionV1,
    ServerReflectionV1alpha,
  ]);
  return router
    .service(ServerReflectionV1, reflectionV1)
    .service(ServerReflectionV1alpha, reflectionV1alpha);
}

/** The methods routes() serves, without building a pipeline (for the OpenAPI tool and tests). */
export function servedMethods(): DescMethod[] {
  return recordRoutes(routes).map((r) => r.method);
}

export interface Pipeline {
  /** Every method served, by path. */
  readonly routes: ReadonlyMap<string, MethodRoute>;
  /** The interceptors every call runs through, outermost first. */
  readonly interceptors: readonly Interceptor[];
  /** A method's route, by its descriptor. */
  route(method: DescMethod): MethodRoute | undefined;
}

export interface PipelineOptions {
  /** Default deadline of a call. */
  readonly callDeadlineMs: number;
  /** What is served (default: routes()). The conformance program serves its own service. */
  readonly routes?: (router: ConnectRouter) => ConnectRouter;
  /** Services callable without credentials (default: PUBLIC_SERVICES). */
  readonly publicServices?: ReadonlySet<string>;
}

export function createPipeline(deps: Deps, options: PipelineOptions): Pipeline {
  const interceptors: Interceptor[] = [
    // Outermost: sees the code the call ends with, for metrics and traces (src/observability).
    outcomeInterceptor,
    createErrorInterceptor(deps),
    createDepsInterceptor(deps),
    createDeadlineInterceptor(options.callDeadlineMs, deps.log),
    createAuthInterceptor(deps, options.publicServices ?? PUBLIC_SERVICES),
    // The request is read here, once the caller is known (docs/security.md).
    readInput,
    requiredFieldsInterceptor,
  ];
  const recorded = recordRoutes(options.routes ?? routes);
  const byPath = new Map(recorded.map((r) => [r.path, r]));
  const byMethod = new Map(recorded.map((r) => [r.method, r]));
  return {
    routes: byPath,
    interceptors,
    route: (method) => byMethod.get(method),
  };
}
