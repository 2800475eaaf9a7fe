/**
 * Legacy JSON (docs/api.md §3) on a message built here with the json_string option
 * in every place a schema can put it: a bool field, a repeated bool, a bool
 * inside a nested message, inside a repeated message and inside a map of
 * messages, a field whose JSON name differs from its proto name, and a
 * recursive message. Today's legacy messages use the first two shapes only;
 * a new one gets the same treatment with no code of its own.
 */
import {
  create,
  createFileRegistry,
  type DescMessage,
  fromJson,
  setExtension,
} from "@bufbuild/protobuf";
import {
  FieldOptionsSchema,
  FileDescriptorProtoSchema,
  FieldDescriptorProto_Label as L,
  FieldDescriptorProto_Type as T,
} from "@bufbuild/protobuf/wkt";
import { beforeEach, describe, expect, it } from "vitest";
import { file_docflow_legacy_options, json_string } from "../../gen/docflow/legacy/options_pb";
import {
  LegacyJsonError,
  legacyJsonToMessage,
  messageToLegacyJson,
} from "../../src/legacy/legacy-json";

const stringBool = (on = true) => {
  const options = create(FieldOptionsSchema);
  setExtension(options, json_string, on);
  return options;
};
const field = (name: string, number: number, type: T, extra: Record<string, unknown> = {}) => ({
  name,
  jsonName: name,
  number,
  type,
  label: L.OPTIONAL,
  ...extra,
});
const file = create(FileDescriptorProtoSchema, {
  name: "test/legacy_json.proto",
  package: "test.legacy",
  syntax: "proto3",
  dependency: [file_docflow_legacy_options.proto.name],
  messageType: [
    {
      name: "Leaf",
      field: [field("On", 1, T.BOOL, { options: stringBool() }), field("Plain", 2, T.BOOL)],
    },
    {
      name: "Tree",
      field: [
        field("On", 1, T.BOOL, { options: stringBool() }),
        field("Child", 2, T.MESSAGE, { typeName: ".test.legacy.Tree" }),
      ],
    },
    {
      name: "Explicit",
      field: [field("Off", 1, T.BOOL, { options: stringBool(false) })],
    },
    {
      name: "NoBools",
      field: [field("Name", 1, T.STRING), field("Plain", 2, T.BOOL)],
    },
    {
      name: "Root",
      field: [
        field("On", 1, T.BOOL, { options: stringBool() }),
        field("Many", 2, T.BOOL, { label: L.REPEATED, options: stringBool() }),
        field("Leaf", 3, T.MESSAGE, { typeName: ".test.legacy.Leaf" }),
        field("Leaves", 4, T.MESSAGE, { typeName: ".test.legacy.Leaf", label: L.REPEATED }),
        field("ByName", 5, T.MESSAGE, {
          typeName: ".test.legacy.Root.ByNameEntry",
          label: L.REPEATED,
        }),
        { ...field("snake_on", 6, T.BOOL, { options: stringBool() }), jsonName: "snakeOn" },
        field("Tree", 7, T.MESSAGE, { typeName: ".test.legacy.Tree" }),
        field("Plain", 8, T.BOOL),
        field("Other", 9, T.MESSAGE, { typeName: ".test.legacy.NoBools" }),
        field("Count", 10, T.INT32),
      ],
      nestedType: [
        {
          name: "ByNameEntry",
          field: [
            field("key", 1, T.STRING),
            field("value", 2, T.MESSAGE, { typeName: ".test.legacy.Leaf" }),
          ],
          options: { mapEntry: true },
        },
      ],
    },
  ],
});
// Fresh descriptors for every test: the module works out each schema's plan
// once and keeps it, so with shared descriptors only the first test to touch
// a schema would run (and check) the planning, whatever it is.
let Root: DescMessage;
let NoBools: DescMessage;
let Explicit: DescMessage;
beforeEach(() => {
  const registry = createFileRegistry(file, (name) =>
    name === file_docflow_legacy_options.proto.name ? file_docflow_legacy_options : undefined,
  );
  Root = registry.getMessage("test.legacy.Root") as DescMessage;
  NoBools = registry.getMessage("test.legacy.NoBools") as DescMessage;
  Explicit = registry.getMessage("test.legacy.Explicit") as DescMessage;
});

const everything = {
  On: "true",
  Many: ["true", "false", true],
  Leaf: { On: "false", Plain: true },
  Leaves: [{ On: "true" }, { On: false }],
  ByName: { a: { On: "true" }, b: { On: "false" } },
  snake_on: "true",
  Tree: { On: "false", Child: { On: "true", Child: { On: "false" } } },
  Plain: false,
  Other: { Name: "n", Plain: true },
  Count: 3,
};

describe("reading legacy JSON: a string-bool is read as a string or a JSON boolean, everywhere the schema puts one", () => {
  it("every shape", () => {
    const message = legacyJsonToMessage(Root, JSON.stringify(everything));
    expect(message).toEqual(
      fromJson(Root, {
        On: true,
        Many: [true, false, true],
        Leaf: { On: false, Plain: true },
        Leaves: [{ On: true }, { On: false }],
        ByName: { a: { On: true }, b: { On: false } },
        snakeOn: true,
        Tree: { On: false, Child: { On: true, Child: { On: false } } },
        Plain: false,
        Other: { Name: "n", Plain: true },
        Count: 3,
      }),
    );
  });

  it('a map key "__proto__" is a key like any other: its string-bools are read too', () => {
    const message = legacyJsonToMessage(
      Root,
      '{"ByName":{"__proto__":{"On":"true"},"b":{"On":"false"}}}',
    );
    const byName = (message as unknown as { ByName: Record<string, { On: boolean }> }).ByName;
    expect(Object.keys(byName)).toEqual(["__proto__", "b"]);
    expect(Object.getOwnPropertyDescriptor(byName, "__proto__")?.value.On).toBe(true);
    expect(byName.b?.On).toBe(false);
  });

  it("the JSON name of a field is read as well as its proto name", () => {
    expect(legacyJsonToMessage(Root, '{"snakeOn":"true"}')).toEqual(
      fromJson(Root, { snakeOn: true }),
    );
  });

  it("a plain bool (no option) given as a string is refused: the option is what allows it", () => {
    expect(() => legacyJsonToMessage(Root, '{"Plain":"true"}')).toThrow(LegacyJsonError);
    expect(() => legacyJsonToMessage(Root, '{"Leaf":{"Plain":"true"}}')).toThrow(LegacyJsonError);
    expect(() => legacyJsonToMessage(Root, '{"Other":{"Plain":"true"}}')).toThrow(LegacyJsonError);
  });

  it("values of the wrong shape are left for the decoder to refuse, with the message's name", () => {
    for (const body of [
      '{"Many":"true"}',
      '{"Leaf":"x"}',
      '{"Leaf":7}',
      '{"Leaves":["x"]}',
      '{"ByName":[1]}',
      '{"ByName":{"a":"x"}}',
      '{"On":"yes"}',
    ]) {
      let error: unknown;
      try {
        legacyJsonToMessage(Root, body);
      } catch (e) {
        error = e;
      }
      expect(error, body).toBeInstanceOf(LegacyJsonError);
      expect((error as Error).name).toBe("LegacyJsonError");
      // The decoder's own words, naming the field or message: the rewrite left the value alone.
      expect((error as Error).message, body).toMatch(
        /^the request body is not a valid Root: cannot decode (field|message) test\.legacy\.\w+/,
      );
    }
  });

  it("text that is not JSON, and JSON that is not an object", () => {
    expect(() => legacyJsonToMessage(Root, "{")).toThrow("the request body is not valid JSON");
    expect(() => legacyJsonToMessage(Root, "[]")).toThrow(/not a valid Root/);
    expect(() => legacyJsonToMessage(NoBools, "7")).toThrow(/not a valid NoBools/);
  });

  it("the option set to false is no option: the bool is a plain one, read and written as a JSON boolean", () => {
    expect(() => legacyJsonToMessage(Explicit, '{"Off":"true"}')).toThrow(LegacyJsonError);
    const message = legacyJsonToMessage(Explicit, '{"Off":true}');
    expect(JSON.parse(messageToLegacyJson(Explicit, message))).toEqual({ Off: true });
  });

  it("null leaves a message field unset, as in proto JSON (it is not an empty message)", () => {
    const message = legacyJsonToMessage(Root, '{"On":"true","Leaf":null,"Tree":null}');
    expect(message).toEqual(fromJson(Root, { On: true }));
  });

  it("a list or a map of the wrong shape is refused naming the field", () => {
    expect(() => legacyJsonToMessage(Root, '{"Many":"true"}')).toThrow(/Root\.Many/);
    expect(() => legacyJsonToMessage(Root, '{"Leaves":{"On":"true"}}')).toThrow(/Root\.Leaves/);
    expect(() => legacyJsonToMessage(Root, '{"ByName":[{"On":"true"}]}')).toThrow(/Root\.ByName/);
  });

  it("unknown fields are ignored, at every level", () => {
    expect(legacyJsonToMessage(Root, '{"On":"true","X":1,"Leaf":{"Y":[1]}}')).toEqual(
      fromJson(Root, { On: true, Leaf: {} }),
    );
  });
});

describe("writing legacy JSON: proto field names, string-bools as strings, every field present", () => {
  it("every shape", () => {
    const message = legacyJsonToMessage(Root, JSON.stringify(everything));
    expect(JSON.parse(messageToLegacyJson(Root, message))).toEqual({
      On: "true",
      Many: ["true", "false", "true"],
      Leaf: { On: "false", Plain: true },
      Leaves: [
        { On: "true", Plain: false },
        { On: "false", Plain: false },
      ],
      ByName: { a: { On: "true", Plain: false }, b: { On: "false", Plain: false } },
      snake_on: "true",
      Tree: { On: "false", Child: { On: "true", Child: { On: "false" } } },
      Plain: false,
      Other: { Name: "n", Plain: true },
      Count: 3,
    });
  });

  it('an empty message: zero values written, string-bools as "false"', () => {
    expect(JSON.parse(messageToLegacyJson(Root, create(Root)))).toEqual({
      On: "false",
      Many: [],
      Leaves: [],
      ByName: {},
      snake_on: "false",
      Plain: false,
      Count: 0,
    });
    expect(JSON.parse(messageToLegacyJson(NoBools, create(NoBools)))).toEqual({
      Name: "",
      Plain: false,
    });
  });
});
