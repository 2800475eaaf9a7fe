/**
 * The listening sockets of the one port (docs/operations.md, "Overload"):
 * ACCEPTORS of them share it with SO_REUSEPORT, after a probe bind without
 * it has made sure that the port is ours alone; each accepts on its own and
 * hands every connection to the listener. With TLS (docs/operations.md,
 * "TLS") they all take the new certificate when tls.ts finds one.
 */
import net, { type AddressInfo, type Socket } from "node:net";
import tls from "node:tls";
import type { Logger } from "../log";
import type { LogClosed } from "./connections";
import { reloadOnChange, serverOptions, type TlsFiles, type TlsMaterial } from "./tls";

/** TLS on the port: the files, what they held at start-up, how often to look for a new pair. */
export interface ListenerTls {
  readonly files: TlsFiles;
  readonly material: TlsMaterial;
  readonly reloadIntervalMs: number;
}

/**
 * Connections the kernel may hold for us before we accept them (capped by
 * net.core.somaxconn, 4096 on current Linux). Node's default, 511, overflows
 * when a spike opens connections faster than one core accepts them: the
 * kernel then drops SYNs, and each dropped one costs its client a second or
 * more of retransmission (docs/operations.md, "Overload").
 */
const LISTEN_BACKLOG = 4096;

/**
 * Listening sockets on the port (SO_REUSEPORT: the kernel spreads new
 * connections over them). libuv accepts one connection per socket per turn
 * of the event loop (libuv#3696): with one socket, a loop busy with calls
 * accepts a few dozen connections a second while a spike queues thousands
 * in the kernel, and clients wait seconds before they are even read
 * (measured, docs/performance.md "Overload"). 128 accept 128 a turn.
 */
const ACCEPTORS = 128;

/** Listens; resolves with the address, or rejects with the listen error (EADDRINUSE…). */
function listenOn(server: net.Server, options: net.ListenOptions): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(options, () => {
      server.off("error", reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

export interface Acceptors {
  /** Binds the port alone, or rejects (EADDRINUSE…); then every acceptor listens on it. */
  listen(port: number, host: string): Promise<AddressInfo>;
  /** Stops looking for a new certificate and stops accepting; resolves once every acceptor has closed. */
  close(): Promise<unknown>;
}

export function createAcceptors(
  /** A connection (cleartext, or TLS once the handshake is done) and the protocol ALPN agreed. */
  accept: (socket: Socket, alpn: string | false | null | undefined) => void,
  /** TLS on the port, or undefined for cleartext. */
  tlsSettings: ListenerTls | undefined,
  firstByteMs: number,
  closed: LogClosed,
  log: Logger,
): Acceptors {
  /** One listening socket; ACCEPTORS of them share the port (SO_REUSEPORT), each accepting on its own. */
  const createAcceptor = () => {
    const server = tlsSettings
      ? tls.createServer(serverOptions(tlsSettings.material, firstByteMs), (socket) =>
          accept(socket, socket.alpnProtocol),
        )
      : net.createServer((socket) => accept(socket, undefined));
    if (server instanceof tls.Server) {
      // A failed handshake (no client certificate, a plain-text client) ends that connection only.
      server.on("tlsClientError", (_error, socket) => {
        closed("tls-handshake-failed");
        socket.destroy();
      });
    }
    return server;
  };
  const acceptors = [createAcceptor()];
  const stopReload = tlsSettings
    ? reloadOnChange(
        {
          setSecureContext: (options) => {
            for (const server of acceptors) (server as tls.Server).setSecureContext(options);
          },
        },
        tlsSettings.files,
        tlsSettings.material,
        log,
        tlsSettings.reloadIntervalMs,
      )
    : () => undefined;

  return {
    async listen(port, host) {
      // Alone on the port, or not at all: a probe without SO_REUSEPORT fails on a port in
      // use, also one that another process holds with SO_REUSEPORT.
      const probe = net.createServer();
      const free = await listenOn(probe, { port, host });
      await new Promise((resolve) => probe.close(resolve));
      const shared = { port: free.port, host, backlog: LISTEN_BACKLOG, reusePort: true };
      const first = acceptors[0] as net.Server;
      const address = await listenOn(first, shared);
      while (acceptors.length < ACCEPTORS) {
        const next = createAcceptor();
        acceptors.push(next);
        await listenOn(next, shared);
      }
      return address;
    },
    close() {
      stopReload();
      return Promise.all(
        acceptors.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))),
      );
    },
  };
}
