#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""smb2raw: an SMB2 client with exact control of READ requests.

For the READ-path tests (tests/8x-*.sh): each READ goes on the wire with
the Length, Offset and MinimumCount given, alone or in a compound, and the
reply frame is checked byte by byte: its length on the wire against
DataOffset + DataLength, its signature (signed sessions) or AES-CCM tag
(sealed sessions).  Debian's python3-impacket does negotiate, NTLMSSP
session setup and tree connect; the requests that matter here are built
and parsed by this file, because impacket's read() splits, never sets
MinimumCount, never compounds and does not verify what it receives.

Sessions:
  plain   SMB 3.0, nothing signed or encrypted (impacket offers
          encryption and would seal by default: turned off)
  signed  SMB 3.0 or 3.1.1, signing required by the client: every
          request signed; every reply must carry a valid AES-CMAC
  sealed  SMB 3.0 or 3.1.1, every request in an AES-128-CCM transform;
          every reply must be one, and its tag must verify

Used as a library by the test drivers below (subcommands) and by nothing
else; run inside the test VM (python3 from the host root).
"""

import argparse
import hashlib
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import time

try:
    from impacket import smb3, crypto, nmb
    from impacket.smb3structs import (SMB2_DIALECT_30, SMB2_DIALECT_311,
                                      SMB2_SESSION_FLAG_ENCRYPT_DATA)
    from Cryptodome.Cipher import AES
except ImportError as e:  # pragma: no cover
    print(f"SKIP: python3-impacket missing ({e})")
    sys.exit(4)

STATUS_SUCCESS = 0
STATUS_PENDING = 0x00000103
STATUS_END_OF_FILE = 0xC0000011
STATUS_INVALID_PARAMETER = 0xC000000D
STATUS_NAMES = {
    STATUS_SUCCESS: "SUCCESS",
    STATUS_END_OF_FILE: "END_OF_FILE",
    STATUS_INVALID_PARAMETER: "INVALID_PARAMETER",
    0xC0000022: "ACCESS_DENIED",
    0xC0000034: "OBJECT_NAME_NOT_FOUND",
    0xC0000008: "INVALID_HANDLE",
    0xC00000BB: "NOT_SUPPORTED",
}

CMD_CREATE, CMD_CLOSE, CMD_READ, CMD_ECHO, CMD_OPLOCK_BREAK = 5, 6, 8, 13, 18
OPLOCK_BATCH = 0x09
FLAG_RESPONSE, FLAG_ASYNC, FLAG_RELATED, FLAG_SIGNED = 1, 2, 4, 8
HDR = struct.Struct("<4sHHIHHIIQIIQ16s")          # 64 bytes, sync form
READ_REQ = struct.Struct("<HBBIQ16sIIIHH")       # 48 (+1 byte Buffer)
CREATE_REQ = struct.Struct("<HBBIQQIIIIIHHII")   # 56
CLOSE_REQ = struct.Struct("<HHI16s")             # 24
RELATED_FID = b"\xff" * 16
READ_RSP_HDR = 80                                # header + 16 fixed bytes
ERR_RSP_LEN = 73                                 # header + 9 (MS-SMB2 2.2.2)


def status_name(st):
    return STATUS_NAMES.get(st, f"0x{st:08x}")


class ProtocolError(Exception):
    pass


class Reply:
    """One SMB2 reply: header fields, body and where it came from."""

    def __init__(self, msg, wire_len, encrypted):
        (proto, _ssz, self.charge, self.status, self.command, self.credits,
         self.flags, self.next, self.mid, _res, self.tid, self.sid,
         self.sig) = HDR.unpack_from(msg)
        if proto != b"\xfeSMB":
            raise ProtocolError(f"reply without SMB2 protocol id: {proto!r}")
        self.msg = msg
        self.wire_len = wire_len      # bytes of the whole frame (no RFC1002 header)
        self.encrypted = encrypted

    def read_data(self):
        """(DataOffset, DataLength, DataRemaining, data) of a READ reply."""
        ssz, off, _r, dlen, rem = struct.unpack_from("<HBBII", self.msg, 64)
        if ssz != 17:
            raise ProtocolError(f"READ reply StructureSize {ssz}")
        return off, dlen, rem, self.msg[off:off + dlen]


class Client:
    """One TCP connection, one session, one tree connect to the share."""

    def __init__(self, host, user, password, share="share", mode="plain",
                 dialect="3.0", timeout=120, rcvbuf=0):
        if mode not in ("plain", "signed", "sealed"):
            raise ValueError(mode)
        self.mode = mode
        self.timeout = timeout
        dia = SMB2_DIALECT_311 if dialect == "3.1.1" else SMB2_DIALECT_30
        if mode == "plain" and dia == SMB2_DIALECT_311:
            raise ValueError("impacket always signs SMB 3.1.1: plain needs 3.0")

        class _S(smb3.SMB3):
            def negotiateSession(s, preferredDialect=None, negSessionResponse=None):
                # a socket of our own (rcvbuf): impacket counts an SMB1
                # negotiate that never happened; start at MessageId 0
                if negSessionResponse is None and rcvbuf:
                    s._Connection["SequenceWindow"] = 0
                s.RequireMessageSigning = mode == "signed"
                r = smb3.SMB3.negotiateSession(s, preferredDialect, negSessionResponse)
                # derive encryption keys for a sealed session (3.1.1
                # advertises encryption in a context, not a capability)
                s._Connection["SupportsEncryption"] = mode == "sealed"
                if mode == "signed":
                    s._Connection["RequireSigning"] = True
                return r

        session = None
        if rcvbuf:
            # set before connect(): the window is small from the start
            af, st, pr, _cn, sa = socket.getaddrinfo(host, 445, 0,
                                                     socket.SOCK_STREAM)[0]
            sk = socket.socket(af, st, pr)
            sk.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
            sk.settimeout(timeout)
            sk.connect(sa)
            session = nmb.NetBIOSTCPSession(host, host, host, nmb.TYPE_SERVER,
                                            445, timeout, sock=sk)
        self.s = _S(host, host, preferredDialect=dia, timeout=timeout,
                    session=session)
        self.s.login(user, password)
        sess = self.s._Session
        if mode == "sealed":
            sess["SessionFlags"] |= SMB2_SESSION_FLAG_ENCRYPT_DATA
        else:
            sess["SessionFlags"] &= ~SMB2_SESSION_FLAG_ENCRYPT_DATA
        if mode == "signed" and not sess.get("SigningActivated"):
            raise ProtocolError("signing not activated after session setup")
        self.sid = sess["SessionID"]
        self.tid = self.s.connectTree(share)
        self.credits = 1
        self.nb = self.s._NetBIOSSession

    def disconnect(self):
        try:
            self.nb.close()
        except OSError:
            pass

    # ---- framing -------------------------------------------------------

    def _next_mid(self, charge):
        mid = self.s._Connection["SequenceWindow"]
        self.s._Connection["SequenceWindow"] += max(charge, 1)
        return mid

    def build(self, command, body, charge=1, flags=0, next_cmd=0, mid=None):
        if mid is None:
            mid = self._next_mid(charge)
        hdr = HDR.pack(b"\xfeSMB", 64, charge, 0, command, 256, flags,
                       next_cmd, mid, 0xFEFF, self.tid, self.sid, b"\0" * 16)
        msg = bytearray(hdr + body)
        if self.mode == "signed":
            struct.pack_into("<I", msg, 16, flags | FLAG_SIGNED)
            key = self.s._Session["SigningKey"]
            msg[48:64] = crypto.AES_CMAC(key, bytes(msg), len(msg))
        return mid, bytes(msg)

    def send_frame(self, frame):
        if self.mode == "sealed":
            nonce = os.urandom(11)
            th = bytearray(struct.pack("<4s16s16sIHHQ", b"\xfdSMB", b"\0" * 16,
                                       nonce + b"\0" * 5, len(frame), 0, 1,
                                       self.sid))
            c = AES.new(self.s._Session["EncryptionKey"], AES.MODE_CCM, nonce)
            c.update(bytes(th[20:]))
            ct = c.encrypt(frame)
            th[4:20] = c.digest()
            frame = bytes(th) + ct
        self.nb.send_packet(frame)

    def recv_frame(self):
        """One frame off the socket: (list of Reply, wire length)."""
        while True:
            raw = self.nb.recv_packet(self.timeout).get_trailer()
            wire = len(raw)
            encrypted = raw[:4] == b"\xfdSMB"
            if encrypted:
                if self.mode != "sealed":
                    raise ProtocolError("encrypted reply on an unsealed session")
                sig, nonce, osize = struct.unpack_from("<16s16sI", raw, 4)
                c = AES.new(self.s._Session["DecryptionKey"], AES.MODE_CCM,
                            nonce[:11])
                c.update(raw[20:52])
                plain = c.decrypt(raw[52:])
                try:
                    c.verify(sig)
                except ValueError:
                    raise ProtocolError("reply's AES-CCM tag does not verify")
                if osize != len(plain):
                    raise ProtocolError(f"OriginalMessageSize {osize} != {len(plain)}")
                raw = plain
            elif self.mode == "sealed":
                h = Reply(raw, wire, False)
                raise ProtocolError(f"plaintext reply on a sealed session: cmd {h.command} status {status_name(h.status)} mid {h.mid}")
            replies, off = [], 0
            while True:
                nxt = struct.unpack_from("<I", raw, off + 20)[0]
                end = off + nxt if nxt else len(raw)
                msg = raw[off:end]
                r = Reply(msg, wire, encrypted)
                if self.mode == "signed" and not encrypted:
                    self._verify_sig(r)
                replies.append(r)
                if not nxt:
                    break
                off = end
            if len(replies) == 1 and replies[0].status == STATUS_PENDING and \
                    replies[0].flags & FLAG_ASYNC:
                continue    # interim reply; the final one follows
            for r in replies:
                self.credits += r.credits - (r.charge or 1)
            return replies, wire

    def _verify_sig(self, r):
        if not r.flags & FLAG_SIGNED:
            raise ProtocolError(f"unsigned reply (mid {r.mid}) on a signed session")
        m = bytearray(r.msg)
        m[48:64] = b"\0" * 16
        want = crypto.AES_CMAC(self.s._Session["SigningKey"], bytes(m), len(m))
        if want != r.sig:
            raise ProtocolError(f"reply signature does not verify (mid {r.mid})")

    def call(self, command, body, charge=1):
        mid, frame = self.build(command, body, charge)
        self.send_frame(frame)
        replies, _ = self.recv_frame()
        if len(replies) != 1 or replies[0].mid != mid:
            raise ProtocolError(f"expected one reply to mid {mid}")
        return replies[0]

    # ---- commands --------------------------------------------------------

    def grow_credits(self, fid, want=1024):
        """1-byte READs of @fid asking for credits until about @want are
        granted.  (Not ECHO: ksmbd answers ECHO outside the session, so
        unsigned and unencrypted.)"""
        n = 0
        while self.credits < want and n < 64:
            self.read(fid, 0, 1)
            n += 1

    @staticmethod
    def create_body(name, access=0x00120089, oplock=0):
        fname = name.replace("/", "\\").encode("utf-16le")
        return CREATE_REQ.pack(57, 0, oplock, 2, 0, 0, access, 0, 7, 1, 0x40,
                               120, len(fname), 0, 0) + (fname or b"\0")

    def open_rw(self, name):
        """An existing file, opened for reading and writing."""
        r = self.call(CMD_CREATE, self.create_body(name, ACCESS_RW))
        if r.status:
            raise ProtocolError(f"CREATE {name}: {status_name(r.status)}")
        return r.msg[64 + 64:64 + 80]

    def open(self, name):
        r = self.call(CMD_CREATE, self.create_body(name))
        if r.status:
            raise ProtocolError(f"CREATE {name}: {status_name(r.status)}")
        return r.msg[64 + 64:64 + 80]

    def close(self, fid):
        r = self.call(CMD_CLOSE, CLOSE_REQ.pack(24, 0, 0, fid))
        if r.status:
            raise ProtocolError(f"CLOSE: {status_name(r.status)}")

    @staticmethod
    def read_body(fid, offset, length, mincount=0):
        return READ_REQ.pack(49, 0x50, 0, length, offset, fid, mincount,
                             0, 0, 0, 0) + b"\0"

    @staticmethod
    def charge(length):
        return max(1, (length + 65535) // 65536)

    def read_send(self, fid, offset, length, mincount=0):
        mid, frame = self.build(CMD_READ, self.read_body(fid, offset, length, mincount),
                                self.charge(length))
        self.send_frame(frame)
        return mid

    def read(self, fid, offset, length, mincount=0):
        """One READ: (status, data, wire frame length, reply)."""
        mid = self.read_send(fid, offset, length, mincount)
        replies, wire = self.recv_frame()
        r = replies[0]
        if len(replies) != 1 or r.mid != mid or r.command != CMD_READ:
            raise ProtocolError(f"READ mid {mid}: unexpected reply")
        data = b""
        if r.status == STATUS_SUCCESS:
            off, dlen, _rem, data = r.read_data()
            if len(data) != dlen:
                raise ProtocolError(f"DataLength {dlen} but {len(data)} bytes follow")
            if len(r.msg) != off + dlen:
                raise ProtocolError(f"reply of {len(r.msg)} bytes, DataOffset {off} + DataLength {dlen}")
        return r.status, data, wire, r

    def compound(self, parts):
        """Send (command, body, charge, related) parts as one compound
        frame; return the replies."""
        msgs = []
        for i, (cmd, body, charge, related) in enumerate(parts):
            flags = FLAG_RELATED if related else 0
            _mid, m = self.build(cmd, body, charge, flags=flags)
            msgs.append(bytearray(m))
        out = bytearray()
        for i, m in enumerate(msgs):
            if i + 1 < len(msgs):
                pad = (-len(m)) % 8
                m += b"\0" * pad
                struct.pack_into("<I", m, 20, len(m))
            out += m
        if self.mode == "signed":
            raise ProtocolError("compound on signed sessions is not built here")
        self.send_frame(bytes(out))
        replies = []
        while len(replies) < len(parts):
            rs, _ = self.recv_frame()
            replies += rs
        return replies


# ---- trace oracle -------------------------------------------------------

TRACE = "/sys/kernel/tracing"


def trace_enable():
    with open(f"{TRACE}/tracing_on", "w") as f:
        f.write("0")
    with open(f"{TRACE}/buffer_size_kb", "w") as f:
        f.write("4096")
    with open(f"{TRACE}/events/ksmbd/ksmbd_read_payload/enable", "w") as f:
        f.write("1")
    trace_clear()
    with open(f"{TRACE}/tracing_on", "w") as f:
        f.write("1")


def trace_clear():
    with open(f"{TRACE}/trace", "w") as f:
        f.write("")


def trace_events():
    """ksmbd_read_payload events now in the buffer:
    [(path, reason, len, src)]."""
    out = []
    with open(f"{TRACE}/trace") as f:
        for line in f:
            if "ksmbd_read_payload:" not in line:
                continue
            kv = dict(w.split("=", 1) for w in line.split("ksmbd_read_payload:")[1].split() if "=" in w)
            out.append((kv.get("path"), kv.get("reason"), int(kv.get("len", -1)),
                        kv.get("src")))
    return out


PARAMS = "/sys/module/ksmbd/parameters"


def param_read(name):
    with open(f"{PARAMS}/{name}") as f:
        return f.read().strip()


def param_write(name, value):
    with open(f"{PARAMS}/{name}", "w") as f:
        f.write(str(value))


def classify(*args):
    subprocess.run(["smb-classify", *args], check=True, stdout=subprocess.DEVNULL)


# ---- test drivers --------------------------------------------------------

class Checks:
    def __init__(self):
        self.fail = 0
        self.ok = 0
        self.shown = 0

    def check(self, cond, desc, detail=""):
        if cond:
            self.ok += 1
            return True
        self.fail += 1
        if self.shown < 40:
            print(f"FAIL: {desc}{': ' + detail if detail else ''}", flush=True)
            self.shown += 1
        return False

    def summary(self, what):
        if self.fail:
            print(f"FAIL: {what}: {self.fail} of {self.ok + self.fail} checks failed")
        else:
            print(f"PASS: {what}: {self.ok} checks")
        return self.fail == 0


def env_client(args, mode="plain", dialect="3.0", host=None):
    return Client(host or args.host, os.environ["SMB_USER"], os.environ["SMB_PASS"],
                  os.environ.get("SMB_SHARE", "share"), mode, dialect)


def expect_path(policy, length, floor):
    """(path, reason, src) the oracle must show for a READ of @length > 0
    under @policy, with the kernel's splice floor @floor."""
    copied = ("copy", "no_verdict", "copy")
    if policy in ("forced", "pages"):
        if length < floor:
            return ("copy", "below_floor", "copy")
        return ("splice", "-", "pages" if policy == "pages" else "pagecache")
    if policy == "default":
        return ("splice", "-", "pagecache") if length >= max(65536, floor) else copied
    return copied  # off, or nothing attached: never spliced


def cmd_exact(args):
    """80-read-exact: the length x offset matrix and the edge READs, per policy phase."""
    ck = Checks()
    share = os.environ["SMB_SHARE_DIR"]
    files = {}
    for name in args.files:
        with open(os.path.join(share, name), "rb") as f:
            files[name] = f.read()
    lengths = [int(x) for x in args.lengths.split(",")]
    results = {}
    trace_enable()
    floor = int(param_read("read_splice_floor"))
    loaded = True       # the caller loads the classifier
    for phase in args.phases.split(","):
        # "pages": splice forced, the page cache not shared (private pages)
        param_write("read_payload_pagecache", "N" if phase == "pages" else "Y")
        if phase == "none":
            classify("unload")
            loaded = False
        else:
            if not loaded:
                classify("load")
                loaded = True
            if phase == "off":
                classify("policy", "set", "0", "splice-min", "off")
            elif phase in ("forced", "pages"):
                classify("policy", "set", "0", "splice-min", "0")
            elif phase == "default":
                subprocess.run(["smb-classify", "policy", "del", "0"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        c = env_client(args)
        n_reads = 0
        paths = {}
        for name, src in files.items():
            size = len(src)
            fid = c.open(name)
            c.grow_credits(fid)
            cases = [(L, o, 0) for L in lengths for o in sorted({0, 1, 4095, size - 1})]
            # Edge READs: at EOF, MinimumCount, zero length; and a satisfied MinimumCount
            cases += [(1, size, 0), (2, size - 1, 2), (0, 0, 0), (2, size - 2, 2),
                      (65536, size, 0), (65536, size - 1, 2)]
            for (L, off, mc) in cases:
                trace_clear()
                st, data, wire, r = c.read(fid, off, L, mc)
                ev = trace_events()
                n_reads += 1
                what = f"[{phase}] {name} READ len={L} off={off} min={mc}"
                want = src[off:off + L]
                if L > 0 and (len(want) == 0 or len(want) < mc):
                    ck.check(st == STATUS_END_OF_FILE, what, f"status {status_name(st)}, want END_OF_FILE")
                    ck.check(wire == ERR_RSP_LEN, what, f"error frame of {wire} bytes, want {ERR_RSP_LEN} (no data)")
                    ck.check(ev == [], what, f"oracle fired for an error reply: {ev}")
                else:
                    ck.check(st == STATUS_SUCCESS, what, f"status {status_name(st)}")
                    ck.check(data == want, what,
                             f"{len(data)} bytes, want {len(want)}; sha256 {hashlib.sha256(data).hexdigest()[:12]} vs {hashlib.sha256(want).hexdigest()[:12]}")
                    ck.check(wire == READ_RSP_HDR + len(want), what,
                             f"frame of {wire} bytes, want {READ_RSP_HDR + len(want)}")
                    if L == 0:
                        # never splice: copy (no_verdict or empty), no data
                        ck.check(len(ev) == 1 and ev[0][0] == "copy" and ev[0][1] in ("no_verdict", "empty")
                                 and ev[0][2] == 0 and ev[0][3] == "none", what,
                                 f"zero-length READ events {ev}, want one copy/empty|no_verdict len=0 src=none")
                    elif ck.check(len(ev) == 1, what, f"want one read_payload event, got {ev}"):
                        exp = expect_path(phase, L, floor)
                        p, reason, n, where = ev[0]
                        ck.check((p, reason, where) == exp and n == len(want), what,
                                 f"oracle path={p} reason={reason} src={where} len={n}, "
                                 f"want path={exp[0]} reason={exp[1]} src={exp[2]} len={len(want)}")
                        key = f"{p}/{reason}/{where}"
                        paths[key] = paths.get(key, 0) + 1
                key = f"{name}:{L}:{off}:{mc}"
                rec = (st, wire, hashlib.sha256(data).hexdigest())
                results.setdefault(key, {})[phase] = rec
            c.close(fid)
        print(f"# phase {phase}: {n_reads} READs, oracle paths {paths}", flush=True)
        c.disconnect()
    param_write("read_payload_pagecache", "Y")
    # the same status, frame length and bytes on every path
    for key, per in results.items():
        vals = set(per.values())
        ck.check(len(vals) == 1, f"READ {key} differs between phases", str(per))
    return 0 if ck.summary("read-exact") else 1


def cmd_secure(args):
    """81: READs on a signed or sealed session: replies verify, data exact,
    the oracle says copy."""
    ck = Checks()
    share = os.environ["SMB_SHARE_DIR"]
    with open(os.path.join(share, args.file), "rb") as f:
        src = f.read()
    size = len(src)
    trace_enable()
    c = env_client(args, args.mode, args.dialect)
    fid = c.open(args.file)
    c.grow_credits(fid)
    cases = [(1, 0, 0), (4095, 1, 0), (65536, 0, 0), (65537, 4095, 0), (1 << 20, 0, 0),
             (1 << 20, size - 100, 0), (1, size, 0), (2, size - 1, 2), (0, 0, 0)]
    reasons = {}
    for (L, off, mc) in cases:
        what = f"[{args.mode} {args.dialect}] READ len={L} off={off} min={mc}"
        trace_clear()
        try:
            st, data, wire, r = c.read(fid, off, L, mc)
        except ProtocolError as e:
            ck.check(False, what, str(e))
            continue
        ev = trace_events()
        want = src[off:off + L]
        ck.check(r.encrypted == (args.mode == "sealed"), what, "reply encryption")
        if L > 0 and (len(want) == 0 or len(want) < mc):
            ck.check(st == STATUS_END_OF_FILE, what, f"status {status_name(st)}")
            ck.check(ev == [], what, f"oracle fired for an error reply: {ev}")
            continue
        ck.check(st == STATUS_SUCCESS, what, f"status {status_name(st)}")
        ck.check(data == want, what, f"{len(data)} bytes, want {len(want)}")
        if L == 0:
            continue
        if ck.check(len(ev) == 1, what, f"want one read_payload event, got {ev}"):
            p, reason, n, where = ev[0]
            ok_reasons = {"signed"} if args.mode == "signed" else {"encrypted", "no_verdict"}
            ck.check(p == "copy" and reason in ok_reasons and n == len(want) and where == "copy", what,
                     f"oracle path={p} reason={reason} src={where} len={n}, want copy ({'/'.join(sorted(ok_reasons))}) src=copy")
            reasons[reason] = reasons.get(reason, 0) + 1
    c.close(fid)
    print(f"# {args.mode} {args.dialect}: oracle reasons {reasons}")
    return 0 if ck.summary(f"{args.mode} session, SMB {args.dialect}") else 1


def cmd_compound(args):
    """81: compound CREATE+READ+CLOSE (related) and READ+READ (unrelated)
    on a plain session with splice forced: data exact, oracle copy/compound."""
    ck = Checks()
    share = os.environ["SMB_SHARE_DIR"]
    with open(os.path.join(share, args.file), "rb") as f:
        src = f.read()
    trace_enable()
    c = env_client(args)
    fid = c.open(args.file)
    c.grow_credits(fid)
    # A READ followed by another command in one compound must fit, with
    # the headers, in ksmbd's compound reply buffer (max trans size, 1 MiB
    # by default), with or without BPF: 1 MiB does not, so 512 KiB is the
    # largest case here.
    for L in (1, 4095, 65536, 65537, 1 << 19):
        trace_clear()
        rs = c.compound([(CMD_CREATE, c.create_body(args.file), 1, False),
                         (CMD_READ, c.read_body(RELATED_FID, 0, L), c.charge(L), True),
                         (CMD_CLOSE, CLOSE_REQ.pack(24, 0, 0, RELATED_FID), 1, True)])
        what = f"compound CREATE+READ({L})+CLOSE"
        if not ck.check([r.command for r in rs] == [CMD_CREATE, CMD_READ, CMD_CLOSE], what,
                        f"replies {[r.command for r in rs]}"):
            continue
        ck.check(all(r.status == 0 for r in rs), what,
                 f"statuses {[status_name(r.status) for r in rs]}")
        _o, dlen, _rem, data = rs[1].read_data()
        ck.check(data == src[:L], what, f"{len(data)} bytes, want {min(L, len(src))}")
        ev = trace_events()
        # the verdict comes from the first PDU, a CREATE: no SPLICE asked
        ck.check(len(ev) == 1 and ev[0][0] == "copy" and ev[0][1] in ("compound", "no_verdict")
                 and ev[0][2] == len(src[:L]) and ev[0][3] == "copy", what,
                 f"oracle {ev}, want copy/compound or copy/no_verdict len={len(src[:L])}")
    # two unrelated READs: up to 512 KiB each (a compound reply of two
    # 1 MiB READs overflows ksmbd's response buffer, with or without BPF:
    # "next response offset exceeds response buffer size", no reply)
    for L in (4096, 65536, 65537, 1 << 19):
        trace_clear()
        rs = c.compound([(CMD_READ, c.read_body(fid, 0, L), c.charge(L), False),
                         (CMD_READ, c.read_body(fid, 7, L), c.charge(L), False)])
        what = f"compound READ({L})+READ({L})"
        if not ck.check(len(rs) == 2 and all(r.status == 0 for r in rs), what,
                        f"statuses {[status_name(r.status) for r in rs]}"):
            continue
        for r, off in zip(rs, (0, 7)):
            ck.check(r.read_data()[3] == src[off:off + L], what, f"data at {off}")
        ev = trace_events()
        ck.check(sorted(ev) == sorted([("copy", "compound", len(src[0:L]), "copy"),
                                       ("copy", "compound", len(src[7:7 + L]), "copy")]),
                 what, f"oracle {ev}, want copy/compound twice")
    # the connection still serves single READs, spliced
    trace_clear()
    st, data, _w, _r = c.read(fid, 0, 65536)
    ck.check(st == 0 and data == src[:65536], "plain READ after the compounds")
    ck.check(trace_events() == [("splice", "-", 65536, "pagecache")],
             "plain READ after the compounds is spliced from the page cache", str(trace_events()))
    c.close(fid)
    return 0 if ck.summary("compound READs") else 1


_PATTERN = bytearray()


def pattern(off, n):
    """Position-dependent bytes, never 0: byte at file offset o is
    1 + (o * 131 + (o >> 12)) % 255."""
    global _PATTERN
    if off + n > len(_PATTERN):
        size = max(off + n, 2 * len(_PATTERN), 1 << 20)
        _PATTERN = bytearray(1 + (o * 131 + (o >> 12)) % 255 for o in range(size))
    return bytes(_PATTERN[off:off + n])


def cmd_pattern_file(args):
    with open(args.path, "wb") as f:
        f.write(pattern(0, args.size))
    return 0


FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE = 0x01, 0x02


def punch_hole(fd, off, n):
    """fallocate(fd, KEEP_SIZE | PUNCH_HOLE, off, n), as fallocate -p does."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
    if libc.fallocate(fd, FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE, off, n):
        e = ctypes.get_errno()
        raise OSError(e, f"fallocate punch-hole {off}+{n}: {os.strerror(e)}")


def drop_caches():
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3")


def cmd_mutate(args):
    """83, server side, in a bounded loop.  truncate: cut the file to a
    point in [floor, ceil) and extend it back to ceil by appends; punch:
    punch a hole at an unaligned range in [floor, ceil) (the size stays)
    and write the pattern back.  The contents are always the pattern,
    zeros in [floor, ceil), or a truncated tail.  --drop-caches N: write 3
    to /proc/sys/vm/drop_caches every N rounds."""
    lo, hi = args.floor, args.ceil
    fd = os.open(args.path, os.O_WRONLY)
    step = drops = 0
    deadline = time.monotonic() + args.seconds
    while step < args.rounds and time.monotonic() < deadline:
        step += 1
        if args.mode == "punch":
            off = lo + (step * 7919) % (hi - lo - 1)
            n = min(hi - off, 1 + (step * 4099) % 40000)
            punch_hole(fd, off, n)
            os.pwrite(fd, pattern(off, n), off)
        else:
            cut = lo + (step * 7919) % (hi - lo)
            os.ftruncate(fd, cut)
            size = cut
            while size < hi:                 # extend by appending pattern
                n = min(hi - size, 12288 + (step % 5) * 4096 + step % 1000)
                os.pwrite(fd, pattern(size, n), size)
                size += n
        if args.drop_caches and step % args.drop_caches == 0:
            drop_caches()
            drops += 1
    os.close(fd)
    print(f"# mutator: {step} {args.mode} rounds, {drops} drop_caches")
    return 0


def cmd_stress_read(args):
    """83, client side: READs of --length bytes around [floor, ceil) of a
    file that changes under them, spliced.  Every reply frame has exactly
    DataLength bytes; every byte is the pattern, or 0 in [floor, zero-end)
    (a read racing a truncate or a hole punch may see the zeroed part of
    a page: the same on the copy path); only END_OF_FILE as an error;
    every reply with data spliced from --src."""
    ck = Checks()
    trace_enable()
    c = env_client(args)
    fid = c.open(args.name)
    c.grow_credits(fid)
    trace_clear()       # the 1-byte READs of grow_credits are below the floor
    n = eof = nbytes = 0
    L = args.length
    zero_end = args.zero_end if args.zero_end is not None else 1 << 62
    deadline = time.monotonic() + args.seconds
    i = 0
    while (n < args.reads and time.monotonic() < deadline) or \
            (n < args.min_reads and time.monotonic() < deadline + 120):
        if args.stop_file and os.path.exists(args.stop_file) and n >= args.min_reads:
            break
        i += 1
        off = args.floor - L + (i * 12289) % (args.ceil - args.floor + L)
        st, data, wire, r = c.read(fid, off, L)
        n += 1
        if st == STATUS_END_OF_FILE:
            eof += 1
            ck.check(wire == ERR_RSP_LEN, f"EOF reply at {off}", f"{wire} bytes")
            continue
        if not ck.check(st == STATUS_SUCCESS, f"READ at {off}", status_name(st)):
            continue
        nbytes += len(data)
        ck.check(wire == READ_RSP_HDR + len(data), f"READ at {off}", f"frame {wire} bytes for {len(data)} data")
        want = pattern(off, len(data))
        if data != want:
            bad = [j for j in range(len(data)) if data[j] != want[j]]
            ok = all(data[j] == 0 and args.floor <= off + j < zero_end for j in bad)
            ck.check(ok, f"READ at {off}: data", f"{len(bad)} bytes differ, first at {off + bad[0]}: {data[bad[0]]} vs {want[bad[0]]}")
    ev = trace_events()
    paths = {}
    for p, reason, _l, where in ev:
        paths[f"{p}/{reason}/{where}"] = paths.get(f"{p}/{reason}/{where}", 0) + 1
    print(f"# reader: {n} READs of {L}, {eof} at EOF, {nbytes} bytes; oracle {paths}")
    ck.check(n >= args.min_reads, "enough READs", f"{n} < {args.min_reads}")
    # --src A[,B]: every reply spliced from one of them, A at least once.
    srcs = args.src.split(",")
    ck.check(f"splice/-/{srcs[0]}" in paths and
             set(paths) <= {f"splice/-/{s}" for s in srcs},
             f"every READ reply with data was spliced from {args.src}", str(paths))
    # the connection is still in step: a plain READ of the stable prefix
    st, data, _w, _r = c.read(fid, 0, 65536)
    ck.check(st == 0 and data == pattern(0, 65536), "connection usable after the stress")
    c.close(fid)
    return 0 if ck.summary("reads while the file changes") else 1


def cmd_verify_read(args):
    """83d: --count READs of --length bytes at offsets spread over the
    first --limit bytes of NAME, each compared with the file at --local
    (the same file seen by the guest), spliced from --src."""
    ck = Checks()
    with open(args.local, "rb") as f:
        src = f.read(args.limit + args.length)
    trace_enable()
    c = env_client(args)
    fid = c.open(args.name)
    c.grow_credits(fid)
    trace_clear()
    L, span = args.length, max(1, min(args.limit, len(src)) - args.length)
    for i in range(args.count):
        off = (i * 786433) % span
        st, data, wire, _r = c.read(fid, off, L)
        want = src[off:off + L]
        if ck.check(st == STATUS_SUCCESS, f"READ at {off}", status_name(st)):
            ck.check(data == want, f"READ at {off}: data", f"{len(data)} bytes, want {len(want)}")
            ck.check(wire == READ_RSP_HDR + len(data), f"READ at {off}: frame", f"{wire} bytes")
    ev = trace_events()
    paths = {}
    for p, reason, _l, where in ev:
        paths[f"{p}/{reason}/{where}"] = paths.get(f"{p}/{reason}/{where}", 0) + 1
    print(f"# {args.count} READs of {L} of {args.name}; oracle {paths}")
    ck.check(paths == {f"splice/-/{args.src}": args.count},
             f"every READ spliced from {args.src}", str(paths))
    c.close(fid)
    return 0 if ck.summary(f"READs of {args.name}") else 1


def cmd_hog(args):
    """83b, client A: queue many 1 MiB READs, then (stopped by the test)
    read all the replies and check them; report progress in files."""
    src_path = os.path.join(os.environ["SMB_SHARE_DIR"], args.name)
    with open(src_path, "rb") as f:
        src = f.read()
    c = env_client(args, host=args.host)
    fid = c.open(args.name)
    L = args.length
    c.grow_credits(fid, args.count * c.charge(L) + 64)
    mids = {}
    for i in range(args.count):
        off = (i * L) % (len(src) - L + 1)
        mids[c.read_send(fid, off, L)] = off
    with open(args.sent_file, "w") as f:
        f.write(f"{len(mids)}\n")
    if args.self_stop:          # stopped before reading any reply
        os.kill(os.getpid(), signal.SIGSTOP)
    got = bad = 0
    while got < len(mids):
        replies, wire = c.recv_frame()
        for r in replies:
            off = mids.get(r.mid)
            got += 1
            if off is None or r.status != 0:
                bad += 1
                print(f"FAIL: A: reply mid {r.mid} status {status_name(r.status)}")
                continue
            _o, dlen, _rem, data = r.read_data()
            if data != src[off:off + L] or wire != READ_RSP_HDR + dlen:
                bad += 1
                print(f"FAIL: A: READ at {off}: {dlen} bytes, frame {wire}, data {'ok' if data == src[off:off+L] else 'differs'}")
    c.close(fid)
    print(f"# A: {got} replies of {L} bytes, {bad} bad")
    return 1 if bad else 0


def cmd_small(args):
    """83b, client B: open/read/close small files, check each; write the
    count of completed reads to a file after each one."""
    share = os.environ["SMB_SHARE_DIR"]
    srcs = {}
    for i in range(args.files):
        with open(os.path.join(share, f"small{i}.bin"), "rb") as f:
            srcs[f"small{i}.bin"] = f.read()
    c = env_client(args, host=args.host)
    done = 0
    for k in range(args.count):
        name = f"small{k % args.files}.bin"
        fid = c.open(name)
        st, data, _w, _r = c.read(fid, 0, 65536)
        c.close(fid)
        if st != 0 or data != srcs[name]:
            print(f"FAIL: B: {name}: {status_name(st)}, {len(data)} bytes")
            return 1
        done += 1
        with open(args.progress + ".tmp", "w") as f:
            f.write(f"{done}\n")
        os.replace(args.progress + ".tmp", args.progress)
    print(f"# B: {done} small reads, all exact")
    return 0


def cmd_batch_hold(args):
    """74, client A: open NAME with a batch oplock, report the level
    granted in READY_FILE, then never acknowledge the break: hold the open
    for SECONDS or until RELEASE_FILE exists, count the break
    notifications that arrived, and leave (the server closes the open,
    which ends the break wait of the other opens)."""
    c = env_client(args, args.mode, args.dialect, host=args.host)
    r = c.call(CMD_CREATE, c.create_body(args.name, oplock=OPLOCK_BATCH))
    if r.status:
        print(f"FAIL: holder: CREATE {args.name}: {status_name(r.status)}")
        return 1
    level = r.msg[66]
    with open(args.ready_file + ".tmp", "w") as f:
        f.write(f"{level}\n")
    os.replace(args.ready_file + ".tmp", args.ready_file)
    if level != OPLOCK_BATCH:
        print(f"FAIL: holder: oplock level 0x{level:02x} granted, want batch")
        return 1
    deadline = time.monotonic() + args.seconds
    while time.monotonic() < deadline:
        if args.release_file and os.path.exists(args.release_file):
            break
        time.sleep(0.1)
    breaks = 0
    while True:
        try:
            raw = c.nb.recv_packet(1).get_trailer()
        except Exception:
            break
        if raw[:4] == b"\xfdSMB" or (raw[:4] == b"\xfeSMB" and
                                     struct.unpack_from("<H", raw, 12)[0] == CMD_OPLOCK_BREAK):
            breaks += 1
    print(f"# holder: {breaks} break notification(s) received, none acknowledged")
    if not breaks:
        print("FAIL: holder: no oplock break notification arrived")
        return 1
    return 0


def cmd_openers(args):
    """73, client B: COUNT CREATEs of NAME sent at once on one connection
    (each must break A's oplock, which A never acknowledges), then their
    replies; SENT_FILE is written once all are on the wire."""
    c = env_client(args, args.mode, args.dialect, host=args.host)
    fid = c.open(args.warm)
    c.grow_credits(fid, args.count + 16)
    t0 = time.monotonic()
    mids = []
    for _ in range(args.count):
        mid, frame = c.build(CMD_CREATE, c.create_body(args.name))
        c.send_frame(frame)
        mids.append(mid)
    with open(args.sent_file, "w") as f:
        f.write(f"{len(mids)}\n")
    got = {}
    while len(got) < len(mids):
        replies, _ = c.recv_frame()
        for r in replies:
            got[r.mid] = (r.status, time.monotonic() - t0, r.msg[64 + 64:64 + 80])
    bad = [status_name(st) for st, _t, _f in got.values() if st]
    for st, _t, f in got.values():
        if not st:
            c.close(f)
    c.close(fid)
    slow = max(t for _st, t, _f in got.values())
    print(f"# openers: {len(got)} CREATE replies, {len(bad)} failed {bad}, last after {slow:.1f} s")
    return 1 if bad else 0


def cmd_echo_compound(args):
    """75: COUNT compounds [CLOSE, READ LENGTH] (data: not every command
    is control; each CLOSE closes a handle opened for it) and COUNT
    compounds [ECHO, ECHO] (control) on one plain session; every reply
    checked.  ([ECHO, READ] is refused by ksmbd 6.12 itself: "the first
    operation in the compound does not have sess".)"""
    ck = Checks()
    share = os.environ["SMB_SHARE_DIR"]
    with open(os.path.join(share, args.name), "rb") as f:
        src = f.read()
    c = env_client(args, host=args.host)
    fid = c.open(args.name)
    c.grow_credits(fid)
    echo = struct.pack("<HH", 4, 0)
    L = args.length
    for i in range(args.count):
        off = (i * 4096) % max(1, len(src) - L)
        fid2 = c.open(args.name)
        rs = c.compound([(CMD_CLOSE, CLOSE_REQ.pack(24, 0, 0, fid2), 1, False),
                         (CMD_READ, c.read_body(fid, off, L), c.charge(L), False)])
        if ck.check([r.command for r in rs] == [CMD_CLOSE, CMD_READ] and
                    all(r.status == 0 for r in rs), f"[CLOSE, READ {L}] #{i}",
                    f"{[(r.command, status_name(r.status)) for r in rs]}"):
            ck.check(rs[1].read_data()[3] == src[off:off + L], f"[CLOSE, READ {L}] #{i}: data")
    for i in range(args.count):
        rs = c.compound([(CMD_ECHO, echo, 1, False), (CMD_ECHO, echo, 1, False)])
        ck.check([r.command for r in rs] == [CMD_ECHO, CMD_ECHO] and
                 all(r.status == 0 for r in rs), f"[ECHO, ECHO] #{i}",
                 f"{[(r.command, status_name(r.status)) for r in rs]}")
    c.close(fid)
    return 0 if ck.summary("ECHO compounds") else 1


def cmd_sealed_ops(args):
    """75: on a sealed session, COUNT times: CREATE, READ, CLOSE of NAME;
    data checked."""
    ck = Checks()
    share = os.environ["SMB_SHARE_DIR"]
    with open(os.path.join(share, args.name), "rb") as f:
        src = f.read()
    c = env_client(args, "sealed", args.dialect, host=args.host)
    for i in range(args.count):
        fid = c.open(args.name)
        st, data, _w, r = c.read(fid, 0, 4096)
        ck.check(st == 0 and data == src[:4096] and r.encrypted, f"sealed READ #{i}")
        c.close(fid)
    return 0 if ck.summary("sealed CREATE/READ/CLOSE") else 1


# ---- pipelined clients (77, 79, 84, 86) -------------------------------------

WRITE_REQ = struct.Struct("<HHIQ16sIIHHI")       # 48, data follows at 112
CMD_WRITE = 9
ACCESS_RW = 0x0012019F                           # read, write, attributes


def recv_fast(c):
    """One frame of a plain session straight off the socket (no impacket
    copies: 1 MiB READ replies at depth): (Reply, wire length)."""
    sock = c.nb._sock
    sock.settimeout(c.timeout)

    def exact(n):
        buf = bytearray(n)
        mv, got = memoryview(buf), 0
        while got < n:
            k = sock.recv_into(mv[got:], n - got)
            if not k:
                raise ProtocolError("connection closed by the server")
            got += k
        return buf

    while True:
        hdr = exact(4)
        n = int.from_bytes(hdr[1:4], "big")
        if hdr[0] != 0:
            continue                    # NetBIOS keep-alive
        raw = bytes(exact(n))
        r = Reply(raw, n, False)
        if r.next:
            raise ProtocolError("compound reply in a pipelined session")
        if r.status == STATUS_PENDING and r.flags & FLAG_ASYNC:
            continue
        c.credits += r.credits - (r.charge or 1)
        return r, n


def sendall_vec(sock, bufs):
    """sendmsg() of @bufs until every byte is out."""
    bufs = [memoryview(b) for b in bufs]
    while bufs:
        n = sock.sendmsg(bufs)
        while bufs and n >= len(bufs[0]):
            n -= len(bufs[0])
            bufs.pop(0)
        if bufs and n:
            bufs[0] = bufs[0][n:]


def write_progress(path, n):
    if path:
        with open(path + ".tmp", "w") as f:
            f.write(f"{n}\n")
        os.replace(path + ".tmp", path)


def cmd_pipe(args):
    """Keep requests outstanding on one plain session until --count are
    done or --stop-file exists: READs of --length of NAME (each reply
    compared with the file in SMB_SHARE_DIR), or WRITEs (--write) of
    --length at offsets cycling over the first --size bytes, each block
    the bytes of --source (a local file) at its offset, so the file's
    final content is the first --size bytes of --source whatever the
    order (NAME must exist: it is opened, not created).  --depth N keeps N outstanding;
    --depth 0 as many as the credits granted allow (grown first to
    --credits), sent without reading a reply while credits last.
    --progress gets the count of completed requests after each one."""
    share = os.environ["SMB_SHARE_DIR"]
    L = args.length
    c = env_client(args, host=args.host)
    if args.write:
        with open(args.source, "rb") as f:
            src = f.read(args.size)
        blocks = max(1, len(src) // L)
        fid = c.open_rw(args.name)
    else:
        with open(os.path.join(share, args.name), "rb") as f:
            src = f.read()
        blocks = max(1, len(src) // L)
        fid = c.open(args.name)
    charge = c.charge(L)
    c.grow_credits(fid, args.credits)
    print(f"# pipe: {'WRITE' if args.write else 'READ'} {L} bytes, "
          f"{c.credits} credits granted, depth {args.depth or 'all credits'}",
          flush=True)
    outstanding = {}        # mid -> offset
    used = 0                # credits charged to outstanding requests
    sent = done = bad = 0
    maxout = 0
    i = 0
    srcv = memoryview(src)
    stop = False
    while True:
        if not stop and (args.count and sent >= args.count or
                         args.stop_file and os.path.exists(args.stop_file)):
            stop = True
        while not stop:
            if args.depth and len(outstanding) >= args.depth:
                break
            if c.credits - used < charge:
                break
            if args.count and sent >= args.count:
                break
            off = (i % blocks) * L
            i += 1
            if args.write:
                # header and body, then the data straight from the
                # source buffer: no copy of 1 MiB in Python per WRITE
                body = WRITE_REQ.pack(49, 112, L, off, fid, 0, 0, 0, 0, 0)
                mid, head = c.build(CMD_WRITE, body, charge)
                sendall_vec(c.nb._sock, [struct.pack(">I", len(head) + L) + head,
                                         srcv[off:off + L]])
            else:
                mid, frame = c.build(CMD_READ, c.read_body(fid, off, L), charge)
                c.nb._sock.sendall(struct.pack(">I", len(frame)) + frame)
            outstanding[mid] = off
            used += charge
            sent += 1
            maxout = max(maxout, len(outstanding))
        if not outstanding:
            break
        r, wire = recv_fast(c)
        off = outstanding.pop(r.mid, None)
        used -= charge
        done += 1
        if off is None or r.status != STATUS_SUCCESS:
            bad += 1
            print(f"FAIL: pipe: reply mid {r.mid} cmd {r.command} status {status_name(r.status)}")
        elif args.write:
            cnt = struct.unpack_from("<I", r.msg, 64 + 4)[0]
            if cnt != L:
                bad += 1
                print(f"FAIL: pipe: WRITE at {off}: Count {cnt}")
        else:
            _o, dlen, _rem, data = r.read_data()
            if data != src[off:off + L] or wire != READ_RSP_HDR + dlen:
                bad += 1
                print(f"FAIL: pipe: READ at {off}: {dlen} bytes, frame {wire}")
        write_progress(args.progress, done)
        if bad > 20:
            break
    write_progress(args.progress, done)
    c.close(fid)
    print(f"# pipe: {done} of {sent} requests completed, {bad} bad, at most {maxout} outstanding")
    return 1 if bad or done != sent else 0


def cmd_slow_read(args):
    """84: one READ of --length of NAME on a socket with a small receive
    buffer, then the reply read --chunk bytes every --interval seconds;
    writes the bytes received so far to --progress.  Ends when the
    server closes the connection (exit 0, the bytes printed) or when the
    whole reply arrived (exit 1: the deadline did not cut it), or, with
    --stop-file, once that file exists (exit 0)."""
    c = Client(args.host, os.environ["SMB_USER"], os.environ["SMB_PASS"],
               os.environ.get("SMB_SHARE", "share"), rcvbuf=args.rcvbuf)
    fid = c.open(args.name)
    c.grow_credits(fid, 64)
    sock = c.nb._sock
    want = 4 + READ_RSP_HDR + args.length
    mid = c.read_send(fid, 0, args.length)
    print(f"# slow: READ mid {mid} of {args.length} sent, rcvbuf "
          f"{sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)}", flush=True)
    got = reads = 0
    t0 = time.monotonic()
    sock.settimeout(args.timeout)
    while got < want:
        time.sleep(args.interval)
        if args.stop_file and os.path.exists(args.stop_file):
            print(f"# slow: stopped after {time.monotonic() - t0:.1f} s, {got} of {want} bytes "
                  f"of the reply received in {reads} reads", flush=True)
            return 0
        try:
            b = sock.recv(args.chunk)
        except (ConnectionResetError, BrokenPipeError):
            b = b""
        reads += 1
        if not b:
            print(f"# slow: connection closed by the server after {time.monotonic() - t0:.1f} s, "
                  f"{got} of {want} bytes of the reply received in {reads} reads", flush=True)
            write_progress(args.progress, got)
            return 0
        got += len(b)
        write_progress(args.progress, got)
    print(f"FAIL: slow: the whole reply ({got} bytes) arrived in {time.monotonic() - t0:.1f} s")
    return 1


UFFD_API = 0xAA
UFFDIO_API = 0xC018AA3F
UFFDIO_REGISTER = 0xC020AA00
UFFDIO_REGISTER_MODE_MISSING = 1
NR_USERFAULTFD = 323                    # x86-64


def cmd_inode_hold(args):
    """86: hold PATH's inode lock (i_rwsem) without end: a write(2) to
    PATH from a buffer registered with userfaultfd faults inside the
    file system's write_iter (shmem_file_write_iter holds inode_lock
    across generic_perform_write) and the fault is never resolved.  Any
    server WRITE of the file then blocks in its worker, holding its
    dispatcher slot, on something the dispatcher does not know.  Writes
    --ready-file once the fault is reported (the lock is held), exits
    (releasing it: the write fails with EFAULT) when --stop-file exists."""
    import ctypes
    import mmap
    import select
    import threading
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    uffd = libc.syscall(NR_USERFAULTFD, os.O_CLOEXEC | os.O_NONBLOCK)
    if uffd < 0:
        print(f"FAIL: userfaultfd: errno {ctypes.get_errno()}")
        return 1
    api = ctypes.create_string_buffer(struct.pack("<QQQ", UFFD_API, 0, 0), 24)
    if libc.ioctl(uffd, ctypes.c_ulong(UFFDIO_API), api) < 0:
        print(f"FAIL: UFFDIO_API: errno {ctypes.get_errno()}")
        return 1
    page = mmap.PAGESIZE
    m = mmap.mmap(-1, page, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
    reg = ctypes.create_string_buffer(
        struct.pack("<QQQQ", addr, page, UFFDIO_REGISTER_MODE_MISSING, 0), 32)
    if libc.ioctl(uffd, ctypes.c_ulong(UFFDIO_REGISTER), reg) < 0:
        print(f"FAIL: UFFDIO_REGISTER: errno {ctypes.get_errno()}")
        return 1
    fd = os.open(args.path, os.O_WRONLY)

    def writer():
        # pwrite from the registered page: faults with inode_lock held
        libc.pwrite(fd, ctypes.c_void_p(addr), ctypes.c_size_t(page),
                    ctypes.c_long(0))

    threading.Thread(target=writer, daemon=True).start()
    p = select.poll()
    p.register(uffd, select.POLLIN)
    if not p.poll(30000):
        print("FAIL: inode-hold: no page fault reported in 30 s")
        return 1
    with open(args.ready_file + ".tmp", "w") as f:
        f.write(f"{os.getpid()}\n")
    os.replace(args.ready_file + ".tmp", args.ready_file)
    print(f"# inode-hold: {args.path}: inode lock held (write faulting)", flush=True)
    while not os.path.exists(args.stop_file):
        time.sleep(0.1)
    print("# inode-hold: released", flush=True)
    os._exit(0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--host", default=os.environ.get("SMB_SERVER", "127.0.0.1"))
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("exact")
    p.add_argument("--files", nargs="+", required=True)
    p.add_argument("--lengths", required=True)
    p.add_argument("--phases", default="none,off,default,forced")
    p.set_defaults(fn=cmd_exact)
    p = sub.add_parser("secure")
    p.add_argument("--file", required=True)
    p.add_argument("--mode", choices=["signed", "sealed"], required=True)
    p.add_argument("--dialect", choices=["3.0", "3.1.1"], default="3.0")
    p.set_defaults(fn=cmd_secure)
    p = sub.add_parser("compound")
    p.add_argument("--file", required=True)
    p.set_defaults(fn=cmd_compound)
    p = sub.add_parser("pattern-file")
    p.add_argument("path")
    p.add_argument("size", type=int)
    p.set_defaults(fn=cmd_pattern_file)
    p = sub.add_parser("mutate")
    p.add_argument("path")
    p.add_argument("--floor", type=int, required=True)
    p.add_argument("--ceil", type=int, required=True)
    p.add_argument("--rounds", type=int, default=2000)
    p.add_argument("--seconds", type=float, default=60)
    p.add_argument("--mode", choices=["truncate", "punch"], default="truncate")
    p.add_argument("--drop-caches", type=int, default=0, metavar="N")
    p.set_defaults(fn=cmd_mutate)
    p = sub.add_parser("stress-read")
    p.add_argument("name")
    p.add_argument("--floor", type=int, required=True)
    p.add_argument("--ceil", type=int, required=True)
    p.add_argument("--reads", type=int, default=100000)
    p.add_argument("--min-reads", type=int, default=200)
    p.add_argument("--seconds", type=float, default=60)
    p.add_argument("--stop-file")
    p.add_argument("--length", type=int, default=65536)
    p.add_argument("--zero-end", type=int)
    p.add_argument("--src", choices=["pagecache", "pages", "pagecache,pages"],
                   default="pagecache")
    p.set_defaults(fn=cmd_stress_read)
    p = sub.add_parser("verify-read")
    p.add_argument("name")
    p.add_argument("--local", required=True)
    p.add_argument("--length", type=int, default=1 << 20)
    p.add_argument("--count", type=int, default=40)
    p.add_argument("--limit", type=int, default=32 << 20)
    p.add_argument("--src", choices=["pagecache", "pages"], default="pagecache")
    p.set_defaults(fn=cmd_verify_read)
    p = sub.add_parser("hog")
    p.add_argument("name")
    p.add_argument("--count", type=int, default=48)
    p.add_argument("--length", type=int, default=1 << 20)
    p.add_argument("--sent-file", required=True)
    p.add_argument("--self-stop", action="store_true")
    p.set_defaults(fn=cmd_hog)
    p = sub.add_parser("batch-hold")
    p.add_argument("name")
    p.add_argument("--ready-file", required=True)
    p.add_argument("--seconds", type=float, default=60)
    p.add_argument("--release-file")
    p.add_argument("--mode", choices=["plain", "sealed"], default="plain")
    p.add_argument("--dialect", choices=["3.0", "3.1.1"], default="3.0")
    p.set_defaults(fn=cmd_batch_hold)
    p = sub.add_parser("openers")
    p.add_argument("name")
    p.add_argument("--warm", required=True)
    p.add_argument("--count", type=int, default=12)
    p.add_argument("--sent-file", required=True)
    p.add_argument("--mode", choices=["plain", "sealed"], default="plain")
    p.add_argument("--dialect", choices=["3.0", "3.1.1"], default="3.0")
    p.set_defaults(fn=cmd_openers)
    p = sub.add_parser("echo-compound")
    p.add_argument("name")
    p.add_argument("--count", type=int, default=20)
    p.add_argument("--length", type=int, default=65536)
    p.set_defaults(fn=cmd_echo_compound)
    p = sub.add_parser("sealed-ops")
    p.add_argument("name")
    p.add_argument("--count", type=int, default=10)
    p.add_argument("--dialect", choices=["3.0", "3.1.1"], default="3.0")
    p.set_defaults(fn=cmd_sealed_ops)
    p = sub.add_parser("small")
    p.add_argument("--files", type=int, default=10)
    p.add_argument("--count", type=int, default=50)
    p.add_argument("--progress", required=True)
    p.set_defaults(fn=cmd_small)
    p = sub.add_parser("pipe")
    p.add_argument("name")
    p.add_argument("--write", action="store_true")
    p.add_argument("--length", type=int, default=65536)
    p.add_argument("--size", type=int, default=16 << 20)
    p.add_argument("--source")
    p.add_argument("--depth", type=int, default=8)
    p.add_argument("--credits", type=int, default=1024)
    p.add_argument("--count", type=int, default=0)
    p.add_argument("--stop-file")
    p.add_argument("--progress")
    p.set_defaults(fn=cmd_pipe)
    p = sub.add_parser("slow-read")
    p.add_argument("name")
    p.add_argument("--length", type=int, default=1 << 20)
    p.add_argument("--rcvbuf", type=int, default=4096)
    p.add_argument("--chunk", type=int, default=1024)
    p.add_argument("--interval", type=float, default=2)
    p.add_argument("--timeout", type=float, default=300)
    p.add_argument("--progress")
    p.add_argument("--stop-file")
    p.set_defaults(fn=cmd_slow_read)
    p = sub.add_parser("inode-hold")
    p.add_argument("path")
    p.add_argument("--ready-file", required=True)
    p.add_argument("--stop-file", required=True)
    p.set_defaults(fn=cmd_inode_hold)
    args = ap.parse_args()
    try:
        return args.fn(args)
    except (ProtocolError, OSError, smb3.SessionError) as e:
        print(f"FAIL: {args.cmd}: {type(e).__name__}: {e}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
