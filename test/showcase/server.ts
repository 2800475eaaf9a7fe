/**
 * A test-only implementation of google.showcase.v1beta1.Compliance (gapic-
 * showcase v0.35.0), served through the service's own front door with every
 * `google.api.http` rule of it given to the transcoder (src/transcoder, the
 * JSON profile). Google's generated Go REST client drives it through the
 * Compliance suite (test/showcase/run.sh, docs/transcoding.md).
 *
 * What it does is what Google's reference server does
 * (server/services/compliance_service.go): each RepeatData* call echoes its
 * request with the template of the binding it came through, and with
 * server_verify compares what arrived with the suite's own copy of the
 * request (the suite file, read here): a transcoding bug that an echo would
 * hide fails there. GetEnum answers a declared continent or an undeclared
 * one; VerifyEnum checks it came back.
 *
 * No generated code: compliance.proto is built by `buf build` (run.sh) into a
 * descriptor set, SHOWCASE_IMAGE. Prints the port it listens on to stdout.
 */
import { readFileSync } from "node:fs";
import {
  create,
  createFileRegistry,
  type DescMessage,
  type DescService,
  fromBinary,
  fromJson,
  type JsonValue,
  type Message,
  toBinary,
} from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import {
  Code,
  ConnectError,
  type ConnectRouter,
  type HandlerContext,
  type ServiceImpl,
} from "@connectrpc/connect";
import { DEFAULT_TIMEOUTS } from "../../src/config";
import type { Deps } from "../../src/deps";
import { createHttpServer } from "../../src/http/server";
import { createLogger } from "../../src/log";
import { httpBindingKey } from "../../src/transcoder/transcoder";

const PKG = "google.showcase.v1beta1";
const image = process.env.SHOWCASE_IMAGE;
const suiteFile = process.env.SHOWCASE_SUITE;
if (!image || !suiteFile) throw new Error("SHOWCASE_IMAGE and SHOWCASE_SUITE must be set");

const registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, readFileSync(image)));
const message = (name: string): DescMessage => {
  const desc = registry.getMessage(`${PKG}.${name}`);
  if (!desc) throw new Error(`no ${name} in ${image}`);
  return desc;
};
const service = registry.getService(`${PKG}.Compliance`) as DescService;
const ComplianceData = message("ComplianceData");

type Repeat = Message & {
  name: string;
  info?: Message;
  serverVerify: boolean;
  intendedBindingUri?: string;
};
type Suite = Message & { group: (Message & { requests: Repeat[] })[] };

const suite = fromJson(
  message("ComplianceSuite"),
  JSON.parse(readFileSync(suiteFile, "utf8")) as JsonValue,
) as Suite;
const suiteRequests = new Map(suite.group.flatMap((g) => g.requests).map((r) => [r.name, r]));

/** The same message, presence included: their encodings are the same bytes. */
const same = (schema: DescMessage, a: Message | undefined, b: Message | undefined) =>
  Buffer.from(toBinary(schema, a ?? create(schema))).equals(
    Buffer.from(toBinary(schema, b ?? create(schema))),
  );

function repeat(req: Repeat, ctx: HandlerContext) {
  const binding = ctx.values.get(httpBindingKey)?.template.source ?? "";
  if (req.serverVerify) {
    const expected = suiteRequests.get(req.name);
    if (!expected) {
      throw new ConnectError(`the suite has no request "${req.name}"`, Code.InvalidArgument);
    }
    if (expected.intendedBindingUri !== undefined && expected.intendedBindingUri !== binding) {
      throw new ConnectError(
        `request "${req.name}" came through ${binding}, not ${expected.intendedBindingUri}`,
        Code.InvalidArgument,
      );
    }
    if (expected.intendedBindingUri !== req.intendedBindingUri) {
      throw new ConnectError(
        `request "${req.name}": intended_binding_uri differs`,
        Code.InvalidArgument,
      );
    }
    if (!same(ComplianceData, expected.info, req.info)) {
      throw new ConnectError(
        `request "${req.name}": info differs from the suite's`,
        Code.InvalidArgument,
      );
    }
  }
  return { request: req, bindingUri: binding };
}

// As the reference server: a declared continent and an undeclared one, fixed for the process.
const existing = (process.pid % 5) + 1;
const unknown = -process.pid;

type EnumResponse = Message & { request?: Message & { unknownEnum: boolean }; continent: number };

function routes(router: ConnectRouter): ConnectRouter {
  const impl = {
    repeatDataBody: repeat,
    repeatDataBodyInfo: repeat,
    repeatDataQuery: repeat,
    repeatDataSimplePath: repeat,
    repeatDataPathResource: repeat,
    repeatDataPathTrailingResource: repeat,
    repeatDataBodyPut: repeat,
    repeatDataBodyPatch: repeat,
    getEnum: (req: Message & { unknownEnum: boolean }) => ({
      request: req,
      continent: req.unknownEnum ? unknown : existing,
    }),
    verifyEnum: (res: EnumResponse) => {
      const expected = res.request?.unknownEnum ? unknown : existing;
      if (res.continent !== expected) {
        throw new ConnectError(
          `continent ${res.continent} is not the ${expected} GetEnum answered`,
          Code.InvalidArgument,
        );
      }
      return res;
    },
  };
  return router.service(service, impl as unknown as ServiceImpl<DescService>);
}

async function main(): Promise<void> {
  const log = createLogger("warn", (line) => process.stderr.write(`${line}\n`));
  const deps = { log, now: () => new Date(), healthy: async () => true } as unknown as Deps;
  const server = createHttpServer(
    deps,
    { ...DEFAULT_TIMEOUTS, shutdownMs: 1_000 },
    {
      corsAllowedOrigins: [],
      routes,
      publicServices: new Set([service.typeName]),
      jsonRegistry: registry,
    },
  );
  const address = await server.listen(Number(process.env.PORT ?? 0), "127.0.0.1");
  process.stdout.write(`${address.port}\n`);
  const stop = () => void server.close().finally(() => process.exit(0));
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`showcase server failed: ${String(error)}\n`);
  process.exit(1);
});
