/**
 * The overload bench's bare refusers (issue 41): the cheapest answer Node
 * can give, to measure r, the CPU a core spends per refused call, beside the
 * service in the same run. BARE=http: a `node:http` server that answers 503
 * with an empty body and nothing else (keep-alive, one listener, Node's
 * defaults). BARE=grpc: a `node:http2` h2c server that answers every stream
 * trailers-only, `grpc-status: 14` (UNAVAILABLE), in one HEADERS frame with
 * END_STREAM, reading nothing of the request (its few bytes are drained so
 * that the stream can close). No log, no metrics, no database. Run as a
 * child of `npm run bench -- --overload`, with the service's node and flags;
 * prints "listening on http://…" on stderr.
 */
import http from "node:http";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";

const kind = process.env.BARE ?? "http";

/** The one answer of the gRPC refuser, made once: a trailers-only UNAVAILABLE. */
const UNAVAILABLE = {
  ":status": 200,
  "content-type": "application/grpc",
  "grpc-status": "14",
  "grpc-message": "overloaded",
} as const;

function listen(server: http.Server | http2.Http2Server): void {
  server.listen(0, "127.0.0.1", () => {
    const { port } = server.address() as AddressInfo;
    process.stderr.write(`bare ${kind} refuser listening on http://127.0.0.1:${port}\n`);
  });
}

if (kind === "http") {
  listen(
    http.createServer((_req, res) => {
      res.writeHead(503, { "content-length": "0" });
      res.end();
    }),
  );
} else if (kind === "grpc") {
  const server = http2.createServer();
  server.on("stream", (stream) => {
    stream.respond(UNAVAILABLE, { endStream: true });
    stream.resume();
  });
  listen(server);
} else {
  throw new Error(`BARE must be http or grpc (got "${kind}")`);
}

for (const signal of ["SIGTERM", "SIGINT"] as const) process.on(signal, () => process.exit(0));
