/** Pure modules, tested without a server: index keys, legacy JSON, query values, page-size limits. */
import { createHash } from "node:crypto";
import { create, getOption, hasOption } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { CounteragentService } from "../../gen/docflow/api/v1/counteragents_pb";
import { CounteragentFromGroupResponseSchema } from "../../gen/docflow/legacy/counteragents_pb";
import { integer_range } from "../../gen/docflow/legacy/options_pb";
import {
  SubscriptionSchema,
  SubscriptionsToUpdateSchema,
} from "../../gen/docflow/legacy/subscriptions_pb";
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from "../../src/domain/counteragents";
import { decodeIndexKey, encodeIndexKey, MAX_INDEX_KEY_LENGTH } from "../../src/domain/index-key";
import { legacyJsonToMessage, messageToLegacyJson } from "../../src/legacy/legacy-json";
import { QueryError, readQuery } from "../../src/legacy/query";
import { listingKeyOf, positionOfListingKey } from "../../src/storage/listing-key";

describe("afterIndexKey", () => {
  const scope = { boxId: "b1", counteragentGroupId: "g1" };
  const position = {
    joinedGroupAt: new Date("2026-01-02T03:04:05.678Z"),
    counteragentBoxId: "c-7",
  };
  /** A key as version 1 wrote it (no TotalCount), with its checksum. */
  const version1Key = (millis: bigint, id: string) => {
    const payload = Buffer.concat([Buffer.from([1]), Buffer.alloc(8), Buffer.from(id)]);
    payload.writeBigInt64BE(millis, 1);
    const check = createHash("sha256")
      .update(`${scope.boxId}\u0000${scope.counteragentGroupId}\u0000`, "utf8")
      .update(payload)
      .digest()
      .subarray(0, 6);
    return Buffer.concat([payload, check]).toString("base64url");
  };

  it("round-trips a position and the walk's TotalCount", () => {
    expect(decodeIndexKey(scope, encodeIndexKey(scope, position, 250))).toEqual({
      position,
      totalCount: 250,
    });
    expect(decodeIndexKey(scope, encodeIndexKey(scope, position, 0)).totalCount).toBe(0);
    expect(decodeIndexKey(scope, encodeIndexKey(scope, position, 2 ** 31 - 1)).totalCount).toBe(
      2 ** 31 - 1,
    );
  });

  it("a key of the earlier version (no TotalCount) is still read: its page counts again", () => {
    const key = version1Key(BigInt(position.joinedGroupAt.getTime()), "c-7");
    expect(decodeIndexKey(scope, key)).toEqual({ position, totalCount: undefined });
  });

  it.each([
    ["another box", { ...scope, boxId: "b2" }],
    ["another group", { ...scope, counteragentGroupId: "g2" }],
  ])("a key of %s is refused", (_name, other) => {
    expect(() => decodeIndexKey(other, encodeIndexKey(scope, position, 3))).toThrow(
      /not a valid key/,
    );
  });

  it("an altered key is refused, an altered TotalCount too", () => {
    const key = encodeIndexKey(scope, position, 3);
    const altered = `${key.slice(0, 5)}${key[5] === "A" ? "B" : "A"}${key.slice(6)}`;
    expect(() => decodeIndexKey(scope, altered)).toThrow(/not a valid key/);
    const bytes = Buffer.from(key, "base64url");
    bytes[4] = 4; // TotalCount 3 → 4, checksum unchanged
    expect(() => decodeIndexKey(scope, bytes.toString("base64url"))).toThrow(/not a valid key/);
  });

  it("a key of the longest counteragent box id (256 four-byte characters) fits and round-trips", () => {
    const long = { ...position, counteragentBoxId: "😀".repeat(256) };
    const key = encodeIndexKey(scope, long, 2 ** 31 - 1);
    expect(key.length).toBeLessThanOrEqual(MAX_INDEX_KEY_LENGTH);
    expect(decodeIndexKey(scope, key).position).toEqual(long);
  });

  it("a checksummed key whose time lies outside the range of a date is refused", () => {
    // Forged: the checksum is not secret, but the position must still be a real one.
    expect(() => decodeIndexKey(scope, version1Key(9_000_000_000_000_000n, "c-7"))).toThrow(
      /not a valid key/,
    );
  });

  it.each(["", "!!!", "a".repeat(1_500), "AAAA"])("a malformed key %j is refused", (key) => {
    expect(() => decodeIndexKey(scope, key)).toThrow(/not a valid key/);
  });
});

describe("listing key", () => {
  const at = (iso: string, id: string) => ({ joinedGroupAt: new Date(iso), counteragentBoxId: id });
  it("sorts as (joinedGroupAt, counteragentBoxId) does, byte by byte as MongoDB compares strings", () => {
    const positions = [
      at("1969-12-31T23:59:59.999Z", "z"),
      at("1970-01-01T00:00:00.000Z", "a"),
      at("2026-01-01T00:00:00.000Z", "a"),
      at("2026-01-01T00:00:00.000Z", "a0"),
      at("2026-01-01T00:00:00.000Z", "b"),
      at("2026-01-01T00:00:00.000Z", "é"),
      at("2026-01-01T00:00:00.000Z", "😀"),
      at("2026-01-01T00:00:00.001Z", "a"),
      at("+275760-09-13T00:00:00.000Z", "a"),
    ];
    positions.unshift({ joinedGroupAt: new Date(-8.64e15), counteragentBoxId: "a" });
    const keys = positions.map(listingKeyOf);
    const byBytes = [...keys].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
    expect(byBytes).toEqual(keys);
    for (const [i, key] of keys.entries()) expect(positionOfListingKey(key)).toEqual(positions[i]);
  });
  it("anything else is not a listing key", () => {
    for (const key of [undefined, null, 7, "", "123", "x".repeat(20)]) {
      expect(positionOfListingKey(key)).toBeUndefined();
    }
  });
});

describe("legacy JSON", () => {
  it('writes bools marked json_string as "true"/"false" and TotalCount 0 explicitly', () => {
    const update = create(SubscriptionsToUpdateSchema, {
      Subscriptions: [create(SubscriptionSchema, { Id: "News", IsSubscribed: false })],
    });
    expect(messageToLegacyJson(SubscriptionsToUpdateSchema, update)).toBe(
      '{"Subscriptions":[{"Id":"News","IsSubscribed":"false"}]}',
    );
    const empty = create(CounteragentFromGroupResponseSchema, { TotalCount: 0 });
    expect(messageToLegacyJson(CounteragentFromGroupResponseSchema, empty)).toBe(
      '{"CounteragentBoxId":[],"TotalCount":0}',
    );
  });

  it("reads the quoted form and JSON booleans, and ignores unknown fields", () => {
    const message = legacyJsonToMessage(
      SubscriptionsToUpdateSchema,
      '{"Subscriptions":[{"Id":"A","IsSubscribed":"true"},{"Id":"B","IsSubscribed":false,"X":1}],"Y":2}',
    );
    expect(message.Subscriptions.map((s) => [s.Id, s.IsSubscribed])).toEqual([
      ["A", true],
      ["B", false],
    ]);
  });

  it.each(['{"Subscriptions":[{"Id":"A","IsSubscribed":"yes"}]}', "[", '"x"'])(
    "refuses %s",
    (text) => {
      expect(() => legacyJsonToMessage(SubscriptionsToUpdateSchema, text)).toThrow();
    },
  );
});

describe("query values", () => {
  const fields = CounteragentService.method.getCounteragentsFromGroup.input.fields;

  it("reads names case-insensitively; bare keys and empty values are absent; unknown ones ignored", () => {
    expect(
      readQuery(
        new URLSearchParams("BOXID=b&counteragentGroupId=&afterIndexKey&count=7&x=1"),
        fields,
      ),
    ).toEqual({ boxId: "b", count: 7 });
  });

  it.each(["1.5", "1e2", "abc", "0x10", "99999999999", " 5"])("count=%s is refused", (value) => {
    expect(() =>
      readQuery(new URLSearchParams(`count=${encodeURIComponent(value)}`), fields),
    ).toThrow(QueryError);
  });
});

describe("page sizes: one source", () => {
  it("the proto's integer_range on count agrees with the domain's limits", () => {
    const count = CounteragentService.method.getCounteragentsFromGroup.input.fields.find(
      (f) => f.name === "count",
    );
    expect(count && hasOption(count, integer_range)).toBe(true);
    const range = count && getOption(count, integer_range);
    expect(Number(range?.min)).toBe(1);
    expect(Number(range?.max)).toBe(MAX_PAGE_SIZE);
    expect(Number(range?.default)).toBe(DEFAULT_PAGE_SIZE);
  });
});
