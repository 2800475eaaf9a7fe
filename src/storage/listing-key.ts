/**
 * The listing key: one string field on every counteragent that sorts exactly
 * as (joinedGroupAt, counteragentBoxId) do, so that a page is one range on one
 * index field — `listingKey > k` — which every query planner turns into the
 * same single bounded index scan (no `$or` of two ranges for it to choose
 * between). MongoDB compares strings byte by byte (UTF-8, no collation), so a
 * fixed-width time followed by the box id sorts as the pair does.
 *
 *   listingKey = 17 decimal digits of (joinedGroupAt in ms + 8.64e15) ‖ counteragentBoxId
 *
 * 8.64e15 ms is the range of a JavaScript Date either side of the epoch, so
 * the offset time is never negative and never wider than 17 digits.
 * Written by every write that sets joinedGroupAt or counteragentGroupId
 * (moves, group deletion, fixtures); members written by others without one
 * are given one when a walk of their group starts (counteragent-store.ts).
 */
import { BSON } from "mongodb";
import type { GroupPosition } from "../domain/model";

const OFFSET_MS = 8_640_000_000_000_000n;
const OFFSET_MS_NUMBER = 8_640_000_000_000_000;
const TIME_DIGITS = 17;

export function listingKeyOf(position: GroupPosition): string {
  const ms = position.joinedGroupAt.getTime();
  // A member whose joinedGroupAt is not a date (written by another writer) sorts first.
  const offset = Number.isFinite(ms) ? BigInt(ms) + OFFSET_MS : 0n;
  return offset.toString().padStart(TIME_DIGITS, "0") + position.counteragentBoxId;
}

/** The position a listing key stands for; undefined when it is not one. */
export function positionOfListingKey(key: unknown): GroupPosition | undefined {
  if (typeof key !== "string" || key.length <= TIME_DIGITS) return undefined;
  const digits = key.slice(0, TIME_DIGITS);
  if (!/^\d+$/.test(digits)) return undefined;
  const offset = Number(digits);
  return {
    // Exact in a double for every date before the year 13,600; beyond, in BigInt.
    joinedGroupAt: new Date(
      Number.isSafeInteger(offset) ? offset - OFFSET_MS_NUMBER : Number(BigInt(digits) - OFFSET_MS),
    ),
    counteragentBoxId: key.slice(TIME_DIGITS),
  };
}

const KEY_FIELD = "listingKey";
const KEY_NAME = Buffer.from(KEY_FIELD);
const BSON_STRING = 0x02;
const BSON_NULL = 0x0a;

/**
 * The listingKey of a document given as raw BSON, without decoding its other
 * fields or allocating anything but the key. A page asks for the key alone,
 * but a server may ignore the projection (the embedded engine returns whole
 * documents): decoding every field of every member would then be most of a
 * page's cost. A key that is not a string or null (never written by this
 * service), or a field of a type not skipped here, is read by a full decode.
 */
export function listingKeyOfRaw(doc: Uint8Array): unknown {
  // Stryker disable next-line ArithmeticOperator,EqualityOperator,ConditionalExpression: reading past the last element meets type 0, which the full decode reads: the same answer
  const end = doc.length - 1; // the document's closing NUL
  let at = 4; // after the int32 size
  // Stryker disable next-line EqualityOperator: the same (see above)
  while (at < end) {
    const type = doc[at++] as number;
    const nameStart = at;
    // Stryker disable next-line ConditionalExpression,EqualityOperator: a name always ends with a NUL inside the document the driver gives
    while (at < end && doc[at] !== 0) at++;
    const isKey = at - nameStart === KEY_NAME.length && sameBytes(doc, nameStart, KEY_NAME);
    at++; // the name's NUL
    if (isKey) {
      if (type === BSON_STRING) {
        // int32 byte length (the NUL included), the bytes, a NUL.
        return Buffer.from(doc.buffer, doc.byteOffset, doc.byteLength).toString(
          "utf8",
          at + 4,
          at + 4 + int32(doc, at) - 1,
        );
      }
      if (type === BSON_NULL) return null;
      return BSON.deserialize(doc)[KEY_FIELD];
    }
    const size = valueSize(doc, type, at);
    if (size === undefined) return BSON.deserialize(doc)[KEY_FIELD];
    at += size;
  }
  return undefined;
}

function int32(doc: Uint8Array, at: number): number {
  return (
    (doc[at] as number) |
    ((doc[at + 1] as number) << 8) |
    ((doc[at + 2] as number) << 16) |
    ((doc[at + 3] as number) << 24)
  );
}

/** Bytes of a BSON value of `type` at `at`; undefined for types not skipped here. */
function valueSize(doc: Uint8Array, type: number, at: number): number | undefined {
  switch (type) {
    case 0x01: // double
    case 0x09: // UTC datetime
    case 0x11: // timestamp
    case 0x12: // int64
      return 8;
    case 0x02: // string: int32 length, bytes
    case 0x0d: // JavaScript code, same layout
    case 0x0e: // symbol, same layout
      return 4 + int32(doc, at);
    case 0x03: // document: its int32 size counts itself
    case 0x04: // array
      return int32(doc, at);
    case 0x05: // binary: int32 length, subtype, bytes
      return 5 + int32(doc, at);
    case 0x07: // ObjectId
      return 12;
    case 0x08: // boolean
      return 1;
    case 0x06: // undefined
    case 0x0a: // null
    case 0x7f: // max key
    case 0xff: // min key
      return 0;
    case 0x10: // int32
      return 4;
    case 0x13: // decimal128
      return 16;
    // Stryker disable next-line ConditionalExpression: without the default the function returns undefined all the same
    default:
      return undefined;
  }
}

function sameBytes(doc: Uint8Array, at: number, name: Uint8Array): boolean {
  for (let i = 0; i < name.length; i++) if (doc[at + i] !== name[i]) return false;
  return true;
}
