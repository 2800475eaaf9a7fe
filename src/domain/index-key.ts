/**
 * afterIndexKey: an opaque, URL-safe page key. It encodes only a position in
 * a group's listing (joinedGroupAt, counteragentBoxId), sealed with a
 * checksum over the box and group it was issued for, so that a malformed,
 * tampered or foreign key is refused instead of silently misread.
 */
import { createHash } from "node:crypto";
import { invalidArgument } from "./errors";
import type { GroupPosition } from "./model";

const VERSION = 1;
const CHECK_BYTES = 6;
/** Enough for a key of a 256-character counteragent box id of 4-byte UTF-8 characters. */
export const MAX_INDEX_KEY_LENGTH = 1_400;
/** The range of a JavaScript Date, in milliseconds either side of the epoch. */
const MAX_DATE_MS = 8.64e15;

export interface KeyScope {
  readonly boxId: string;
  readonly counteragentGroupId: string;
}

export function encodeIndexKey(scope: KeyScope, position: GroupPosition): string {
  const payload = Buffer.concat([
    Buffer.from([VERSION]),
    bigEndian64(position.joinedGroupAt.getTime()),
    Buffer.from(position.counteragentBoxId, "utf8"),
  ]);
  return Buffer.concat([payload, check(scope, payload)]).toString("base64url");
}

/** The position a key stands for; 400 when it is not a key issued for this box and group. */
export function decodeIndexKey(scope: KeyScope, key: string): GroupPosition {
  const bad = () =>
    invalidArgument("afterIndexKey is not a valid key for this group", "Http.BadRequest");
  if (key.length > MAX_INDEX_KEY_LENGTH || !/^[A-Za-z0-9_-]+$/.test(key)) {
    throw bad();
  }
  const bytes = Buffer.from(key, "base64url");
  if (bytes.length < 1 + 8 + 1 + CHECK_BYTES || bytes[0] !== VERSION) {
    throw bad();
  }
  const payload = bytes.subarray(0, bytes.length - CHECK_BYTES);
  if (!check(scope, payload).equals(bytes.subarray(bytes.length - CHECK_BYTES))) {
    throw bad();
  }
  const millis = Number(payload.readBigInt64BE(1));
  const counteragentBoxId = payload.subarray(9).toString("utf8");
  if (!Number.isSafeInteger(millis) || Math.abs(millis) > MAX_DATE_MS || counteragentBoxId === "") {
    throw bad();
  }
  return { joinedGroupAt: new Date(millis), counteragentBoxId };
}

function bigEndian64(value: number): Buffer {
  const buffer = Buffer.alloc(8);
  buffer.writeBigInt64BE(BigInt(value));
  return buffer;
}

function check(scope: KeyScope, payload: Buffer): Buffer {
  return createHash("sha256")
    .update(`${scope.boxId}\u0000${scope.counteragentGroupId}\u0000`, "utf8")
    .update(payload)
    .digest()
    .subarray(0, CHECK_BYTES);
}
