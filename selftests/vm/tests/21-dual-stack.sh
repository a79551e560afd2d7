#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Dual stack: ksmbd listens on one IPv6 socket that also takes
# IPv4 (v4-mapped).  With `127.0.0.0/8 -> 5` and `::/0 -> 0 per-peer
# prefix6 128` (the default /64 would make fd5b::a and fd5b::b one client):
#  - an IPv4 peer is classified by its IPv4 prefix (class 5), whether it
#    reached the server as 127.0.0.1 or as ::ffff:127.0.0.1;
#  - ::1 and two more IPv6 addresses on lo are each their own client of
#    class 0 (one address key everywhere: the ksmbd_sched_dispatch client
#    is the peer as ksmbd_sched_conn prints it).
# The extra addresses are on lo inside the VM, which has no network device.
# vm-timeout: 240

set -euo pipefail
# shellcheck source=../lib.sh
source "${VM_DIR:?run me inside the VM: selftests/vm/run $0}/lib.sh"
# shellcheck source=../testlib-sched.sh
source "$VM_DIR/testlib-sched.sh"

V6A=fd5b::a
V6B=fd5b::b
cleanup() {
	sched_cleanup
	ip -6 addr del "$V6A/128" dev lo 2>/dev/null || true
	ip -6 addr del "$V6B/128" dev lo 2>/dev/null || true
}
trap cleanup EXIT

head -c 256K /dev/urandom >"$SMB_SHARE_DIR/c1.bin"
want=$(sched_sha "$SMB_SHARE_DIR/c1.bin")

smb-classify load >/dev/null
smb-classify prefix add 127.0.0.0/8 5 >/dev/null
smb-classify prefix add ::/0 0 per-peer prefix6 128 >/dev/null
ip -6 addr add "$V6A/128" dev lo nodad
ip -6 addr add "$V6B/128" dev lo nodad
sched_trace_start

# One smbclient session per destination; the source follows it on lo.
for dest in 127.0.0.1 ::ffff:127.0.0.1 ::1 "$V6A" "$V6B"; do
	rm -f "$sched_tmp/got"
	if sched_smbclient "$dest" "get c1.bin $sched_tmp/got" >"$sched_tmp/out" 2>&1 &&
	   [[ $(sched_sha "$sched_tmp/got") == "$want" ]]; then
		vm_pass "read through //$dest: sha256 equal"
	else
		vm_fail "read through //$dest"
		cat "$sched_tmp/out"
	fi
done

# IPv4, however it was addressed, is one peer key: ::ffff:127.0.0.1.
sched_expect_peer_conns "IPv4 peer by its IPv4 prefix" ::ffff:127.0.0.1 0x00010005 smb_prefix
n4=$(sched_count ksmbd_sched_conn '.peer == "::ffff:127.0.0.1"')
vm_check "both IPv4 sessions arrived as ::ffff:127.0.0.1 ($n4)" test "$n4" -eq 2
for p in ::1 "$V6A" "$V6B"; do
	sched_expect_peer_conns "IPv6 peer $p per-peer" "$p" 0xa0010000 smb_prefix
done

# Dispatch: each IPv6 peer is its own client, keyed by the same address.
dispatch_clients() {
	sched_events ksmbd_sched_dispatch | jq -r '"\(.class)/\(.peer)"' | sort -u
}
clients=$(dispatch_clients)
echo "dispatch clients: ${clients//$'\n'/ }"
for p in ::1 "$V6A" "$V6B"; do
	vm_check "dispatch client 0/$p exists" grep -qx "0/$p" <<<"$clients"
done
vm_check "IPv4 peer dispatched as class 5, one client (5/::)" grep -qx "5/::" <<<"$clients"
vm_check "no other client" test "$(wc -l <<<"$clients")" -eq 4

vm_finish
