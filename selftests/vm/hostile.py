#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""hostile: SMB2 peers that lie or flood, for the dispatcher's tests.

Each subcommand opens raw TCP connections to the server from a chosen
source address and sends hand-built SMB2 requests, without ever setting
up a session, for a bounded time; it prints one JSON line of counts when
it stops.  Run inside the test VM only (loopback).

  unauth-read  READ requests with Length 0xffffffff (MS-SMB2 2.2.19),
               pipelined, on a connection that never negotiated: what a
               client gains by lying about a READ's Length before it
               logs in
  neg-flood    NEGOTIATE, then a SESSION_SETUP with a bogus security
               blob, on new connections, again and again: unauthenticated
               control work
"""

import argparse
import json
import select
import socket
import struct
import sys
import time

SMB2_MAGIC = b"\xfeSMB"
CMD_NEGOTIATE, CMD_SESSION_SETUP, CMD_READ = 0, 1, 8
HDR = struct.Struct("<4sHHIHHIIQIIQ16s")          # 64 bytes, sync form
READ_REQ = struct.Struct("<HBBIQ16sIIIHH")       # 48 (+1 byte Buffer)
NEG_REQ = struct.Struct("<HHHHI16sQ")            # 36, then the dialects
SESS_REQ = struct.Struct("<HBBIIHHQ")            # 24, then the blob


def header(cmd, mid, credit_charge=1):
    return HDR.pack(SMB2_MAGIC, 64, credit_charge, 0, cmd, 32, 0, 0, mid,
                    0, 0, 0, b"\0" * 16)


def frame(payload):
    return struct.pack(">I", len(payload)) + payload


def read_req(mid):
    body = READ_REQ.pack(49, 0x50, 0, 0xFFFFFFFF, 0, b"\xff" * 16, 0, 0, 0,
                         0, 0) + b"\0"
    return frame(header(CMD_READ, mid) + body)


def negotiate_req(mid):
    dialects = (0x0202, 0x0210, 0x0300, 0x0302)
    body = NEG_REQ.pack(36, len(dialects), 1, 0, 0, b"\x11" * 16, 0)
    body += struct.pack("<%dH" % len(dialects), *dialects)
    return frame(header(CMD_NEGOTIATE, mid) + body)


def session_setup_req(mid):
    blob = b"\x60\x03\x02\x01\x00" + b"\0" * 11  # not a valid SPNEGO token
    body = SESS_REQ.pack(25, 0, 1, 0, 0, 64 + 24, len(blob), 0) + blob
    return frame(header(CMD_SESSION_SETUP, mid) + body)


def connect(src, dst, port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((src, 0))
    s.settimeout(5)
    s.connect((dst, port))
    s.setblocking(False)
    return s


def drain(s, counts):
    """Read what the server sent; count whole replies.  False on EOF."""
    try:
        data = s.recv(1 << 16)
    except BlockingIOError:
        return True
    except OSError:
        return False
    if not data:
        return False
    counts["reply_bytes"] += len(data)
    counts["replies"] += data.count(SMB2_MAGIC)
    return True


def cmd_unauth_read(args):
    counts = {"sent": 0, "replies": 0, "reply_bytes": 0, "reconnects": 0}
    end = time.monotonic() + args.seconds
    socks, mid = [], 0
    while time.monotonic() < end:
        while len(socks) < args.conns:
            try:
                socks.append(connect(args.src, args.dst, args.port))
            except OSError:
                time.sleep(0.05)
                break
            counts["reconnects"] += 1
        if not socks:
            continue
        _, w, _ = select.select(socks, socks, [], 0.1)
        for s in list(socks):
            if not drain(s, counts):
                socks.remove(s)
                s.close()
                continue
            if s in w:
                mid += 1
                try:
                    s.send(read_req(mid))
                    counts["sent"] += 1
                except (BlockingIOError, OSError):
                    pass
    for s in socks:
        s.close()
    print(json.dumps(counts))


def cmd_neg_flood(args):
    counts = {"sent": 0, "replies": 0, "reply_bytes": 0, "reconnects": 0}
    end = time.monotonic() + args.seconds
    while time.monotonic() < end:
        try:
            s = connect(args.src, args.dst, args.port)
        except OSError:
            time.sleep(0.05)
            continue
        counts["reconnects"] += 1
        try:
            for mid, req in ((0, negotiate_req(0)),
                             (1, session_setup_req(1))):
                s.setblocking(True)
                s.settimeout(2)
                s.sendall(req)
                counts["sent"] += 1
                s.setblocking(False)
                deadline = time.monotonic() + 2
                got = counts["replies"]
                while counts["replies"] == got and \
                        time.monotonic() < deadline:
                    select.select([s], [], [], 0.1)
                    if not drain(s, counts):
                        break
        except OSError:
            pass
        s.close()
    print(json.dumps(counts))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("unauth-read", "neg-flood"):
        p = sub.add_parser(name)
        p.add_argument("--src", required=True, help="source address")
        p.add_argument("--dst", default="127.0.0.1")
        p.add_argument("--port", type=int, default=445)
        p.add_argument("--seconds", type=float, required=True,
                       help="stop after this long (bounded)")
        p.add_argument("--conns", type=int, default=4,
                       help="connections at once (unauth-read)")
    args = ap.parse_args()
    if args.seconds <= 0 or args.seconds > 600:
        ap.error("--seconds must be in (0, 600]")
    {"unauth-read": cmd_unauth_read, "neg-flood": cmd_neg_flood}[
        args.cmd](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
