/**
 * Legacy query parameters (docs/api.md §3) for every field type a request message
 * could carry, on a message built here with one field of each: today's RPCs
 * use strings and int32 only, but a new RPC with a legacy path gets the same
 * reading with no code of its own.
 */
import { create, createFileRegistry, type DescMessage } from "@bufbuild/protobuf";
import {
  FieldDescriptorProto_Label,
  FileDescriptorProtoSchema,
  FieldDescriptorProto_Type as T,
} from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { QueryError, queryFields, readQuery } from "../../src/legacy/query";

const OPTIONAL = FieldDescriptorProto_Label.OPTIONAL;
const REPEATED = FieldDescriptorProto_Label.REPEATED;
const scalars: [string, T][] = [
  ["s", T.STRING],
  ["flag", T.BOOL],
  ["i32", T.INT32],
  ["si32", T.SINT32],
  ["sf32", T.SFIXED32],
  ["u32", T.UINT32],
  ["f32", T.FIXED32],
  ["i64", T.INT64],
  ["si64", T.SINT64],
  ["sf64", T.SFIXED64],
  ["u64", T.UINT64],
  ["f64", T.FIXED64],
  ["d", T.DOUBLE],
  ["fl", T.FLOAT],
  ["raw", T.BYTES],
];
const file = create(FileDescriptorProtoSchema, {
  name: "test/query.proto",
  package: "test.query.v1",
  syntax: "proto3",
  enumType: [
    {
      name: "Color",
      value: [
        { name: "COLOR_UNSPECIFIED", number: 0 },
        { name: "RED", number: 1 },
      ],
    },
  ],
  messageType: [
    {
      name: "Inner",
      field: [{ name: "x", jsonName: "x", number: 1, type: T.STRING, label: OPTIONAL }],
    },
    {
      name: "Request",
      field: [
        ...scalars.map(([name, type], i) => ({
          name,
          jsonName: name,
          number: i + 1,
          type,
          label: OPTIONAL,
        })),
        { name: "box_id", jsonName: "boxId", number: 20, type: T.STRING, label: OPTIONAL },
        {
          name: "color",
          jsonName: "color",
          number: 21,
          type: T.ENUM,
          typeName: ".test.query.v1.Color",
          label: OPTIONAL,
        },
        {
          name: "inner",
          jsonName: "inner",
          number: 22,
          type: T.MESSAGE,
          typeName: ".test.query.v1.Inner",
          label: OPTIONAL,
        },
        { name: "tags", jsonName: "tags", number: 23, type: T.STRING, label: REPEATED },
      ],
    },
  ],
});
const registry = createFileRegistry(file, () => undefined);
const Request = registry.getMessage("test.query.v1.Request") as DescMessage;
const fields = queryFields(Request, "inner");
const field = (name: string) => {
  const f = Request.fields.find((x) => x.name === name);
  if (!f) throw new Error(name);
  return f;
};
const read = (query: string, only?: string) =>
  readQuery(new URLSearchParams(query), only ? [field(only)] : fields);
const refusal = (query: string, only?: string) => {
  try {
    read(query, only);
  } catch (error) {
    expect(error).toBeInstanceOf(QueryError);
    expect((error as Error).name).toBe("QueryError");
    return (error as Error).message;
  }
  throw new Error(`${query} was accepted`);
};

describe("which fields come from the query", () => {
  it("single scalars and enums: not the body field, not messages, not repeated fields", () => {
    expect(fields.map((f) => f.name)).toEqual([...scalars.map(([n]) => n), "box_id", "color"]);
  });
  it("a body of `*` leaves nothing to the query", () => {
    expect(queryFields(Request, "*")).toEqual([]);
  });
  it("with no body field, the other fields all may come from the query", () => {
    expect(queryFields(Request, "").map((f) => f.name)).not.toContain("inner");
    expect(queryFields(Request, "").map((f) => f.name)).toContain("s");
  });
});

describe("reading values", () => {
  it("by JSON name, case-insensitively; unknown parameters ignored; bare keys and empty values absent", () => {
    expect(read("BOXID=b1&S=x&unknown=1&i32&d=")).toEqual({ boxId: "b1", s: "x" });
  });

  it("a known parameter twice is refused, in any case, even when one is empty", () => {
    expect(refusal("boxId=a&boxid=b")).toBe("parameter boxId is given more than once");
    expect(refusal("boxId&boxId=b")).toBe("parameter boxId is given more than once");
  });

  it("booleans: true or false in any case", () => {
    expect(read("flag=TRUE", "flag")).toEqual({ flag: true });
    expect(read("flag=False", "flag")).toEqual({ flag: false });
    expect(refusal("flag=1", "flag")).toBe("parameter flag must be true or false");
    expect(refusal("flag=yes", "flag")).toBe("parameter flag must be true or false");
  });

  it.each(["i32", "si32", "sf32"])("%s: the int32 range, integers only", (name) => {
    expect(read(`${name}=-2147483648`, name)).toEqual({ [name]: -2147483648 });
    expect(read(`${name}=2147483647`, name)).toEqual({ [name]: 2147483647 });
    expect(read(`${name}=0`, name)).toEqual({ [name]: 0 });
    for (const bad of ["2147483648", "-2147483649", "1.5", "1e3", "+1", " 1", "12345678901", "x"]) {
      expect(refusal(`${name}=${encodeURIComponent(bad)}`, name)).toBe(
        `parameter ${name} must be an integer`,
      );
    }
  });

  it.each(["u32", "f32"])("%s: the uint32 range", (name) => {
    expect(read(`${name}=0`, name)).toEqual({ [name]: 0 });
    expect(read(`${name}=4294967295`, name)).toEqual({ [name]: 4294967295 });
    for (const bad of ["-1", "4294967296", "1.5", "x"]) {
      expect(refusal(`${name}=${bad}`, name)).toBe(
        `parameter ${name} must be a non-negative integer`,
      );
    }
  });

  it.each(["i64", "si64", "sf64", "u64", "f64"])("%s: up to 19 digits, as a bigint", (name) => {
    expect(read(`${name}=-9223372036854775808`, name)).toEqual({ [name]: -9223372036854775808n });
    expect(read(`${name}=7`, name)).toEqual({ [name]: 7n });
    for (const bad of ["12345678901234567890", "1.5", "x7", "7x", "--7", ""]) {
      if (bad === "") continue;
      expect(refusal(`${name}=${bad}`, name)).toBe(`parameter ${name} must be an integer`);
    }
  });

  it.each(["d", "fl"])("%s: any finite number", (name) => {
    expect(read(`${name}=1.5`, name)).toEqual({ [name]: 1.5 });
    expect(read(`${name}=-2e3`, name)).toEqual({ [name]: -2000 });
    for (const bad of ["Infinity", "NaN", "x"]) {
      expect(refusal(`${name}=${bad}`, name)).toBe(`parameter ${name} must be a number`);
    }
  });

  it("an enum by its value name only", () => {
    expect(read("color=RED", "color")).toEqual({ color: 1 });
    expect(refusal("color=1", "color")).toBe("parameter color has an unknown value");
    expect(refusal("color=red", "color")).toBe("parameter color has an unknown value");
  });

  it("bytes and messages cannot come from the query", () => {
    expect(refusal("raw=x", "raw")).toBe("parameter raw cannot be given in the query");
    expect(refusal("inner=x", "inner")).toBe("parameter inner cannot be given in the query");
  });
});
