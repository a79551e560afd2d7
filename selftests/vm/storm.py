#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""storm: many short SMB2 connections from many source addresses.

Each connection binds its own source address, connects to port 445,
sends one SMB2 NEGOTIATE (MS-SMB2 2.2.3, dialects 2.0.2 .. 3.0.2),
checks that the reply is a NEGOTIATE response with STATUS_SUCCESS, and
closes.  Addresses: --v4 N from 127.10.0.0/16, --v6 N from PREFIX::/64
(bound with IP_FREEBIND; the test routes the prefix to lo as local).
Bounded: every socket operation has a timeout, and the whole run
--seconds.  Prints one JSON line: {"ok": n, "failed": n, "errors": {...}}.
Exit 0 only if every connection negotiated.
"""

import argparse
import collections
import ipaddress
import json
import socket
import struct
import sys
import threading
import time

IP_FREEBIND = 15
DIALECTS = (0x0202, 0x0210, 0x0300, 0x0302)


def negotiate_frame():
    hdr = struct.pack("<4sHHIHHIIQIIQ16s", b"\xfeSMB", 64, 0, 0, 0, 1, 0, 0,
                      0, 0xFEFF, 0, 0, b"\0" * 16)
    body = struct.pack("<HHHHI16sQ", 36, len(DIALECTS), 1, 0, 0,
                       b"storm-client-guid"[:16], 0)
    body += b"".join(struct.pack("<H", d) for d in DIALECTS)
    msg = hdr + body
    return struct.pack(">I", len(msg)) + msg


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("closed by the server")
        buf += chunk
    return buf


def one(src, dst, frame, timeout):
    fam = socket.AF_INET6 if ":" in src else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    try:
        s.settimeout(timeout)
        if fam == socket.AF_INET6:
            s.setsockopt(socket.SOL_IP, IP_FREEBIND, 1)
        s.bind((src, 0))
        s.connect((dst, 445))
        s.sendall(frame)
        n = struct.unpack(">I", recv_exact(s, 4))[0] & 0xFFFFFF
        rsp = recv_exact(s, n)
        magic, _, _, status, cmd = struct.unpack_from("<4sHHIH", rsp)
        if magic != b"\xfeSMB" or cmd != 0 or status != 0:
            raise ValueError("reply %r cmd %d status 0x%08x" % (magic, cmd, status))
    finally:
        s.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--v4", type=int, default=0)
    ap.add_argument("--v6", type=int, default=0)
    ap.add_argument("--v6-prefix", default="fd00:5b::")
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--timeout", type=float, default=30)
    ap.add_argument("--seconds", type=float, default=600)
    args = ap.parse_args()

    jobs = []
    for i in range(args.v4):
        jobs.append(("127.10.%d.%d" % (i // 250, i % 250 + 1), "127.0.0.1"))
    base = ipaddress.IPv6Address(args.v6_prefix)
    for i in range(args.v6):
        jobs.append((str(base + 0x1000 + i), "::1"))
    frame = negotiate_frame()
    deadline = time.monotonic() + args.seconds
    lock = threading.Lock()
    ok = [0]
    errors = collections.Counter()
    it = iter(jobs)

    def worker():
        while time.monotonic() < deadline:
            with lock:
                job = next(it, None)
            if job is None:
                return
            try:
                one(job[0], job[1], frame, args.timeout)
                with lock:
                    ok[0] += 1
            except Exception as e:  # counted, reported by kind
                with lock:
                    errors[type(e).__name__ + ": " + str(e)[:80]] += 1

    ts = [threading.Thread(target=worker) for _ in range(args.threads)]
    t0 = time.monotonic()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    failed = len(jobs) - ok[0]
    print(json.dumps({"ok": ok[0], "failed": failed, "seconds":
                      round(time.monotonic() - t0, 1),
                      "errors": dict(errors.most_common(5))}))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
