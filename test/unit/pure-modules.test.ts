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

describe("afterIndexKey", () => {
  const scope = { boxId: "b1", counteragentGroupId: "g1" };
  const position = {
    joinedGroupAt: new Date("2026-01-02T03:04:05.678Z"),
    counteragentBoxId: "c-7",
  };

  it("round-trips a position", () => {
    expect(decodeIndexKey(scope, encodeIndexKey(scope, position))).toEqual(position);
  });

  it.each([
    ["another box", { ...scope, boxId: "b2" }],
    ["another group", { ...scope, counteragentGroupId: "g2" }],
  ])("a key of %s is refused", (_name, other) => {
    expect(() => decodeIndexKey(other, encodeIndexKey(scope, position))).toThrow(/not a valid key/);
  });

  it("an altered key is refused", () => {
    const key = encodeIndexKey(scope, position);
    const altered = `${key.slice(0, 5)}${key[5] === "A" ? "B" : "A"}${key.slice(6)}`;
    expect(() => decodeIndexKey(scope, altered)).toThrow(/not a valid key/);
  });

  it("a key of the longest counteragent box id (256 four-byte characters) fits and round-trips", () => {
    const long = { ...position, counteragentBoxId: "😀".repeat(256) };
    const key = encodeIndexKey(scope, long);
    expect(key.length).toBeLessThanOrEqual(MAX_INDEX_KEY_LENGTH);
    expect(decodeIndexKey(scope, key)).toEqual(long);
  });

  it("a checksummed key whose time lies outside the range of a date is refused", () => {
    // Forged: the checksum is not secret, but the position must still be a real one.
    const payload = Buffer.concat([Buffer.from([1]), Buffer.alloc(8), Buffer.from("c-7")]);
    payload.writeBigInt64BE(9_000_000_000_000_000n, 1);
    const check = createHash("sha256")
      .update(`${scope.boxId}\u0000${scope.counteragentGroupId}\u0000`, "utf8")
      .update(payload)
      .digest()
      .subarray(0, 6);
    expect(() =>
      decodeIndexKey(scope, Buffer.concat([payload, check]).toString("base64url")),
    ).toThrow(/not a valid key/);
  });

  it.each(["", "!!!", "a".repeat(1_500), "AAAA"])("a malformed key %j is refused", (key) => {
    expect(() => decodeIndexKey(scope, key)).toThrow(/not a valid key/);
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
