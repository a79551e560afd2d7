#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""smb2load: N raw SMB2 clients, each keeping --depth data requests in flight.

For the per-dispatch cost bench (cost-clients.sh).  Client i binds
PREFIX + 0x1000 + i (IPV6_FREEBIND; the bench routes the /64 to lo as
local), connects to the server's port 445, sends one SMB2 NEGOTIATE
(MS-SMB2 2.2.3) and then, for as long as the run lasts, --depth (1) SMB2
READs (2.2.19, Length --length, SessionId 0) at a time: the next as soon
as a reply is in.  Without a session ksmbd answers each READ with
STATUS_USER_SESSION_DELETED from its worker, but only after the request
went through the whole dispatch path (classified as data, queued by
class and peer, dispatched in deficit round robin order, completed), and
without touching storage: the cost measured is the dispatcher's and the
connection's, not a file system's.  Credits are not consumed by such a
reply (ksmbd checks the session before charging credits).

Non-blocking sockets on one epoll loop; at most --connect-parallel
connections are being set up at once (ksmbd listens with a backlog of
16).  Once every client is set up and every one that connected has had a
READ answered, --ready-file is created (with that number).  Runs until SIGTERM/SIGINT (or --seconds), then prints one JSON
line: clients, connected, ready, replies (READ replies), by status,
errors, seconds.  Exit status 0 if every client connected and negotiated.
"""

import argparse
import collections
import errno
import ipaddress
import json
import selectors
import signal
import socket
import struct
import sys
import time

IP_FREEBIND = 15
DIALECTS = (0x0202, 0x0210, 0x0300, 0x0302)
HDR = struct.Struct("<4sHHIHHIIQIIQ16s")
CMD_NEGOTIATE, CMD_READ = 0, 8


def frame(msg):
    return struct.pack(">I", len(msg)) + msg


def negotiate_frame():
    hdr = HDR.pack(b"\xfeSMB", 64, 0, 0, CMD_NEGOTIATE, 1, 0, 0, 0, 0xFEFF,
                   0, 0, b"\0" * 16)
    body = struct.pack("<HHHHI16sQ", 36, len(DIALECTS), 1, 0, 0,
                       b"smb2load-client!", 0)
    body += b"".join(struct.pack("<H", d) for d in DIALECTS)
    return frame(hdr + body)


def read_frame(mid, length):
    hdr = HDR.pack(b"\xfeSMB", 64, 1, 0, CMD_READ, 1, 0, 0, mid, 0xFEFF, 0, 0,
                   b"\0" * 16)
    # StructureSize 49, Padding 0x50, Flags, Length, Offset, FileId (all
    # ones: none), MinimumCount, Channel, RemainingBytes, channel info
    # offset/length, one Buffer byte.
    body = struct.pack("<HBBIQ16sIIIHHB", 49, 0x50, 0, length, 0,
                       b"\xff" * 16, 0, 0, 0, 0, 0, 0)
    return frame(hdr + body)


class Client:
    __slots__ = ("src", "sock", "state", "buf", "out", "mid", "replies")

    def __init__(self, src):
        self.src = src
        self.sock = None
        self.state = "new"
        self.buf = b""
        self.out = b""
        self.mid = 1
        self.replies = 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--clients", type=int, required=True)
    ap.add_argument("--prefix", default="fd00:5c::")
    ap.add_argument("--server", default="::1")
    ap.add_argument("--length", type=int, default=4096)
    ap.add_argument("--depth", type=int, default=1,
                    help="READs each client keeps in flight")
    ap.add_argument("--connect-parallel", type=int, default=16)
    ap.add_argument("--ready-file")
    ap.add_argument("--seconds", type=float, default=3600)
    args = ap.parse_args()

    stop = [False]

    def on_signal(*_):
        stop[0] = True
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    base = ipaddress.IPv6Address(args.prefix)
    clients = [Client(str(base + 0x1000 + i)) for i in range(args.clients)]
    pending = collections.deque(clients)
    sel = selectors.DefaultSelector()
    neg = negotiate_frame()
    status = collections.Counter()
    errors = collections.Counter()
    connecting = 0
    connected = 0
    answered = 0
    ready = False
    replies = 0
    t0 = time.monotonic()
    deadline = t0 + args.seconds

    def fail(c, why):
        nonlocal connecting
        errors[why[:80]] += 1
        if c.state in ("connecting", "negotiating"):
            connecting -= 1
        if c.sock:
            try:
                sel.unregister(c.sock)
            except (KeyError, ValueError):
                pass
            c.sock.close()
        c.sock = None
        c.state = "failed"

    def want(c, events):
        sel.modify(c.sock, events, c)

    def send(c, data):
        c.out += data
        try:
            n = c.sock.send(c.out)
            c.out = c.out[n:]
        except BlockingIOError:
            pass
        want(c, selectors.EVENT_READ | (selectors.EVENT_WRITE if c.out else 0))

    while not stop[0] and time.monotonic() < deadline:
        while pending and connecting < args.connect_parallel:
            c = pending.popleft()
            s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
            s.setblocking(False)
            s.setsockopt(socket.SOL_IP, IP_FREEBIND, 1)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            try:
                s.bind((c.src, 0))
                rc = s.connect_ex((args.server, 445))
            except OSError as e:
                s.close()
                errors["bind/connect: " + e.strerror] += 1
                c.state = "failed"
                continue
            if rc not in (0, errno.EINPROGRESS):
                s.close()
                errors["connect: " + errno.errorcode.get(rc, str(rc))] += 1
                c.state = "failed"
                continue
            c.sock = s
            c.state = "connecting"
            connecting += 1
            sel.register(s, selectors.EVENT_WRITE, c)
        for key, ev in sel.select(timeout=0.5):
            c = key.data
            if c.state == "connecting":
                err = c.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if err:
                    fail(c, "connect: " + errno.errorcode.get(err, str(err)))
                    continue
                c.state = "negotiating"
                send(c, neg)
                continue
            if ev & selectors.EVENT_WRITE and c.out:
                try:
                    n = c.sock.send(c.out)
                    c.out = c.out[n:]
                except BlockingIOError:
                    pass
                except OSError as e:
                    fail(c, "send: " + e.strerror)
                    continue
                if not c.out:
                    want(c, selectors.EVENT_READ)
            if not ev & selectors.EVENT_READ:
                continue
            try:
                data = c.sock.recv(65536)
            except BlockingIOError:
                continue
            except OSError as e:
                fail(c, "recv: " + e.strerror)
                continue
            if not data:
                fail(c, "closed by the server in state " + c.state)
                continue
            c.buf += data
            while len(c.buf) >= 4:
                n = struct.unpack(">I", c.buf[:4])[0] & 0xFFFFFF
                if len(c.buf) < 4 + n:
                    break
                msg, c.buf = c.buf[4:4 + n], c.buf[4 + n:]
                magic, _, _, st, cmd = struct.unpack_from("<4sHHIH", msg)
                if magic != b"\xfeSMB":
                    fail(c, "not an SMB2 reply")
                    break
                if c.state == "negotiating":
                    if cmd != CMD_NEGOTIATE or st != 0:
                        fail(c, "negotiate: status 0x%08x" % st)
                        break
                    c.state = "flowing"
                    connecting -= 1
                    connected += 1
                    # the first depth - 1 READs; the reply below sends one more
                    for _ in range(args.depth - 1):
                        c.mid += 1
                        send(c, read_frame(c.mid, args.length))
                elif cmd == CMD_READ:
                    status["0x%08x" % st] += 1
                    replies += 1
                    c.replies += 1
                    if c.replies == 1:
                        answered += 1
                if c.state == "flowing" and not stop[0]:
                    c.mid += 1
                    send(c, read_frame(c.mid, args.length))
        # every client is set up (flowing or failed) and every flowing one
        # has had a READ answered: the load is in place
        if not ready and not pending and connecting == 0 and connected \
                and answered == connected:
            ready = True
            if args.ready_file:
                with open(args.ready_file, "w") as f:
                    f.write("%d\n" % answered)
    for c in clients:
        if c.sock:
            c.sock.close()
    print(json.dumps({"clients": args.clients, "connected": connected,
                      "ready": ready, "replies": replies,
                      "status": dict(status),
                      "errors": dict(errors.most_common(5)),
                      "seconds": round(time.monotonic() - t0, 1)}))
    return 0 if connected == args.clients else 1


if __name__ == "__main__":
    sys.exit(main())
