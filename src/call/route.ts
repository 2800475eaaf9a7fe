/**
 * A method as the front serves it (MethodRoute), and the routes a
 * connect-es router registration records: what the protocols look calls up
 * by and what a call runs.
 */
import type { DescMethod } from "@bufbuild/protobuf";
import { MethodOptions_IdempotencyLevel } from "@bufbuild/protobuf/wkt";
import {
  type ConnectRouter,
  createMethodImplSpec,
  createServiceImplSpec,
  type MethodImplSpec,
} from "@connectrpc/connect";

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
export function recordRoutes(register: (router: ConnectRouter) => ConnectRouter): MethodRoute[] {
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
