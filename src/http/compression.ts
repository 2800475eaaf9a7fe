/**
 * HTTP content coding for the answers the front writes itself (legacy paths,
 * docs) and for legacy request bodies (SPEC §3). RPC protocols negotiate
 * their own compression in connect-es (the router's acceptCompression),
 * compressing with the same function (`RPC_COMPRESSION` in router.ts).
 */
import { promisify } from "node:util";
import zlib from "node:zlib";

/** Bodies smaller than this are sent as they are: compressing them costs more than it saves. */
export const COMPRESS_MIN_BYTES = 1024;

export type ContentCoding = "br" | "gzip";

const gzip = promisify(zlib.gzip);
const brotli = promisify(zlib.brotliCompress);

/** The coding to answer with, by the client's Accept-Encoding (q-values honoured; br preferred on a tie). */
export function negotiateCoding(acceptEncoding: string | undefined): ContentCoding | undefined {
  if (!acceptEncoding) return undefined;
  let best: { coding: ContentCoding; q: number } | undefined;
  for (const part of acceptEncoding.split(",")) {
    const [name = "", ...params] = part.trim().toLowerCase().split(";");
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    const coding = name === "br" ? "br" : name === "gzip" || name === "x-gzip" ? "gzip" : undefined;
    if (!coding || !(q > 0)) continue;
    if (!best || q > best.q || (q === best.q && coding === "br")) best = { coding, q };
  }
  return best?.coding;
}

/**
 * Bodies up to this size are compressed synchronously. For a few KiB the
 * callback API costs several times the compression itself (a zlib stream,
 * a thread-pool hop): a 4 KB page takes ~31 µs of CPU with gzipSync and
 * ~155 µs with zlib.gzip, for the same bytes. Larger bodies (the docs) stay
 * off the event loop.
 */
const SYNC_MAX_BYTES = 64 * 1024;

/** Brotli quality: 5 compresses a page as well as the default 11 (137 vs 138 bytes) in ~1/80 of the time. */
const BROTLI_QUALITY = 5;

/** Compresses for the wire: brotli at a middle quality (fast enough per request), gzip at the default level. */
export function compress(
  body: Uint8Array,
  coding: ContentCoding,
  quality = BROTLI_QUALITY,
): Promise<Buffer> {
  const options = { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: quality } };
  if (body.length <= SYNC_MAX_BYTES) {
    return Promise.resolve(
      coding === "br" ? zlib.brotliCompressSync(body, options) : zlib.gzipSync(body),
    );
  }
  return coding === "br" ? brotli(body, options) : gzip(body);
}

export class BodyDecodingError extends Error {
  override readonly name = "BodyDecodingError";
  constructor(
    readonly kind: "unsupported" | "malformed" | "too-large",
    message: string,
  ) {
    super(message);
  }
}

/**
 * The body without its Content-Encoding (identity, gzip, br). The limit
 * applies to the decoded size: a small bomb that expands past it stops at
 * the limit instead of filling memory.
 */
export async function decodeBody(
  body: Buffer,
  contentEncoding: string | undefined,
  maxBytes: number,
): Promise<Buffer> {
  const coding = (contentEncoding ?? "identity").trim().toLowerCase();
  if (coding === "" || coding === "identity") return body;
  const inflate =
    coding === "gzip" || coding === "x-gzip"
      ? promisify(zlib.gunzip)
      : coding === "br"
        ? promisify(zlib.brotliDecompress)
        : undefined;
  if (!inflate) {
    throw new BodyDecodingError(
      "unsupported",
      `Content-Encoding "${coding.slice(0, 40)}" is not supported: use gzip, br or none`,
    );
  }
  let decoded: Buffer;
  try {
    decoded = await inflate(body, { maxOutputLength: maxBytes + 1 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE") {
      throw new BodyDecodingError(
        "too-large",
        `the decoded request body is larger than ${maxBytes} bytes`,
      );
    }
    throw new BodyDecodingError("malformed", `the request body is not valid ${coding}`);
  }
  if (decoded.length > maxBytes) {
    throw new BodyDecodingError(
      "too-large",
      `the decoded request body is larger than ${maxBytes} bytes`,
    );
  }
  return decoded;
}
