#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# unload: the link is detached and its pins removed; new connections take
# the old path (no ksmbd_sched_conn event at all: the static key is off,
# counters frozen); an open connection keeps working with intact data and
# gets no more verdicts; a second unload is "nothing loaded", exit 0;
# replace with nothing loaded is an error.
# vm-timeout: 240

set -euo pipefail
# shellcheck source=../lib.sh
source "${VM_DIR:?run me inside the VM: selftests/vm/run $0}/lib.sh"
# shellcheck source=../testlib-sched.sh
source "$VM_DIR/testlib-sched.sh"
trap sched_cleanup EXIT

tmp=$sched_tmp
ino=$(sched_netns_ino)
head -c 2M /dev/urandom >"$SMB_SHARE_DIR/data.bin"
want=$(sched_sha "$SMB_SHARE_DIR/data.bin")

smb-classify load
smb-classify prefix add 127.0.0.0/8 2 weight 3
sched_trace_start
sched_mount 127.0.0.2 127.0.0.1 "$tmp/a"
port=$(sched_client_port 127.0.0.2)
sched_expect_conn "loaded" ::ffff:127.0.0.2 "$port" 0x00030002 smb_prefix
vm_check "loaded: read, sha256 equal" test "$(sched_sha "$tmp/a/data.bin")" = "$want"
sched_expect_reqs "loaded" ::ffff:127.0.0.2 0x00030002 READ
link=$(sched_proc link_id)
vm_check "loaded: pinned link under $SCHED_PINS/$ino" test -e "$SCHED_PINS/$ino/link"

if out=$(smb-classify unload 2>&1); then
	vm_check "unload: reports link $link ($out)" grep -q "unloaded link $link" <<<"$out"
else
	vm_fail "unload: exit status non-zero: $out"
fi
conns=$(sched_proc conns_classified)
reqs=$(sched_proc reqs_classified)
vm_check "after unload: attached: 0" test "$(sched_proc attached)" = 0
vm_check "after unload: name -, link_id 0" test "$(sched_proc name):$(sched_proc link_id)" = "-:0"
vm_check "after unload: no pins left for netns $ino" test ! -e "$SCHED_PINS/$ino"
vm_check "after unload: link $link is gone" vm_poll 10 sh -c "! bpftool link show id $link >/dev/null 2>&1"

# New connections: no event (static key off), counters unchanged.
sched_trace_clear
sched_route_src 127.0.0.3
if sched_smbclient 127.0.0.3 "get data.bin $tmp/sc.bin; put $tmp/sc.bin back.bin" >"$tmp/sc.out" 2>&1; then
	vm_check "after unload: smbclient get, sha256 equal" test "$(sched_sha "$tmp/sc.bin")" = "$want"
	vm_check "after unload: smbclient put, server-side sha256 equal" \
		test "$(sched_sha "$SMB_SHARE_DIR/back.bin")" = "$want"
else
	vm_fail "after unload: smbclient via 127.0.0.3"; cat "$tmp/sc.out"
fi
sched_mount 127.0.0.4 127.0.0.1 "$tmp/b"
vm_check "after unload: new cifs mount reads, sha256 equal" test "$(sched_sha "$tmp/b/data.bin")" = "$want"
# The old connection still works, without verdicts.
vm_check "after unload: old cifs mount reads, sha256 equal" test "$(sched_sha "$tmp/a/data.bin")" = "$want"
sched_trace_sync
vm_check "after unload: no ksmbd_sched_conn event" test "$(sched_count ksmbd_sched_conn)" = 0
vm_check "after unload: no ksmbd_sched_req event" test "$(sched_count ksmbd_sched_req)" = 0
vm_check "after unload: conns_classified unchanged ($conns)" test "$(sched_proc conns_classified)" = "$conns"
vm_check "after unload: reqs_classified unchanged ($reqs)" test "$(sched_proc reqs_classified)" = "$reqs"
umount "$tmp/a" "$tmp/b"

# Unload again: nothing loaded, exit 0; JSON says so too.
if out=$(smb-classify unload 2>&1); then
	vm_check "second unload: exit 0, 'nothing loaded' ($out)" grep -q "nothing loaded" <<<"$out"
else
	vm_fail "second unload: exit status non-zero: $out"
fi
if out=$(smb-classify -j unload 2>&1) && jq -e '.result == "unloaded" and .link_id == 0' <<<"$out" >/dev/null; then
	vm_pass "third unload -j: $out"
else
	vm_fail "third unload -j: $out"
fi
if out=$(smb-classify -j status 2>&1) && jq -e '.attached == false and .pinned == false' <<<"$out" >/dev/null; then
	vm_pass "status -j after unload: not attached, not pinned"
else
	vm_fail "status -j after unload: $out"
fi
if out=$(smb-classify replace 2>&1); then
	vm_fail "replace with nothing loaded succeeded: $out"
else
	vm_check "replace with nothing loaded: Error: line ($out)" grep -q '^Error: ' <<<"$out"
fi
vm_check "still nothing attached" test "$(sched_proc attached)" = 0

# Load again after unload: classification is back.
smb-classify load >/dev/null
sched_trace_clear
sched_mount 127.0.0.5 127.0.0.1 "$tmp/c"
port=$(sched_client_port 127.0.0.5)
# The prefixes were unpinned by unload: a fresh, empty map, class 0 per
# peer.
sched_expect_conn "reloaded (prefixes gone with unload)" ::ffff:127.0.0.5 "$port" 0x80010000 smb_prefix
umount "$tmp/c"
smb-classify unload >/dev/null
vm_finish
