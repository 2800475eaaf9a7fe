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
