/**
 * One OpenAPI builder, one type mapping (src/transcoder/openapi-schema.ts,
 * docs/transcoding.md "The OpenAPI document"): a message answered on a
 * legacy path and on a standard binding is described with the same scalar
 * schemas, and those schemas hold what each profile's JSON writes.
 */
import { create, createFileRegistry, type DescMethod, setExtension } from "@bufbuild/protobuf";
import {
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  FileDescriptorProtoSchema,
  MethodOptionsSchema,
} from "@bufbuild/protobuf/wkt";
import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import { HttpProfile, http_profile } from "../../gen/docflow/legacy/options_pb";
import { http } from "../../gen/google/api/annotations_pb";
import { HttpRuleSchema } from "../../gen/google/api/http_pb";
import { createServiceTranscoder } from "../../src/http/transcoding";
import { messageToLegacyJson } from "../../src/legacy/legacy-json";
import { buildOpenApi } from "../../src/transcoder/openapi";

// biome-ignore lint/suspicious/noExplicitAny: walking arbitrary JSON
type Json = Record<string, any>;

const T = FieldDescriptorProto_Type;
const SCALARS = [
  ["Count", T.UINT32],
  ["Fixed", T.FIXED32],
  ["Ratio", T.FLOAT],
  ["Share", T.DOUBLE],
  ["Big", T.INT64],
  ["Huge", T.UINT64],
  ["Small", T.INT32],
] as const;

function methods(): DescMethod[] {
  const rule = (path: string, legacy: boolean) => {
    const options = create(MethodOptionsSchema);
    setExtension(options, http, create(HttpRuleSchema, { pattern: { case: "get", value: path } }));
    if (legacy) setExtension(options, http_profile, HttpProfile.LEGACY);
    return options;
  };
  const file = create(FileDescriptorProtoSchema, {
    name: "test/mapping.proto",
    package: "test.mapping.v1",
    syntax: "proto3",
    messageType: [
      { name: "NumbersRequest" },
      {
        name: "Numbers",
        field: SCALARS.map(([name, type], i) => ({
          name,
          jsonName: name,
          number: i + 1,
          type,
          label: FieldDescriptorProto_Label.OPTIONAL,
        })),
      },
    ],
    service: [
      {
        name: "NumberService",
        method: [
          {
            name: "GetNumbers",
            inputType: ".test.mapping.v1.NumbersRequest",
            outputType: ".test.mapping.v1.Numbers",
            options: rule("/GetNumbers", true),
          },
          {
            name: "ReadNumbers",
            inputType: ".test.mapping.v1.NumbersRequest",
            outputType: ".test.mapping.v1.Numbers",
            options: rule("/v1/numbers", false),
          },
        ],
      },
    ],
  });
  const registry = createFileRegistry(file, () => undefined);
  return [...(registry.getService("test.mapping.v1.NumberService")?.methods ?? [])];
}

const document = () =>
  buildOpenApi(createServiceTranscoder(methods()).bindings, {
    info: { title: "test", version: "test" },
    serverUrl: "http://127.0.0.1:8080",
  }) as Json;

describe("one OpenAPI builder, one type mapping", () => {
  it("a legacy path and a standard binding in one document: valid OpenAPI 3.1", async () => {
    const doc = document();
    expect(Object.keys(doc.paths)).toEqual(["/GetNumbers", "/v1/numbers"]);
    const result = await new Validator().validate(doc as never);
    expect(result.errors ?? []).toEqual([]);
  });

  it("the same scalar schemas in both profiles' components (each profile's JSON its own component)", () => {
    const { schemas } = document().components;
    const legacy = schemas["test.mapping.v1.Numbers"].properties;
    const json = schemas["test.mapping.v1.Numbers.json"].properties;
    for (const [name] of SCALARS) expect(legacy[name], name).toEqual(json[name]);
    // Legacy JSON writes every field (required in an answer); proto3 JSON leaves defaults out.
    expect(schemas["test.mapping.v1.Numbers"].required).toEqual(SCALARS.map(([name]) => name));
    expect(schemas["test.mapping.v1.Numbers.json"].required).toBeUndefined();
  });

  it("what toJson writes: uint32 up to 4294967295, NaN and ±Infinity as strings, 64-bit integers as decimal strings", () => {
    const props = document().components.schemas["test.mapping.v1.Numbers"].properties;
    const uint32 = { type: "integer", format: "uint32", minimum: 0, maximum: 4294967295 };
    expect(props.Count).toEqual(uint32);
    expect(props.Fixed).toEqual(uint32);
    const floating = {
      oneOf: [{ type: "number" }, { type: "string", enum: ["NaN", "Infinity", "-Infinity"] }],
    };
    expect(props.Ratio).toEqual(floating);
    expect(props.Share).toEqual(floating);
    expect(props.Big).toEqual({ type: "string", format: "int64", pattern: "^-?[0-9]+$" });
    expect(props.Huge).toEqual({ type: "string", format: "uint64", pattern: "^[0-9]+$" });
    expect(props.Small).toEqual({ type: "integer", format: "int32" });

    const numbers = methods()[0]?.output;
    if (!numbers) throw new Error("no Numbers");
    const written = JSON.parse(
      messageToLegacyJson(numbers, {
        $typeName: "test.mapping.v1.Numbers",
        Count: 4294967295,
        Fixed: 0,
        Ratio: Number.NaN,
        Share: Number.NEGATIVE_INFINITY,
        Big: -9007199254740993n,
        Huge: 18446744073709551615n,
        Small: -1,
      } as never),
    ) as Json;
    expect(written.Count).toBe(uint32.maximum);
    expect(floating.oneOf[1]?.enum).toContain(written.Ratio);
    expect(floating.oneOf[1]?.enum).toContain(written.Share);
    expect(written.Big).toMatch(new RegExp(props.Big.pattern));
    expect(written.Huge).toMatch(new RegExp(props.Huge.pattern));
  });
});
