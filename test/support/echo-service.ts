/** A test-only service built from a descriptor here: `Echo(EchoRequest) returns (EchoRequest)` with a given http rule. */
import {
  create,
  createFileRegistry,
  type DescMethod,
  type MessageInitShape,
  setExtension,
} from "@bufbuild/protobuf";
import {
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  FileDescriptorProtoSchema,
  MethodOptionsSchema,
} from "@bufbuild/protobuf/wkt";
import { http } from "../../gen/google/api/annotations_pb";
import { HttpRuleSchema } from "../../gen/google/api/http_pb";

const STRING = FieldDescriptorProto_Type.STRING;
const MESSAGE = FieldDescriptorProto_Type.MESSAGE;
const OPTIONAL = FieldDescriptorProto_Label.OPTIONAL;

/** A test service with one method `Echo(EchoRequest) returns (EchoRequest)` carrying `rule`. */
export function methodWith(
  rule: MessageInitShape<typeof HttpRuleSchema>,
  streaming = false,
): DescMethod {
  const options = create(MethodOptionsSchema);
  setExtension(options, http, create(HttpRuleSchema, rule));
  const file = create(FileDescriptorProtoSchema, {
    name: "test/echo.proto",
    package: "test.echo.v1",
    syntax: "proto3",
    messageType: [
      {
        name: "Inner",
        field: [{ name: "text", jsonName: "text", number: 1, type: STRING, label: OPTIONAL }],
      },
      {
        name: "EchoRequest",
        field: [
          { name: "box_id", jsonName: "boxId", number: 1, type: STRING, label: OPTIONAL },
          {
            name: "inner",
            jsonName: "inner",
            number: 2,
            type: MESSAGE,
            typeName: ".test.echo.v1.Inner",
            label: OPTIONAL,
          },
        ],
      },
    ],
    service: [
      {
        name: "EchoService",
        method: [
          {
            name: "Echo",
            inputType: ".test.echo.v1.EchoRequest",
            outputType: ".test.echo.v1.EchoRequest",
            options,
            serverStreaming: streaming,
          },
        ],
      },
    ],
  });
  const service = createFileRegistry(file, () => undefined).getService("test.echo.v1.EchoService");
  const method = service?.methods[0];
  if (!method) throw new Error("no method");
  return method;
}
