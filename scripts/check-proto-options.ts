/**
 * `npm run lint` (after buf lint): every file of our own module (proto/docflow)
 * declares the file options clients in the main languages rely on, with the
 * values the recipes of docs/clients.md expect. buf lint's PACKAGE_SAME_* rules
 * only check that files of one package agree; this checks that the options
 * are there at all, so a new file or a new package cannot ship without them.
 *
 * - go_package "github.com/docflow/docflow-api/gen/go/<dir>;<name>": the path
 *   the Go recipe (proto/buf.gen.go.yaml, module=github.com/docflow/docflow-api/gen/go)
 *   writes the file to; <name> the last directory, with a version directory
 *   joined to the one before it (docflow/api/v1 → apiv1).
 * - java_package "com.<package>", java_multiple_files true.
 * - csharp_namespace: the package in PascalCase (docflow.api.v1 → Docflow.Api.V1).
 * - syntax proto2 or proto3: no Editions (clients are generated with protoc 3.21).
 */
import { execFileSync } from "node:child_process";
import { fromBinary } from "@bufbuild/protobuf";
import { type FileDescriptorProto, FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";

export const GO_MODULE = "github.com/docflow/docflow-api/gen/go";

const pascal = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** The options a file of ours must declare, from its path and package. */
export function expectedOptions(file: Pick<FileDescriptorProto, "name" | "package">) {
  const dirs = file.name.split("/").slice(0, -1);
  const last = dirs.at(-1) ?? "";
  const goName = /^v\d+/.test(last) && dirs.length > 1 ? `${dirs.at(-2)}${last}` : last;
  return {
    goPackage: `${GO_MODULE}/${dirs.join("/")};${goName.replace(/[^a-z0-9_]/gi, "_")}`,
    javaPackage: `com.${file.package}`,
    javaMultipleFiles: true,
    csharpNamespace: file.package.split(".").map(pascal).join("."),
  };
}

/** One line per missing or unexpected option. */
export function optionProblems(files: FileDescriptorProto[]): string[] {
  const problems: string[] = [];
  for (const file of files) {
    const want = expectedOptions(file);
    const got = file.options;
    const check = (option: string, value: unknown, expected: unknown) => {
      if (value !== expected) {
        const is =
          value === undefined || value === "" ? "is not set" : `= ${JSON.stringify(value)}`;
        problems.push(`${file.name}: option ${option} ${is}, want ${JSON.stringify(expected)}`);
      }
    };
    check("go_package", got?.goPackage, want.goPackage);
    check("java_package", got?.javaPackage, want.javaPackage);
    check("java_multiple_files", got?.javaMultipleFiles, want.javaMultipleFiles);
    check("csharp_namespace", got?.csharpNamespace, want.csharpNamespace);
    if (!["", "proto2", "proto3"].includes(file.syntax)) {
      problems.push(`${file.name}: syntax "${file.syntax}": use proto2 or proto3 (protoc 3.21)`);
    }
  }
  return problems;
}

if (process.argv[1]?.endsWith("check-proto-options.ts")) {
  const image = execFileSync(
    "node_modules/.bin/buf",
    ["build", "proto", "--path", "proto/docflow", "--exclude-imports", "-o", "-#format=binpb"],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  const files = fromBinary(FileDescriptorSetSchema, image).file;
  const problems = optionProblems(files);
  for (const line of problems) process.stderr.write(`${line}\n`);
  if (files.length === 0) process.stderr.write("no file found under proto/docflow\n");
  process.exit(problems.length > 0 || files.length === 0 ? 1 : 0);
}
