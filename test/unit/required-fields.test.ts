/**
 * findMissingRequiredField on a proto2 schema made for the purpose: a
 * required field missing at the top, in a message field, in a list item, in
 * a map value, in a recursive child; a required field set to its zero value
 * is set; the first missing field in field order is the one reported, with
 * its path; a message that holds no required field anywhere is never
 * reported.
 */
import { create, createFileRegistry, type DescMessage, type Message } from "@bufbuild/protobuf";
import {
  FileDescriptorProtoSchema,
  FieldDescriptorProto_Label as Label,
  MessageOptionsSchema,
  FieldDescriptorProto_Type as Type,
} from "@bufbuild/protobuf/wkt";
import { beforeEach, describe, expect, it } from "vitest";
import { findMissingRequiredField } from "../../src/rpc/required-fields";

const field = (
  name: string,
  number: number,
  type: Type,
  label: Label,
  typeName?: string,
): Record<string, unknown> => ({ name, jsonName: name, number, type, label, typeName });

let Root: DescMessage;
let Leaf: DescMessage;
let Plain: DescMessage;

// Fresh descriptors for every test: the plan is cached per schema, and a mutation
// run attributes the planning only to the tests that work it out (docs/testing.md).
beforeEach(() => {
  const mapEntry = create(MessageOptionsSchema, { mapEntry: true });
  const file = create(FileDescriptorProtoSchema, {
    name: "test/required.proto",
    package: "test.required",
    syntax: "proto2",
    messageType: [
      {
        name: "Leaf",
        field: [
          field("note", 1, Type.STRING, Label.OPTIONAL),
          field("id", 2, Type.STRING, Label.REQUIRED),
        ],
      },
      {
        name: "Root",
        field: [
          field("n", 1, Type.INT32, Label.REQUIRED),
          field("one", 2, Type.MESSAGE, Label.OPTIONAL, ".test.required.Leaf"),
          field("many", 3, Type.MESSAGE, Label.REPEATED, ".test.required.Leaf"),
          field("byKey", 4, Type.MESSAGE, Label.REPEATED, ".test.required.Root.ByKeyEntry"),
          field("child", 5, Type.MESSAGE, Label.OPTIONAL, ".test.required.Root"),
          field("tags", 6, Type.STRING, Label.REPEATED),
        ],
        nestedType: [
          {
            name: "ByKeyEntry",
            field: [
              field("key", 1, Type.STRING, Label.OPTIONAL),
              field("value", 2, Type.MESSAGE, Label.OPTIONAL, ".test.required.Leaf"),
            ],
            options: mapEntry,
          },
        ],
      },
      {
        // Message fields, a list and a map of messages, none required anywhere.
        name: "Plain",
        field: [
          field("note", 1, Type.STRING, Label.OPTIONAL),
          field("child", 2, Type.MESSAGE, Label.OPTIONAL, ".test.required.Plain"),
          field("items", 3, Type.MESSAGE, Label.REPEATED, ".test.required.Plain"),
        ],
      },
    ],
  } as never);
  const registry = createFileRegistry(file, () => undefined);
  Root = registry.getMessage("test.required.Root") as DescMessage;
  Leaf = registry.getMessage("test.required.Leaf") as DescMessage;
  Plain = registry.getMessage("test.required.Plain") as DescMessage;
});

const leaf = (init: Record<string, unknown> = { id: "x" }) => create(Leaf, init as never);
const root = (init: Record<string, unknown>) =>
  create(Root, { n: 1, ...init } as never) as unknown as Message;

describe("findMissingRequiredField", () => {
  it("finds nothing when every required field is set, at every depth, under any path", () => {
    const message = root({
      one: leaf(),
      many: [leaf(), leaf()],
      byKey: { a: leaf(), b: leaf() },
      child: root({ one: leaf() }),
      tags: ["t"],
    });
    expect(findMissingRequiredField(Root, message)).toBeUndefined();
    expect(findMissingRequiredField(Root, message, "Request")).toBeUndefined();
  });

  it("takes a required field set to its zero value as set", () => {
    expect(findMissingRequiredField(Root, root({ n: 0, one: leaf({ id: "" }) }))).toBeUndefined();
  });

  it("reports a required field missing at the top", () => {
    expect(findMissingRequiredField(Root, create(Root) as unknown as Message)).toBe("n");
  });

  it("reports one missing in a message field, a list item, a map value, a recursive child", () => {
    expect(findMissingRequiredField(Root, root({ one: leaf({ note: "n" }) }))).toBe("one.id");
    expect(findMissingRequiredField(Root, root({ many: [leaf(), leaf({ note: "n" })] }))).toBe(
      "many[1].id",
    );
    expect(findMissingRequiredField(Root, root({ byKey: { k: leaf({ note: "n" }) } }))).toBe(
      "byKey[k].id",
    );
    expect(findMissingRequiredField(Root, root({ child: create(Root) }))).toBe("child.n");
    expect(
      findMissingRequiredField(Root, root({ child: root({ many: [leaf({ note: "n" })] }) })),
    ).toBe("child.many[0].id");
  });

  it("reports the first missing field in field order, under the path it is given", () => {
    const message = root({ one: leaf({}), many: [leaf({})] });
    expect(findMissingRequiredField(Root, message)).toBe("one.id");
    expect(findMissingRequiredField(Root, message, "Request")).toBe("Request.one.id");
    expect(findMissingRequiredField(Root, create(Root) as unknown as Message, "Request")).toBe(
      "Request.n",
    );
  });

  it("never reports a message that holds no required field, however deep", () => {
    const plain = create(Plain, {
      child: create(Plain, { child: create(Plain) }),
      items: [create(Plain)],
    } as never) as unknown as Message;
    expect(findMissingRequiredField(Plain, plain)).toBeUndefined();
  });
});
