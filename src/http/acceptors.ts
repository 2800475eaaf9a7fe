/**
 * The listening sockets of the one port (docs/operations.md, "Listening"):
 * LISTENERS plain TCP sockets share it with SO_REUSEPORT, after a probe bind
 * without it has made sure that the port is ours alone. libuv accepts one
 * connection per listening socket per turn of the event loop (libuv#3696),
 * so a few sockets accept a spike's connections a few at a time each turn;
 * the kernel spreads new connections over them.
 *
 * With TLS (docs/operations.md, "TLS") every accepted connection is handed to
 * one `tls.Server` that never listens itself: one secure context for the
 * whole port, so a certificate reload is read once and applied once, and one
 * set of session ticket keys (rotated) and one session cache, so that a
 * client resumes its session whichever socket the kernel gives its next
 * connection to.
 *
 * On shutdown the sockets keep accepting until their backlog is empty (no
 * connection for BACKLOG_QUIET_MS, at most BACKLOG_DRAIN_MS), so that a
 * connection the kernel already took is answered (GOAWAY, `Connection:
 * close`), not reset when its socket closes.
 */
import { randomBytes } from "node:crypto";
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
 * Listening sockets on the port: how many connections a turn of the event
 * loop accepts (docs/decisions.md, "64 listening sockets, one TLS server":
 * 16 left a 2× spike's new connections seconds in the kernel's queue).
 */
export const LISTENERS = 64;

/** Session ticket keys are replaced this often; a ticket older than that gets a full handshake. */
const TICKET_KEY_ROTATION_MS = 12 * 60 * 60_000;
/** TLS 1.2 session ids kept for resumption (the oldest is forgotten first). */
const MAX_SESSIONS = 10_000;

/** Shutdown: the backlog is empty once no connection came for this long… */
const BACKLOG_QUIET_MS = 50;
/** …or after this long in any case. */
const BACKLOG_DRAIN_MS = 1_000;

/** Port 0: how many free ports are tried before a bind that lost its port to another process fails. */
const PORT_ZERO_ATTEMPTS = 10;

const shared = (port: number, host: string): net.ListenOptions => ({
  port,
  host,
  backlog: LISTEN_BACKLOG,
  reusePort: true,
});

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
  /** Binds the port alone, or rejects (EADDRINUSE…); then every socket listens on it. */
  listen(port: number, host: string): Promise<AddressInfo>;
  /**
   * Stops looking for a new certificate, accepts what the backlog holds, then
   * stops accepting: `stopped` resolves then; `closed` once every connection
   * the sockets accepted has ended.
   */
  close(): { stopped: Promise<void>; closed: Promise<unknown> };
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
  const secure = tlsSettings
    ? createTlsServer(tlsSettings, accept, firstByteMs, closed, log)
    : undefined;
  let accepted = 0;
  const onConnection = (socket: Socket) => {
    accepted++;
    if (secure) secure.server.emit("connection", socket);
    else accept(socket, undefined);
  };
  const sockets: net.Server[] = [];

  return {
    async listen(port, host) {
      // Alone on the port, or not at all: a probe without SO_REUSEPORT fails on a port in
      // use, also one that another process holds with SO_REUSEPORT. Port 0: the probe's
      // free port can be taken by another process before the sockets bind it; then
      // another free port is tried (a fixed port in use is the caller's to hear about).
      let first: { server: net.Server; address: AddressInfo } | undefined;
      for (let attempt = 1; !first; attempt++) {
        const probe = net.createServer();
        const free = await listenOn(probe, { port, host });
        await new Promise((resolve) => probe.close(resolve));
        const server = net.createServer(onConnection);
        try {
          first = { server, address: await listenOn(server, shared(free.port, host)) };
        } catch (error) {
          const taken = (error as NodeJS.ErrnoException).code === "EADDRINUSE";
          if (port !== 0 || !taken || attempt >= PORT_ZERO_ATTEMPTS) throw error;
        }
      }
      sockets.push(first.server);
      while (sockets.length < LISTENERS) {
        const server = net.createServer(onConnection);
        sockets.push(server);
        await listenOn(server, shared(first.address.port, host));
      }
      return first.address;
    },
    close() {
      secure?.stop();
      let closed: Promise<unknown> = Promise.resolve();
      const stopped = (async () => {
        // Accept what the kernel holds until it is quiet, then close the sockets. Quiet is
        // counted in turns of the event loop, each with its poll phase (where accepts happen),
        // not in time alone: one long turn must not pass for quiet.
        const started = performance.now();
        let quietSince = started;
        let quietTurns = 0;
        let seen = accepted;
        for (;;) {
          await new Promise((resolve) => setTimeout(resolve, 5));
          await new Promise((resolve) => setImmediate(resolve));
          const now = performance.now();
          if (accepted !== seen) {
            seen = accepted;
            quietSince = now;
            quietTurns = 0;
          } else {
            quietTurns++;
          }
          const quiet = quietTurns >= 3 && now - quietSince >= BACKLOG_QUIET_MS;
          if (quiet || now - started >= BACKLOG_DRAIN_MS) break;
        }
        closed = Promise.all(
          sockets.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))),
        );
      })();
      return { stopped, closed: stopped.then(() => closed) };
    },
  };
}

/**
 * The one TLS server of the port: it never listens; the listening sockets
 * hand it their connections. One context, reloaded once; one set of ticket
 * keys, rotated; one cache of TLS 1.2 session ids.
 */
function createTlsServer(
  settings: ListenerTls,
  accept: (socket: Socket, alpn: string | false | null | undefined) => void,
  firstByteMs: number,
  closed: LogClosed,
  log: Logger,
): { server: tls.Server; stop(): void } {
  const server = tls.createServer(
    { ...serverOptions(settings.material, firstByteMs), ticketKeys: randomBytes(48) },
    (socket) => accept(socket, socket.alpnProtocol),
  );
  // A failed handshake (no client certificate, a plain-text client) ends that connection only.
  server.on("tlsClientError", (_error, socket) => {
    closed("tls-handshake-failed");
    socket.destroy();
  });
  // TLS 1.2 session ids: one cache for every connection, bounded, oldest out first.
  const sessions = new Map<string, Buffer>();
  server.on("newSession", (id: Buffer, data: Buffer, done: () => void) => {
    if (sessions.size >= MAX_SESSIONS) sessions.delete(sessions.keys().next().value as string);
    sessions.set(id.toString("hex"), data);
    done();
  });
  server.on("resumeSession", (id: Buffer, done: (error: Error | null, data?: Buffer) => void) => {
    done(null, sessions.get(id.toString("hex")));
  });
  const rotation = setInterval(() => {
    server.setTicketKeys(randomBytes(48));
    sessions.clear();
  }, TICKET_KEY_ROTATION_MS);
  rotation.unref();
  const stopReload = reloadOnChange(
    {
      // The ticket keys stay: a new certificate does not end the sessions resumed with the old.
      setSecureContext: (options) =>
        server.setSecureContext({ ...options, ticketKeys: server.getTicketKeys() }),
    },
    settings.files,
    settings.material,
    log,
    settings.reloadIntervalMs,
  );
  return {
    server,
    stop() {
      clearInterval(rotation);
      stopReload();
    },
  };
}
