/**
 * HTTP/2 frames built by hand, for the hostile-input tier: what a broken or
 * hostile client sends, frame by frame, with no HTTP/2 library in between
 * to refuse it. Header blocks are HPACK literals without Huffman coding.
 */

export const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

export const FrameType = {
  DATA: 0x0,
  HEADERS: 0x1,
  PRIORITY: 0x2,
  RST_STREAM: 0x3,
  SETTINGS: 0x4,
  PING: 0x6,
  GOAWAY: 0x7,
  WINDOW_UPDATE: 0x8,
  CONTINUATION: 0x9,
} as const;

export const Flag = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4 } as const;

/** One frame: 24-bit length, type, flags, 31-bit stream id, payload. */
export function frame(
  type: number,
  flags: number,
  streamId: number,
  payload: Uint8Array = new Uint8Array(),
): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(streamId & 0x7fffffff, 5);
  return Buffer.concat([head, Buffer.from(payload)]);
}

/** An HPACK string: length (7-bit prefix integer, no Huffman), then the bytes. */
function hpackString(value: string): Buffer {
  const bytes = Buffer.from(value, "latin1");
  return Buffer.concat([hpackInteger(bytes.length, 7, 0x00), bytes]);
}

function hpackInteger(value: number, prefixBits: number, firstByteFlags: number): Buffer {
  const max = (1 << prefixBits) - 1;
  if (value < max) return Buffer.from([firstByteFlags | value]);
  const out = [firstByteFlags | max];
  let rest = value - max;
  while (rest >= 128) {
    out.push((rest % 128) + 128);
    rest = Math.floor(rest / 128);
  }
  out.push(rest);
  return Buffer.from(out);
}

/** A header block of literal fields without indexing (new names), in order. */
export function headerBlock(fields: readonly [string, string][]): Buffer {
  return Buffer.concat(
    fields.map(([name, value]) =>
      Buffer.concat([Buffer.from([0x00]), hpackString(name), hpackString(value)]),
    ),
  );
}

/** A GET request's HEADERS frame on `streamId`. */
export function getRequest(streamId: number, path: string, endStream = true): Buffer {
  return frame(
    FrameType.HEADERS,
    Flag.END_HEADERS | (endStream ? Flag.END_STREAM : 0),
    streamId,
    headerBlock([
      [":method", "GET"],
      [":scheme", "http"],
      [":path", path],
      [":authority", "x"],
    ]),
  );
}

/** A SETTINGS frame: each [identifier, value] (e.g. [0x4, 0]: SETTINGS_INITIAL_WINDOW_SIZE 0). */
export function settings(parameters: readonly [number, number][] = []): Buffer {
  const payload = Buffer.alloc(6 * parameters.length);
  parameters.forEach(([id, value], i) => {
    payload.writeUInt16BE(id, 6 * i);
    payload.writeUInt32BE(value, 6 * i + 2);
  });
  return frame(FrameType.SETTINGS, 0, 0, payload);
}

export function rstStream(streamId: number, code = 0x8 /* CANCEL */): Buffer {
  const payload = Buffer.alloc(4);
  payload.writeUInt32BE(code);
  return frame(FrameType.RST_STREAM, 0, streamId, payload);
}

export function goAway(lastStreamId = 0, code = 0): Buffer {
  const payload = Buffer.alloc(8);
  payload.writeUInt32BE(lastStreamId & 0x7fffffff, 0);
  payload.writeUInt32BE(code, 4);
  return frame(FrameType.GOAWAY, 0, 0, payload);
}

export function ping(data = "12345678", ack = false): Buffer {
  return frame(
    FrameType.PING,
    ack ? Flag.ACK : 0,
    0,
    Buffer.from(data.padEnd(8).slice(0, 8), "latin1"),
  );
}

export function windowUpdate(streamId: number, increment: number): Buffer {
  const payload = Buffer.alloc(4);
  payload.writeUInt32BE(increment & 0x7fffffff);
  return frame(FrameType.WINDOW_UPDATE, 0, streamId, payload);
}

/** The frames in `bytes` that the server sent (type and stream id), after its SETTINGS. */
export function framesOf(
  bytes: Buffer,
): { type: number; flags: number; streamId: number; payload: Buffer }[] {
  const out: { type: number; flags: number; streamId: number; payload: Buffer }[] = [];
  let at = 0;
  while (at + 9 <= bytes.length) {
    const length = bytes.readUIntBE(at, 3);
    if (at + 9 + length > bytes.length) break;
    out.push({
      type: bytes[at + 3] as number,
      flags: bytes[at + 4] as number,
      streamId: bytes.readUInt32BE(at + 5) & 0x7fffffff,
      payload: bytes.subarray(at + 9, at + 9 + length),
    });
    at += 9 + length;
  }
  return out;
}
