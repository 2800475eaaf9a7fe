/**
 * afterIndexKey: an opaque, URL-safe page key. It encodes a position in a
 * group's listing (joinedGroupAt, counteragentBoxId) and the TotalCount
 * counted when the walk started (docs/api.md §6.2), sealed with a checksum over the
 * box and group it was issued for, so that a malformed, tampered or foreign
 * key is refused instead of silently misread.
 *
 *   version 2: 0x02 ‖ totalCount (uint32 BE) ‖ joinedGroupAt ms (int64 BE) ‖ counteragentBoxId (UTF-8) ‖ check (6 bytes)
 *   version 1: 0x01 ‖ joinedGroupAt ms (int64 BE) ‖ counteragentBoxId (UTF-8) ‖ check (6 bytes)
 *
 * check = the first 6 bytes of SHA-256(boxId ‖ 0 ‖ counteragentGroupId ‖ 0 ‖ everything before it).
 * Version 1 keys (issued before TotalCount travelled in the key) are still
 * accepted: they carry no total, so the page that receives one counts again.
 */
import { createHash } from "node:crypto";
import { invalidArgument } from "./errors";
import type { GroupPosition } from "./model";

const VERSION_1 = 1;
const VERSION = 2;
const CHECK_BYTES = 6;
/** Enough for a key of a 256-character counteragent box id of 4-byte UTF-8 characters. */
export const MAX_INDEX_KEY_LENGTH = 1_400;
/** The range of a JavaScript Date, in milliseconds either side of the epoch. */
const MAX_DATE_MS = 8.64e15;
/** TotalCount is an int32 on the wire. */
const MAX_TOTAL = 2_147_483_647;

export interface KeyScope {
  readonly boxId: string;
  readonly counteragentGroupId: string;
}

/** What a key carries. */
export interface PageKey {
  readonly position: GroupPosition;
  /** Counted when the walk started; undefined for a version 1 key. */
  readonly totalCount: number | undefined;
}

export function encodeIndexKey(
  scope: KeyScope,
  position: GroupPosition,
  totalCount: number,
): string {
  const total = Buffer.alloc(4);
  total.writeUInt32BE(Math.min(Math.max(0, Math.trunc(totalCount)), MAX_TOTAL));
  const payload = Buffer.concat([
    Buffer.from([VERSION]),
    total,
    bigEndian64(position.joinedGroupAt.getTime()),
    Buffer.from(position.counteragentBoxId),
  ]);
  return Buffer.concat([payload, check(scope, payload)]).toString("base64url");
}

/** What a key stands for; 400 when it is not a key issued for this box and group (`name`: the parameter it came in). */
export function decodeIndexKey(scope: KeyScope, key: string, name = "afterIndexKey"): PageKey {
  const bad = () =>
    invalidArgument(
      name === "afterIndexKey"
        ? "afterIndexKey is not a valid key for this group"
        : `${name} is not a token this list issued for these parameters`,
    );
  if (key.length > MAX_INDEX_KEY_LENGTH || !/^[A-Za-z0-9_-]+$/.test(key)) {
    throw bad();
  }
  const bytes = Buffer.from(key, "base64url");
  const version = bytes[0];
  const header = version === VERSION ? 1 + 4 : version === VERSION_1 ? 1 : undefined;
  if (header === undefined || bytes.length < header + 8 + 1 + CHECK_BYTES) {
    throw bad();
  }
  const payload = bytes.subarray(0, bytes.length - CHECK_BYTES);
  if (!check(scope, payload).equals(bytes.subarray(bytes.length - CHECK_BYTES))) {
    throw bad();
  }
  const totalCount = version === VERSION ? payload.readUInt32BE(1) : undefined;
  const millis = Number(payload.readBigInt64BE(header));
  const counteragentBoxId = payload.subarray(header + 8).toString("utf8");
  if (
    !Number.isSafeInteger(millis) ||
    Math.abs(millis) > MAX_DATE_MS ||
    // (The length check above leaves at least one byte of id: never "".)
    (totalCount ?? 0) > MAX_TOTAL
  ) {
    throw bad();
  }
  return { position: { joinedGroupAt: new Date(millis), counteragentBoxId }, totalCount };
}

function bigEndian64(value: number): Buffer {
  const buffer = Buffer.alloc(8);
  buffer.writeBigInt64BE(BigInt(value));
  return buffer;
}

function check(scope: KeyScope, payload: Buffer): Buffer {
  // Strings are hashed (and below, written) as UTF-8: Node's default.
  const bound = createHash("sha256").update(
    `${scope.boxId}\u0000${scope.counteragentGroupId}\u0000`,
  );
  return bound.update(payload).digest().subarray(0, CHECK_BYTES);
}
