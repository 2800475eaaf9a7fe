/**
 * The one request pipeline: every service, behind one chain of interceptors.
 * `routes()` is the one typed list of what we serve; the router (Connect,
 * gRPC, gRPC-Web) and the legacy bridge (in-process calls of the same
 * handlers through the same interceptors) both read it.
 */
import type { DescMethod, Message } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import {
  type ConnectRouter,
  createConnectRouter,
  createMethodImplSpec,
  createServiceImplSpec,
  type Interceptor,
  type MethodImplSpec,
} from "@connectrpc/connect";
import {
  type Compression,
  invokeUnaryImplementation,
  type UniversalHandler,
} from "@connectrpc/connect/protocol";
import { compressionBrotli, compressionGzip } from "@connectrpc/connect-node";
import type { Deps } from "../deps";
import { COMPRESS_MIN_BYTES, compress } from "../http/compression";
import { outcomeInterceptor } from "../observability/outcome";
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
import {
  createReflection,
  ServerReflectionV1,
  ServerReflectionV1alpha,
} from "./reflection-service";
import { SubscriptionService, subscriptionService } from "./subscription-service";
import { reportUndecodableAsInvalid } from "./undecodable";

/** Largest request message accepted, on every protocol. */
export const MAX_REQUEST_BYTES = 1024 * 1024;

/**
 * Compressions accepted and offered on every RPC protocol, in order of
 * preference: connect-node's (its decompression enforces the size limit
 * and reports bad data as invalid_argument), compressing as the legacy
 * answers do (src/http/compression.ts: synchronous for small bodies,
 * brotli at quality 5).
 */
export const RPC_COMPRESSION: readonly Compression[] = [
  { ...compressionGzip, compress: (bytes) => ownBuffer(compress(bytes, "gzip")) },
  { ...compressionBrotli, compress: (bytes) => ownBuffer(compress(bytes, "br")) },
];

/** zlib's output never lives in a SharedArrayBuffer; connect's type asks to be told so. */
const ownBuffer = (bytes: Promise<Buffer>) => bytes as Promise<Uint8Array<ArrayBuffer>>;

/** Request headers the pipeline reads (the interceptors); the short paths copy nothing else. */
export const PIPELINE_HEADERS = ["authorization"] as const;

/** Services callable without credentials (SPEC §5): health, and reflection (it tells what /openapi.json tells). */
export const PUBLIC_SERVICES: ReadonlySet<string> = new Set([
  Health.typeName,
  ServerReflectionV1.typeName,
  ServerReflectionV1alpha.typeName,
]);

/** Everything we serve, each implementation type-checked against its service. */
export function routes(router: ConnectRouter): ConnectRouter {
  router
    .service(SubscriptionService, subscriptionService)
    .service(DocumentService, documentService)
    .service(CounteragentService, counteragentService);
  // Health answers for every service registered above, by name.
  const served = new Set(router.handlers.map((h) => h.service.typeName));
  router.service(Health, createHealthService(served));
  // Reflection describes everything, itself included.
  const services = [
    ...new Set([
      ...router.handlers.map((h) => h.service),
      ServerReflectionV1,
      ServerReflectionV1alpha,
    ]),
  ];
  const { reflectionV1, reflectionV1alpha } = createReflection(services);
  return router
    .service(ServerReflectionV1, reflectionV1)
    .service(ServerReflectionV1alpha, reflectionV1alpha);
}

/** The methods routes() serves, without building a pipeline (for the OpenAPI tool and tests). */
export function servedMethods(): DescMethod[] {
  return routes(createConnectRouter()).handlers.map((h) => h.method);
}

/** A unary method's implementation, as connect-es invokes it. */
export type UnarySpec = Extract<MethodImplSpec, { kind: "unary" }>;

export interface Pipeline {
  /** The router's handlers, for the front (Connect, gRPC and gRPC-Web on /<service>/<method>). */
  readonly handlers: readonly UniversalHandler[];
  /** The same implementations, by method, for the short paths (the legacy bridge, gRPC unary). */
  unary(method: DescMethod): UnarySpec | undefined;
  /**
   * Runs a unary call through the interceptors every call runs through, with
   * a decoded request: what the router does once it has decoded one.
   */
  invoke(spec: UnarySpec, context: HandlerContext, input: Message): Promise<Message>;
  /** Those interceptors (the in-memory test tier builds its router with them). */
  readonly interceptors: readonly Interceptor[];
}

export interface PipelineOptions {
  /** Default deadline of a call. */
  readonly callDeadlineMs: number;
}

export function createPipeline(deps: Deps, options: PipelineOptions): Pipeline {
  const interceptors: Interceptor[] = [
    // Outermost: sees the code the call ends with, for metrics and traces (src/observability).
    outcomeInterceptor,
    createErrorInterceptor(deps),
    createDepsInterceptor(deps),
    createDeadlineInterceptor(options.callDeadlineMs, deps.log),
    createAuthInterceptor(deps, PUBLIC_SERVICES),
    requiredFieldsInterceptor,
  ];
  const router = createConnectRouter({
    interceptors,
    readMaxBytes: MAX_REQUEST_BYTES,
    // gzip and br in both directions; answers from 1 KiB up (a full page of 100 ids is ~4 KB).
    acceptCompression: [...RPC_COMPRESSION],
    compressMinBytes: COMPRESS_MIN_BYTES,
  });
  const specs = new Map<DescMethod, MethodImplSpec>();
  // Records what routes() registers, so that the bridge calls exactly the router's implementations.
  const recorder: ConnectRouter = {
    handlers: router.handlers,
    service(service, impl, opts) {
      for (const spec of Object.values(createServiceImplSpec(service, impl).methods)) {
        specs.set(spec.method, spec);
      }
      router.service(service, impl, opts);
      return recorder;
    },
    rpc(method, impl, opts) {
      specs.set(method, createMethodImplSpec(method, impl));
      router.rpc(method, impl, opts);
      return recorder;
    },
  };
  routes(recorder);
  return {
    handlers: router.handlers.map(reportUndecodableAsInvalid),
    interceptors,
    invoke: (spec, context, input) => invokeUnaryImplementation(spec, context, input, interceptors),
    unary(method) {
      const spec = specs.get(method);
      return spec?.kind === "unary" ? spec : undefined;
    },
  };
}
