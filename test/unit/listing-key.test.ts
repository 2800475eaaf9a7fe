/** The listing key read from raw BSON (a page's documents) gives what a full decode gives. */
import { BSON, Long, ObjectId } from "mongodb";
import { describe, expect, it } from "vitest";
import { listingKeyOf, listingKeyOfRaw, positionOfListingKey } from "../../src/storage/listing-key";

const key = listingKeyOf({
  joinedGroupAt: new Date("2026-01-01T00:00:00Z"),
  counteragentBoxId: "c0000000-0000-4000-8000-000000000001",
});
const raw = (doc: Record<string, unknown>) => BSON.serialize(doc);

/**
 * `doc` with a second listingKey ("decoded") appended: the fast path stops at
 * the first one, a full decode keeps the last. So the answer tells which of
 * the two read the document.
 */
const withSecondKey = (doc: Record<string, unknown>): Uint8Array => {
  const first = BSON.serialize({ ...doc, listingKey: "fast" });
  const second = BSON.serialize({ listingKey: "decoded" });
  const element = second.subarray(4, second.length - 1);
  const out = Buffer.concat([first.subarray(0, first.length - 1), element, Buffer.from([0])]);
  out.writeInt32LE(out.length, 0);
  return out;
};

describe("listingKeyOfRaw", () => {
  it.each([
    ["double", { v: 1.5 }],
    ["string", { v: "listingKey" }],
    ["document", { v: { listingKey: "x" } }],
    ["array", { v: ["listingKey"] }],
    ["binary", { v: new BSON.Binary(Buffer.from("listingKey")) }],
    ["ObjectId", { v: new ObjectId() }],
    ["boolean", { v: true }],
    ["date", { v: new Date(0) }],
    ["null", { v: null }],
    ["JavaScript code", { v: new BSON.Code("listingKey") }],
    ["symbol", { v: new BSON.BSONSymbol("listingKey") }],
    ["int32", { v: 7 }],
    ["timestamp", { v: new BSON.Timestamp({ t: 1, i: 1 }) }],
    ["int64", { v: Long.fromNumber(2 ** 40) }],
    ["decimal128", { v: BSON.Decimal128.fromString("1.5") }],
    ["min key", { v: new BSON.MinKey() }],
    ["max key", { v: new BSON.MaxKey() }],
  ])("skips a %s field without decoding the document", (_name, doc) => {
    expect(listingKeyOfRaw(withSecondKey(doc))).toBe("fast");
  });

  it("decodes the whole document at a type it does not skip (a regular expression)", () => {
    expect(listingKeyOfRaw(withSecondKey({ v: new BSON.BSONRegExp("a", "i") }))).toBe("decoded");
  });

  it.each([
    ["the key alone (what a covering projection returns)", { listingKey: key }],
    [
      "a whole document, the key after every other field type (a server ignoring the projection)",
      {
        _id: new ObjectId(),
        boxId: "b0000000-0000-4000-8000-000000000001",
        counteragentBoxId: "c0000000-0000-4000-8000-000000000001",
        status: "IsMyCounteragent",
        joinedGroupAt: new Date("2026-01-01T00:00:00Z"),
        nested: { listingKey: "not this one" },
        list: ["listingKey"],
        flag: true,
        n: 3,
        big: Long.fromNumber(2 ** 40),
        x: 1.5,
        nothing: null,
        bytes: new BSON.Binary(Buffer.from("listingKey")),
        code: new BSON.Code("listingKey"),
        decimal: BSON.Decimal128.fromString("1.5"),
        regex: new BSON.BSONRegExp("listingKey", "i"),
        listingKey: key,
      },
    ],
    ["a non-ASCII key", { listingKey: `${key}é€😀` }],
    ["a null key", { boxId: "b", listingKey: null }],
    ["no key at all", { boxId: "b", counteragentBoxId: "c" }],
    ["a field whose name starts like the key", { listingKeyX: "x", listingKe: "y" }],
    ["a key that is not a string (never written here)", { listingKey: 42 }],
    ["an empty string", { listingKey: "" }],
  ])("%s", (_name, doc) => {
    const bytes = raw(doc);
    expect(listingKeyOfRaw(bytes)).toEqual(BSON.deserialize(bytes).listingKey);
  });

  it("positions round-trip through keys, near the epoch, today and far out", () => {
    for (const iso of [
      "1970-01-01T00:00:00.000Z",
      "1969-12-31T23:59:59.999Z",
      "2026-11-23T12:34:56.789Z",
      "9999-12-31T23:59:59.999Z",
      "+100000-01-01T00:00:00.000Z",
      "-100000-01-01T00:00:00.000Z",
    ]) {
      const position = { joinedGroupAt: new Date(iso), counteragentBoxId: "c" };
      expect(positionOfListingKey(listingKeyOf(position))).toEqual(position);
    }
  });

  it("reads a document inside a larger buffer (the driver's slices)", () => {
    const doc = raw({ a: "x", listingKey: key });
    const buffer = Buffer.concat([Buffer.from("garbage"), doc, Buffer.from("more")]);
    const slice = new Uint8Array(buffer.buffer, buffer.byteOffset + 7, doc.length);
    expect(listingKeyOfRaw(slice)).toBe(key);
    expect(positionOfListingKey(listingKeyOfRaw(slice))?.counteragentBoxId).toBe(
      "c0000000-0000-4000-8000-000000000001",
    );
  });
});
