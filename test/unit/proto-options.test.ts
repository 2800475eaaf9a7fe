/** The file options every file of proto/docflow declares (scripts/check-proto-options.ts, run by npm run lint). */
import { create } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { file_docflow_api_v1_documents } from "../../gen/docflow/api/v1/documents_pb";
import { file_docflow_legacy_subscriptions } from "../../gen/docflow/legacy/subscriptions_pb";
import { expectedOptions, optionProblems } from "../../scripts/check-proto-options";

describe("expected file options", () => {
  it("follow the directory and the package", () => {
    expect(
      expectedOptions({ name: "docflow/api/v1/documents.proto", package: "docflow.api.v1" }),
    ).toEqual({
      goPackage: "github.com/docflow/docflow-api/gen/go/docflow/api/v1;apiv1",
      javaPackage: "com.docflow.api.v1",
      javaMultipleFiles: true,
      csharpNamespace: "Docflow.Api.V1",
    });
    expect(
      expectedOptions({ name: "docflow/legacy/options.proto", package: "docflow.legacy" }),
    ).toMatchObject({
      goPackage: "github.com/docflow/docflow-api/gen/go/docflow/legacy;legacy",
      csharpNamespace: "Docflow.Legacy",
    });
  });

  it("hold for the generated files", () => {
    expect(
      optionProblems([
        file_docflow_api_v1_documents.proto,
        file_docflow_legacy_subscriptions.proto,
      ]),
    ).toEqual([]);
  });

  it("name each missing option", () => {
    const bare = create(FileDescriptorProtoSchema, {
      name: "docflow/groups/v1/groups.proto",
      package: "docflow.groups.v1",
    });
    expect(optionProblems([bare])).toEqual([
      'docflow/groups/v1/groups.proto: option go_package is not set, want "github.com/docflow/docflow-api/gen/go/docflow/groups/v1;groupsv1"',
      'docflow/groups/v1/groups.proto: option java_package is not set, want "com.docflow.groups.v1"',
      "docflow/groups/v1/groups.proto: option java_multiple_files is not set, want true",
      'docflow/groups/v1/groups.proto: option csharp_namespace is not set, want "Docflow.Groups.V1"',
    ]);
  });
});
