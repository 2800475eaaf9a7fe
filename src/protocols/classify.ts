/**
 * The classifier: a request for an RPC route goes to exactly one protocol
 * adapter, chosen once by its content type (and, for Connect GET, its
 * method). None: the route is not called in a way this service serves (415).
 */
import type { MethodRoute } from "../call/route";
import type { NodeRequest } from "../wire/http";
import type { RpcAdapter } from "./adapter";
import { connect } from "./connect";
import { grpc } from "./grpc";
import { grpcWeb } from "./grpc-web";

const ADAPTERS: readonly RpcAdapter[] = [grpc, grpcWeb, connect];

export function classify(req: NodeRequest, route: MethodRoute): RpcAdapter | undefined {
  for (const adapter of ADAPTERS) if (adapter.accepts(req, route)) return adapter;
  return undefined;
}

/** The gRPC family by content type alone (a path that is no route: gRPC's UNIMPLEMENTED). */
export function grpcFamily(req: NodeRequest): RpcAdapter | undefined {
  const type = (req.headers["content-type"] ?? "").toLowerCase();
  if (type.startsWith("application/grpc-web")) return grpcWeb;
  if (type.startsWith("application/grpc")) return grpc;
  return undefined;
}
