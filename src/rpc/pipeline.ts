/**
 * The one request pipeline: every service, behind one chain of interceptors.
 * `routes()` is the one typed list of what we serve; `createPipeline` turns
 * it into the method table every protocol adapter (and the legacy bridge)
 * looks calls up in, and the interceptors `callUnary`/`callStream` run
 * (src/rpc/call.ts).
 */
import type { DescMethod, DescService } from "@bufbuild/protobuf";
import { MethodOptions_IdempotencyLevel } from "@bufbuild/protobuf/wkt";
import {
  type ConnectRouter,
  createMethodImplSpec,
  createServiceImplSpec,
  type Interceptor,
  type MethodImplSpec,
} from "@connectrpc/connect";
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

/** The services with an API of their own (health answers for these, by name). */
const API_SERVICES: readonly DescService[] = [
  SubscriptionService,
  DocumentService,
  CounteragentService,
];

/** Everything we serve, each implementation type-checked against its service. */
export function routes(router: ConnectRouter): ConnectRouter {
  router
    .service(SubscriptionService, subscriptionService)
    .service(DocumentService, documentService)
    .service(CounteragentService, counteragentService)
    .service(Health, createHealthService(new Set(API_SERVICES.map((s) => s.typeName))));
  // Reflection describes everything, itself included.
  const { reflectionV1, reflectionV1alpha } = createReflection([
    ...API_SERVICES,
    Health,
    ServerReflectionV1,
    ServerReflectionV1alpha,
  ]);
  return router
    .service(ServerReflectionV1, reflectionV1)
    .service(ServerReflectionV1alpha, reflectionV1alpha);
}

/** One method as the front serves it: its path, its implementation, whether Connect GET may call it. */
export interface MethodRoute {
  /** `/<package>.<Service>/<Method>`. */
  readonly path: string;
  readonly method: DescMethod;
  readonly spec: MethodImplSpec;
  /** A method without side effects may be called with Connect GET. */
  readonly allowGet: boolean;
}

/** What `register` records: every method registered, as the front serves it. */
function recordRoutes(register: (router: ConnectRouter) => ConnectRouter): MethodRoute[] {
  const recorded: MethodRoute[] = [];
  const add = (spec: MethodImplSpec) =>
    recorded.push({
      path: `/${spec.method.parent.typeName}/${spec.method.name}`,
      method: spec.method,
      spec,
      allowGet: spec.method.idempotency === MethodOptions_IdempotencyLevel.NO_SIDE_EFFECTS,
    });
  const router: ConnectRouter = {
    handlers: [],
    service(service, impl) {
      for (const spec of Object.values(createServiceImplSpec(service, impl).methods)) add(spec);
      return router;
    },
    rpc(method, impl) {
      add(createMethodImplSpec(method, impl));
      return router;
    },
  };
  register(router);
  return recorded;
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
