/**
 * Page keys (afterIndexKey) forged with a valid checksum — the checksum is
 * not secret, so what a key says must still be checked — and the listing
 * key's raw-BSON reader, which must read every common field type without a
 * full decode (a page's documents arrive whole from a server that ignores
 * the projection).
 */
import { createHash } from "node:crypto";
import { BSON, Long, ObjectId, Timestamp } from "mongodb";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { decodeIndexKey, encodeIndexKey, MAX_INDEX_KEY_LENGTH } from "../../src/domain/index-key";
import { listingKeyOf, listingKeyOfRaw, positionOfListingKey } from "../../src/storage/listing-key";

/** Full BSON decodes, counted: the reader's fallback, which the common types must not need. */
const decodes = vi.hoisted(() => ({ count: 0 }));
vi.mock("mongodb", async (importOriginal) => {
  const original = await importOriginal<typeof import("mongodb")>();
  const deserialize: typeof original.BSON.deserialize = (...args) => {
    decodes.count++;
    return original.BSON.deserialize(...args);
  };
  return { ...original, BSON: { ...original.BSON, deserialize } };
});

const scope = { boxId: "b1", counteragentGroupId: "g1" };

/** A key as the format describes it (docs/decisions.md, src/domain/index-key.ts), checksummed for `scope`. */
function forge(parts: {
  version?: number;
  total?: number;
  millis?: bigint;
  id?: string;
  raw?: Buffer;
}): string {
  const version = parts.version ?? 2;
  const payload =
    parts.raw ??
    Buffer.concat([
      Buffer.from([version]),
      ...(version === 2 ? [uint32(parts.total ?? 5)] : []),
      int64(parts.millis ?? 1_700_000_000_000n),
      Buffer.from(parts.id ?? "c-1", "utf8"),
    ]);
  const check = createHash("sha256")
    .update(`${scope.boxId}\u0000${scope.counteragentGroupId}\u0000`, "utf8")
    .update(payload)
    .digest()
    .subarray(0, 6);
  return Buffer.concat([payload, check]).toString("base64url");
}
const uint32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};
const int64 = (n: bigint) => {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(n);
  return b;
};
const refused = (key: string) => () => decodeIndexKey(scope, key);

describe("afterIndexKey: a forged key with a valid checksum is still checked", () => {
  it("the format as documented is what the service reads (forged keys of both versions decode)", () => {
    expect(decodeIndexKey(scope, forge({ total: 7, millis: 1_000n, id: "é" }))).toEqual({
      position: { joinedGroupAt: new Date(1_000), counteragentBoxId: "é" },
      totalCount: 7,
    });
    expect(decodeIndexKey(scope, forge({ version: 1, millis: -1n, id: "x" }))).toEqual({
      position: { joinedGroupAt: new Date(-1), counteragentBoxId: "x" },
      totalCount: undefined,
    });
  });

  it("a key the service writes is the documented format (checksum over box, group and payload)", () => {
    const position = { joinedGroupAt: new Date(1_000), counteragentBoxId: "é" };
    expect(encodeIndexKey(scope, position, 7)).toBe(forge({ total: 7, millis: 1_000n, id: "é" }));
    // TotalCount is clamped into the int32 range it travels in.
    expect(encodeIndexKey(scope, position, -3)).toBe(forge({ total: 0, millis: 1_000n, id: "é" }));
    expect(encodeIndexKey(scope, position, 2 ** 40)).toBe(
      forge({ total: 2 ** 31 - 1, millis: 1_000n, id: "é" }),
    );
  });

  it.each([
    [
      "an unknown version",
      forge({ raw: Buffer.concat([Buffer.from([3]), uint32(1), int64(0n), Buffer.from("c")]) }),
    ],
    ["version 0", forge({ raw: Buffer.concat([Buffer.from([0]), int64(0n), Buffer.from("c")]) })],
    ["an empty counteragent box id", forge({ id: "" })],
    ["a version 1 key with an empty id", forge({ version: 1, id: "" })],
    ["a time past the range of a date", forge({ millis: 8_640_000_000_000_001n })],
    ["a time before the range of a date", forge({ millis: -8_640_000_000_000_001n })],
    ["a TotalCount past int32", forge({ total: 2 ** 31 })],
    ["a payload too short for a time", forge({ raw: Buffer.from([2, 0, 0, 0, 1, 0, 0]) })],
    [
      "a payload one byte short of a time",
      forge({ raw: Buffer.concat([Buffer.from([2]), uint32(1), Buffer.alloc(7)]) }),
    ],
    // A version 2 payload of exactly its header, time and no id: one byte short of a key.
    [
      "a version 2 payload with no id byte",
      forge({ raw: Buffer.concat([Buffer.from([2]), uint32(1), int64(0n)]) }),
    ],
    [
      "a version 1 payload with no id byte",
      forge({ raw: Buffer.concat([Buffer.from([1]), int64(0n)]) }),
    ],
  ])("%s is refused", (_name, key) => {
    expect(refused(key)).toThrow(/^afterIndexKey is not a valid key for this group$/);
  });

  it("a key that came as a page_token is refused in those words", () => {
    expect(() => decodeIndexKey(scope, "AAAA", "page_token")).toThrow(
      /^page_token is not a token this list issued for these parameters$/,
    );
  });

  it("the limits of the date range and of int32 are accepted", () => {
    expect(
      decodeIndexKey(
        scope,
        forge({ millis: 8_640_000_000_000_000n }),
      ).position.joinedGroupAt.getTime(),
    ).toBe(8.64e15);
    expect(
      decodeIndexKey(
        scope,
        forge({ millis: -8_640_000_000_000_000n }),
      ).position.joinedGroupAt.getTime(),
    ).toBe(-8.64e15);
    expect(decodeIndexKey(scope, forge({ total: 2 ** 31 - 1 })).totalCount).toBe(2 ** 31 - 1);
    // The shortest key: one byte of id.
    expect(decodeIndexKey(scope, forge({ id: "c" })).position.counteragentBoxId).toBe("c");
  });

  it("the key's text: base64url only, at most MAX_INDEX_KEY_LENGTH characters", () => {
    const good = forge({});
    expect(refused(`${good}=`)).toThrow(/not a valid key/);
    expect(refused(`+${good}`)).toThrow(/not a valid key/);
    expect(refused(`${good}/`)).toThrow(/not a valid key/);
    expect(refused(` ${good}`)).toThrow(/not a valid key/);
    // The longest key accepted, and one character more.
    const longest = forge({ id: "x".repeat(Math.floor((MAX_INDEX_KEY_LENGTH * 3) / 4) - 19) });
    expect(longest.length).toBeLessThanOrEqual(MAX_INDEX_KEY_LENGTH);
    expect(longest.length).toBeGreaterThan(MAX_INDEX_KEY_LENGTH - 4);
    expect(decodeIndexKey(scope, longest).totalCount).toBe(5);
    const tooLong = forge({ id: "x".repeat(Math.floor((MAX_INDEX_KEY_LENGTH * 3) / 4) - 13) });
    expect(tooLong.length).toBeGreaterThan(MAX_INDEX_KEY_LENGTH);
    expect(refused(tooLong)).toThrow(/not a valid key/);
  });

  it("a key is bound to its box and its group, byte for byte", () => {
    const key = forge({});
    expect(() => decodeIndexKey({ ...scope, boxId: "b1 " }, key)).toThrow(/not a valid key/);
    expect(() => decodeIndexKey({ boxId: "b1\u0000g", counteragentGroupId: "1" }, key)).toThrow(
      /not a valid key/,
    );
  });
});

describe("the listing key", () => {
  beforeEach(() => {
    decodes.count = 0;
  });

  it("every common field type is skipped in place: no full decode", () => {
    const key = listingKeyOf({ joinedGroupAt: new Date(0), counteragentBoxId: "c" });
    const doc = BSON.serialize({
      double: 1.5,
      string: "listingKey",
      document: { listingKey: "no" },
      array: ["listingKey"],
      binary: new BSON.Binary(Buffer.from("listingKey")),
      objectId: new ObjectId(),
      boolean: true,
      date: new Date(),
      nothing: null,
      code: new BSON.Code("listingKey"),
      symbol: new BSON.BSONSymbol("listingKey"),
      int32: 7,
      timestamp: new Timestamp({ t: 1, i: 2 }),
      int64: Long.fromNumber(2 ** 40),
      decimal: BSON.Decimal128.fromString("1.5"),
      min: new BSON.MinKey(),
      max: new BSON.MaxKey(),
      listingKey: key,
      after: "x",
    });
    expect(listingKeyOfRaw(doc)).toBe(key);
    expect(decodes.count).toBe(0);
  });

  it("a field type not skipped in place (a regular expression) falls back to a full decode, with the same answer", () => {
    const doc = BSON.serialize({ re: new BSON.BSONRegExp("x", "i"), listingKey: "k" });
    expect(listingKeyOfRaw(doc)).toBe("k");
    expect(decodes.count).toBe(1);
  });

  it("null is read in place; another type, by a full decode", () => {
    expect(listingKeyOfRaw(BSON.serialize({ a: 1, listingKey: null }))).toBeNull();
    expect(decodes.count).toBe(0);
    expect(listingKeyOfRaw(BSON.serialize({ listingKey: 42 }))).toBe(42);
    expect(decodes.count).toBe(1);
  });

  it("the key is the field named exactly listingKey, at the document's own level", () => {
    expect(
      listingKeyOfRaw(BSON.serialize({ listingKe: "a", listingKeys: "b", xlistingKey: "c" })),
    ).toBeUndefined();
    expect(listingKeyOfRaw(BSON.serialize({ listingKeY: "a", listingKey: "b" }))).toBe("b");
    expect(listingKeyOfRaw(BSON.serialize({}))).toBeUndefined();
  });

  it("a key of exactly the time's 17 digits has no box id: not a listing key; digits only", () => {
    expect(positionOfListingKey("0".repeat(17))).toBeUndefined();
    expect(positionOfListingKey(`${"0".repeat(17)}c`)).toEqual({
      joinedGroupAt: new Date(-8.64e15),
      counteragentBoxId: "c",
    });
    expect(positionOfListingKey(`x${"0".repeat(16)}c`)).toBeUndefined();
    expect(positionOfListingKey(`${"0".repeat(16)}xc`)).toBeUndefined();
    expect(positionOfListingKey(`${"0".repeat(8)}-${"0".repeat(8)}c`)).toBeUndefined();
  });

  it("a member whose joinedGroupAt is not a date sorts first", () => {
    expect(listingKeyOf({ joinedGroupAt: new Date(Number.NaN), counteragentBoxId: "c" })).toBe(
      `${"0".repeat(17)}c`,
    );
  });
});
