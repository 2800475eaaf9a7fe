/**
 * The benchmark's gRPC floor: a plain @grpc/grpc-js server implementing
 * docflow.api.v1.CounteragentService/GetCounteragentsFromGroup with the
 * service's MongoDB calls (floor-store.ts) and protobuf-es toBinary/fromBinary
 * of the generated schemas as serializers; FLOOR=tight or uncached as in
 * floor-http.ts. Run as a child of `npm run bench` (env MONGODB_URI,
 * MONGODB_DB, FLOOR); prints "commands on http://…" (a side port) and
 * "listening on http://…" on stderr.
 */
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import {
  type GetCounteragentsFromGroupRequest,
  GetCounteragentsFromGroupRequestSchema,
} from "../gen/docflow/api/v1/counteragents_pb";
import {
  type CounteragentFromGroupResponse,
  CounteragentFromGroupResponseSchema,
} from "../gen/docflow/legacy/counteragents_pb";
import { CONNECT_PATH } from "./fixture";
import { FloorError } from "./floor-store";
import { openStore, serveCommandCount } from "./floors";

const GRPC_CODES: Readonly<Record<number, grpc.status>> = {
  401: grpc.status.UNAUTHENTICATED,
  402: grpc.status.FAILED_PRECONDITION,
  403: grpc.status.PERMISSION_DENIED,
  404: grpc.status.NOT_FOUND,
};

async function main(): Promise<void> {
  const uri = process.env.MONGODB_URI;
  const name = process.env.MONGODB_DB;
  if (!uri || !name) throw new Error("MONGODB_URI and MONGODB_DB are required");
  const store = await openStore(uri, name);
  const commands = await serveCommandCount(store);

  const definition: grpc.ServiceDefinition = {
    GetCounteragentsFromGroup: {
      path: CONNECT_PATH,
      requestStream: false,
      responseStream: false,
      requestSerialize: (m: GetCounteragentsFromGroupRequest) =>
        Buffer.from(toBinary(GetCounteragentsFromGroupRequestSchema, m)),
      requestDeserialize: (b: Buffer) => fromBinary(GetCounteragentsFromGroupRequestSchema, b),
      responseSerialize: (m: CounteragentFromGroupResponse) =>
        Buffer.from(toBinary(CounteragentFromGroupResponseSchema, m)),
      responseDeserialize: (b: Buffer) => fromBinary(CounteragentFromGroupResponseSchema, b),
    },
  };
  const getCounteragentsFromGroup: grpc.handleUnaryCall<
    GetCounteragentsFromGroupRequest,
    CounteragentFromGroupResponse
  > = (call, callback) => {
    const auth = call.metadata.get("authorization")[0];
    store
      .getGroupPage(
        typeof auth === "string" ? auth : undefined,
        call.request.boxId,
        call.request.counteragentGroupId,
        call.request.count ?? 100,
      )
      .then((page) =>
        callback(
          null,
          create(CounteragentFromGroupResponseSchema, {
            CounteragentBoxId: page.ids,
            TotalCount: page.totalCount,
            ...(page.afterIndexKey === undefined ? {} : { AfterIndexKey: page.afterIndexKey }),
            // As the service answers the RPC protocols (AIP-158; none at the end).
            ...(page.nextPageToken === "" ? {} : { nextPageToken: page.nextPageToken }),
          }),
        ),
      )
      .catch((error: unknown) =>
        callback({
          code:
            error instanceof FloorError
              ? (GRPC_CODES[error.status] ?? grpc.status.INTERNAL)
              : grpc.status.INTERNAL,
          details: error instanceof Error ? error.message : "error",
        }),
      );
  };

  const server = new grpc.Server();
  server.addService(definition, { GetCounteragentsFromGroup: getCounteragentsFromGroup });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(
      `127.0.0.1:${process.env.PORT ?? 0}`,
      grpc.ServerCredentials.createInsecure(),
      (error, bound) => (error ? reject(error) : resolve(bound)),
    ),
  );
  process.stderr.write(
    `floor-grpc commands on ${commands.url}\nfloor-grpc listening on http://127.0.0.1:${port}\n`,
  );

  const stop = () => {
    server.forceShutdown();
    commands.close();
    void store.close().finally(() => process.exit(0));
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`floor-grpc failed: ${error instanceof Error ? error.message : error}\n`);
  process.exit(1);
});
