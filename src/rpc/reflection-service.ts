/**
 * gRPC server reflection (grpc.reflection.v1 and v1alpha, the same protocol
 * under two names: tools try v1 first and fall back to v1alpha on
 * UNIMPLEMENTED). It serves the descriptors we already generate, of every
 * service we expose, so grpcurl, buf curl, Postman and Kreya need no local
 * copy of our protos. Reflection tells no more than /openapi.json already
 * publishes, so it needs no credentials (docs/api.md §5).
 */
import {
  createRegistry,
  type DescFile,
  type DescService,
  type MessageInitShape,
  type Registry,
  toBinary,
} from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import * as v1 from "../../gen/grpc/reflection/v1/reflection_pb";
import * as v1alpha from "../../gen/grpc/reflection/v1alpha/reflection_pb";

/** gRPC's NOT_FOUND, in an ErrorResponse. */
const NOT_FOUND = 5;

/** What one request asks, whichever version sent it (the messages have the same fields). */
type Request = v1.ServerReflectionRequest | v1alpha.ServerReflectionRequest;
/** One answer, as an init object: v1 and v1alpha messages take the same one. */
type Answer = { messageResponse: { case: string; value: unknown } };

/** The descriptors behind `services`: their files and every file those import. */
export function createReflection(services: readonly DescService[]) {
  const files = new Map<string, DescFile>();
  const add = (file: DescFile) => {
    if (files.has(file.name)) return;
    files.set(file.name, file);
    for (const dependency of file.dependencies) add(dependency);
  };
  for (const service of services) add(service.file);
  const registry: Registry = createRegistry(...files.values());
  const names = services.map((s) => s.typeName).sort();

  /** The file and everything it imports, dependencies first, as serialized FileDescriptorProtos. */
  const withDependencies = (file: DescFile): Uint8Array[] => {
    const out: DescFile[] = [];
    const visit = (f: DescFile) => {
      if (out.includes(f)) return;
      for (const d of f.dependencies) visit(d);
      out.push(f);
    };
    visit(file);
    return out.map((f) => toBinary(FileDescriptorProtoSchema, f.proto));
  };
  const notFound = (what: string): Answer => ({
    messageResponse: {
      case: "errorResponse",
      value: { errorCode: NOT_FOUND, errorMessage: `${what} not found` },
    },
  });
  const fileAnswer = (file: DescFile | undefined, what: string): Answer =>
    file
      ? {
          messageResponse: {
            case: "fileDescriptorResponse",
            value: { fileDescriptorProto: withDependencies(file) },
          },
        }
      : notFound(what);

  /** The file that defines a symbol: a message, enum, service, extension, or a member of one. */
  const fileOfSymbol = (symbol: string): DescFile | undefined => {
    for (let name = symbol; name !== ""; name = name.slice(0, Math.max(0, name.lastIndexOf(".")))) {
      const found = registry.get(name);
      if (found) return found.file;
      if (!name.includes(".")) break;
    }
    return undefined;
  };

  const answer = (req: Request): Answer => {
    const { case: kind, value } = req.messageRequest;
    switch (kind) {
      case "fileByFilename":
        return fileAnswer(files.get(value), `file ${value}`);
      case "fileContainingSymbol":
        return fileAnswer(fileOfSymbol(value), `symbol ${value}`);
      case "fileContainingExtension": {
        const extendee = registry.getMessage(value.containingType);
        const extension = extendee && registry.getExtensionFor(extendee, value.extensionNumber);
        return fileAnswer(
          extension?.file,
          `extension ${value.extensionNumber} of ${value.containingType}`,
        );
      }
      case "allExtensionNumbersOfType": {
        const extendee = registry.getMessage(value);
        if (!extendee) return notFound(`type ${value}`);
        const numbers: number[] = [];
        for (const item of registry) {
          if (item.kind === "extension" && item.extendee.typeName === value)
            numbers.push(item.number);
        }
        return {
          messageResponse: {
            case: "allExtensionNumbersResponse",
            value: { baseTypeName: value, extensionNumber: numbers.sort((a, b) => a - b) },
          },
        };
      }
      case "listServices":
        return {
          messageResponse: {
            case: "listServicesResponse",
            value: { service: names.map((name) => ({ name })) },
          },
        };
      default:
        return notFound("request kind");
    }
  };

  async function* serve(requests: AsyncIterable<Request>) {
    for await (const req of requests) {
      yield { validHost: req.host, originalRequest: req, ...answer(req) };
    }
  }

  // The two versions differ only in their package name: one implementation, typed for each.
  const reflectionV1: ServiceImpl<typeof v1.ServerReflection> = {
    serverReflectionInfo: (requests) =>
      serve(requests) as AsyncIterable<MessageInitShape<typeof v1.ServerReflectionResponseSchema>>,
  };
  const reflectionV1alpha: ServiceImpl<typeof v1alpha.ServerReflection> = {
    serverReflectionInfo: (requests) =>
      serve(requests) as AsyncIterable<
        MessageInitShape<typeof v1alpha.ServerReflectionResponseSchema>
      >,
  };
  return { reflectionV1, reflectionV1alpha };
}

export const ServerReflectionV1 = v1.ServerReflection;
export const ServerReflectionV1alpha = v1alpha.ServerReflection;
