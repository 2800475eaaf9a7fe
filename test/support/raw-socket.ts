/**
 * Raw TCP exchanges with the port, for the hostile-input tier: bytes no
 * well-behaved client would send, and what came back before the server
 * closed the connection (or went quiet).
 */
import net from "node:net";

export interface RawExchange {
  /** Everything the server sent, as latin1 text (the status line and headers are ASCII). */
  readonly text: string;
  readonly bytes: Buffer;
  /** The server closed the connection (rather than the wait running out). */
  readonly closedByServer: boolean;
}

/**
 * Sends `chunks` in order (each its own write, `gapMs` apart), then reads
 * until the server closes the connection or nothing arrives for `quietMs`.
 */
export function exchange(
  port: number,
  chunks: readonly (string | Buffer)[],
  options: {
    quietMs?: number;
    gapMs?: number;
    endAfterWrite?: boolean;
    /** The client's own address (any 127.x.y.z on Linux): another client, as the server sees it. */
    localAddress?: string;
  } = {},
): Promise<RawExchange> {
  const quietMs = options.quietMs ?? 1_000;
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: "127.0.0.1", localAddress: options.localAddress });
    const received: Buffer[] = [];
    let quiet: NodeJS.Timeout | undefined;
    let settled = false;
    const finish = (closedByServer: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(quiet);
      socket.destroy();
      const bytes = Buffer.concat(received);
      resolve({ text: bytes.toString("latin1"), bytes, closedByServer });
    };
    const armQuiet = () => {
      clearTimeout(quiet);
      quiet = setTimeout(() => finish(false), quietMs);
    };
    socket.on("data", (chunk: Buffer) => {
      received.push(chunk);
      armQuiet();
    });
    socket.once("close", () => finish(true));
    socket.on("error", (error: NodeJS.ErrnoException) => {
      // A reset after the server answered is a close; before any answer, the caller learns it.
      if (error.code === "ECONNRESET" || error.code === "EPIPE") finish(true);
      else if (!settled) {
        settled = true;
        clearTimeout(quiet);
        reject(error);
      }
    });
    socket.once("connect", async () => {
      for (const [i, chunk] of chunks.entries()) {
        if (socket.destroyed) return;
        if (i > 0 && options.gapMs) await new Promise((r) => setTimeout(r, options.gapMs));
        socket.write(chunk);
      }
      if (options.endAfterWrite) socket.end();
      armQuiet();
    });
  });
}

/** The status code of the first response in `text`, or undefined when none came. */
export function statusOf(text: string): number | undefined {
  const match = /^HTTP\/1\.[01] (\d{3}) /.exec(text);
  return match ? Number(match[1]) : undefined;
}

/** How many HTTP/1 responses `text` holds (status lines at the start of a response). */
export function responseCount(text: string): number {
  return text.match(/(^|\r\n)HTTP\/1\.[01] \d{3} /g)?.length ?? 0;
}
