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
  return {
    joinedGroupAt: new Date(Number(BigInt(digits) - OFFSET_MS)),
    counteragentBoxId: key.slice(TIME_DIGITS),
  };
}

const KEY_FIELD = "listingKey";
const KEY_NAME = Buffer.from(KEY_FIELD, "utf8");
const BSON_STRING = 0x02;
const BSON_NULL = 0x0a;

/**
 * The listingKey of a document given as raw BSON, without decoding its other
 * fields (bson's own element parser, the one the driver uses). A page asks
 * for the key alone, but a server may ignore the projection (the embedded
 * engine returns whole documents): decoding every field of every member
 * would then be most of a page's cost. A key that is not a string or null
 * (never written by this service) is read by a full decode.
 */
export function listingKeyOfRaw(doc: Uint8Array): unknown {
  for (const [type, nameOffset, nameLength, offset, length] of BSON.onDemand.parseToElements(
    doc,
    0,
  )) {
    if (nameLength !== KEY_NAME.length || !sameBytes(doc, nameOffset, KEY_NAME)) continue;
    if (type === BSON_STRING) {
      // int32 byte length, the bytes, a NUL.
      return BSON.onDemand.ByteUtils.toUTF8(doc, offset + 4, offset + length - 1, true);
    }
    if (type === BSON_NULL) return null;
    return BSON.deserialize(doc)[KEY_FIELD];
  }
  return undefined;
}

function sameBytes(doc: Uint8Array, at: number, name: Uint8Array): boolean {
  for (let i = 0; i < name.length; i++) if (doc[at + i] !== name[i]) return false;
  return true;
}
