/**
 * docs/transcoding.md's example, "Adding an RPC with a REST binding", as a
 * test builds it: `GetBook` with the doc's rule
 * (`get: "/v1/{name=shelves/*\/books/*}"`, `additional_bindings {get:
 * "/v1/books/{name=**}"}`), from a descriptor made here rather than by
 * `npm run generate` (a test may not change proto/ or gen/), implemented as
 * for any protocol and registered beside the service's own `routes()` —
 * step 2 of the doc, and nothing else.
 */
import { create, createFileRegistry, type DescService, setExtension } from "@bufbuild/protobuf";
import {
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  FileDescriptorProtoSchema,
  MethodOptionsSchema,
} from "@bufbuild/protobuf/wkt";
import type { ConnectRouter } from "@connectrpc/connect";
import { http } from "../../gen/google/api/annotations_pb";
import { HttpRuleSchema } from "../../gen/google/api/http_pb";
import { routes } from "../../src/rpc/pipeline";

const string = (name: string, jsonName: string, number: number) => ({
  name,
  jsonName,
  number,
  type: FieldDescriptorProto_Type.STRING,
  label: FieldDescriptorProto_Label.OPTIONAL,
});

function bookService(): DescService {
  const options = create(MethodOptionsSchema);
  setExtension(
    options,
    http,
    create(HttpRuleSchema, {
      pattern: { case: "get", value: "/v1/{name=shelves/*/books/*}" },
      additionalBindings: [{ pattern: { case: "get", value: "/v1/books/{name=**}" } }],
    }),
  );
  const file = create(FileDescriptorProtoSchema, {
    name: "example/library.proto",
    package: "example.library.v1",
    syntax: "proto3",
    messageType: [
      { name: "GetBookRequest", field: [string("name", "name", 1)] },
      { name: "Book", field: [string("name", "name", 1), string("title", "title", 2)] },
    ],
    service: [
      {
        name: "LibraryService",
        method: [
          {
            name: "GetBook",
            inputType: ".example.library.v1.GetBookRequest",
            outputType: ".example.library.v1.Book",
            options,
          },
        ],
      },
    ],
  });
  const service = createFileRegistry(file, () => undefined).getService(
    "example.library.v1.LibraryService",
  );
  if (!service) throw new Error("the example service did not build");
  return service;
}

export const LibraryService = bookService();

/** The service's routes with the example registered beside them. */
export function routesWithBooks(router: ConnectRouter): ConnectRouter {
  return routes(router).service(LibraryService, {
    getBook: (req: { name: string }) => ({ name: req.name, title: `The book ${req.name}` }),
  } as never);
}
