/**
 * Which protocol a new connection speaks, and so which server gets it: on
 * TLS, what ALPN agreed; otherwise (cleartext, or TLS without ALPN) the
 * first bytes — the h2 connection preface is HTTP/2, anything else
 * HTTP/1.1 — awaited within FIRST_BYTE_TIMEOUT_MS. An HTTP/2 connection over
 * MAX_CONNECTIONS is refused here, before any session exists.
 */
import type http from "node:http";
import type http2 from "node:http2";
import type { Socket } from "node:net";
import { type Connections, type LogClosed, refuseH2 } from "./connections";

const H2_PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

/** Hands a connection (cleartext, or TLS once the handshake is done) to the server of its protocol. */
export type Dispatch = (socket: Socket, alpn: string | false | null | undefined) => void;

export function createDispatch(
  h1: http.Server,
  h2: http2.Http2Server,
  connections: Connections,
  firstByteMs: number,
  closed: LogClosed,
): Dispatch {
  return (socket, alpn) => {
    if (alpn === "h2" || alpn === "http/1.1") {
      // TLS said which protocol the client speaks.
      if (alpn === "h2" && connections.isOverLimit(socket)) {
        refuseH2(socket);
        return;
      }
      if (alpn === "h2") connections.markH2(socket);
      (alpn === "h2" ? h2 : h1).emit("connection", socket);
      return;
    }
    socket.setTimeout(firstByteMs, () => {
      closed("first-byte-timeout");
      socket.destroy();
    });
    // HTTP/2 or HTTP/1.1, by the first bytes: while they are a beginning of the
    // h2 preface (an HTTP/1.1 request line may arrive one byte at a time),
    // more are awaited, within the first-byte timeout.
    let seen: Buffer = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      seen = seen.length === 0 ? chunk : Buffer.concat([seen, chunk]);
      const n = Math.min(seen.length, H2_PREFACE.length);
      const prefix = seen.subarray(0, n).equals(H2_PREFACE.subarray(0, n));
      if (prefix && n < H2_PREFACE.length) return;
      socket.off("data", onData);
      socket.setTimeout(0);
      if (prefix && connections.isOverLimit(socket)) {
        refuseH2(socket);
        return;
      }
      socket.pause();
      socket.unshift(seen);
      if (prefix) connections.markH2(socket);
      // The h2 session reads the bytes put back itself; the h1 parser needs the socket flowing.
      (prefix ? h2 : h1).emit("connection", socket);
      if (!prefix) socket.resume();
    };
    socket.on("data", onData);
  };
}
