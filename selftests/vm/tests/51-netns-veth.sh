#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A client in another netns over veth.  ksmbd serves
# the initial netns; netns "v1" reaches it over the veth pair vs0 (init,
# 10.77.0.1/24, fd77::1/64) <-> vc0 (v1, 10.77.0.2/24, fd77::2/64): the
# traffic stays inside the VM.  With the reference classifier and nested
# prefixes 10.0.0.0/8 -> 3, 10.77.0.0/16 -> 5, 10.77.0.0/24 -> 4,
# fd77::/16 -> 6, fd77::/64 -> 8 (LPM: the longest wins):
#   - smbclient from v1 over IPv4 and over IPv6 each reads a 4 MiB file
#     and writes one back, byte-exact (sha256 both ways);
#   - "smb-classify -j trace" shows the connections from 10.77.0.2 and
#     fd77::2, from the initial netns' program (netns field = the
#     server's netns), with classes 4 and 8; every request of theirs
#     carries that class, READs and WRITEs among them;
#   - the per-class counters of classes 4 and 8 grew by at least the
#     bytes moved, classes 3, 5, 6 (the shorter prefixes) never appear;
#   - afterwards inflight, queued, clients, payloads, payload_pages 0.
# vm-timeout: 180

set -euo pipefail
# shellcheck source=../lib.sh
source "${VM_DIR:?run me inside the VM: selftests/vm/run $0}/lib.sh"
# shellcheck source=../testlib-sched.sh
source "$VM_DIR/testlib-sched.sh"
# shellcheck source=../testlib-netns.sh
source "$VM_DIR/testlib-netns.sh"
trap 'sched_ltrace_stop; netns_cleanup; sched_cleanup' EXIT

tmp=$sched_tmp
init_ino=$(sched_netns_ino)
SIZE=$((4 << 20))

netns_veth v1 vs0 vc0 10.77.0.1/24 10.77.0.2/24 fd77::1/64 fd77::2/64
vm_pass "netns v1 over veth vs0/vc0, ksmbd listens on vs0"

smb-classify load >/dev/null
smb-classify prefix add 10.0.0.0/8 3 >/dev/null
smb-classify prefix add 10.77.0.0/16 5 >/dev/null
smb-classify prefix add 10.77.0.0/24 4 >/dev/null
smb-classify prefix add fd77::/16 6 >/dev/null
smb-classify prefix add fd77::/64 8 >/dev/null

head -c "$SIZE" /dev/urandom >"$SMB_SHARE_DIR/r.bin"
want=$(sched_sha "$SMB_SHARE_DIR/r.bin")
head -c "$SIZE" /dev/urandom >"$tmp/up.bin"
want_up=$(sched_sha "$tmp/up.bin")

declare -A b4 d4
for c in 3 4 5 6 8; do
	b4[$c]=$(sched_class_field "$c" bytes)
	d4[$c]=$(sched_class_field "$c" dispatched)
done

sched_ltrace_start "$tmp/t.json"
# v4 and v6 in turn: one session each, a read and a write.
for dest in 10.77.0.1 fd77::1; do
	tag=${dest//:/_}
	if out=$(netns_smbclient v1 "$dest" "get r.bin $tmp/got-$tag.bin; put $tmp/up.bin up-$tag.bin" 2>&1); then
		vm_pass "smbclient from v1 to $dest: get and put"
	else
		vm_fail "smbclient from v1 to $dest: $out"
	fi
	vm_check "v1 -> $dest: r.bin read byte-exact" \
		test "$(sched_sha "$tmp/got-$tag.bin" 2>/dev/null)" = "$want"
	vm_check "v1 -> $dest: up.bin written byte-exact" \
		test "$(sched_sha "$SMB_SHARE_DIR/up-$tag.bin" 2>/dev/null)" = "$want_up"
done
vm_check "idle afterwards: inflight, queued, clients, payloads, payload_pages 0" \
	vm_poll 30 vm_sched_zero inflight queued clients payloads payload_pages
sched_ltrace_sync "$tmp/t.json"

# conn_classes PEER: "CLASS NETNS PROG" of the peer's connection events.
conn_classes() {
	jq -r --arg p "$1" 'select(.event == "ksmbd_sched_conn" and .peer == $p) |
		"\(.class) \(.netns_ino) \(.prog)"' "$tmp/t.json" | sort -u
}
# req_summary PEER CLASS: commands of the peer's requests with counts,
# "BAD" for one of another class.
req_summary() {
	jq -r --arg p "$1" --argjson c "$2" 'select(.event == "ksmbd_sched_req" and .peer == $p) |
		if .class == $c then .cmd else "BAD" end' "$tmp/t.json" | sort | uniq -c | tr -s ' \n' ' '
}
for pc in ::ffff:10.77.0.2/4 fd77::2/8; do
	peer=${pc%/*} class=${pc#*/}
	got=$(conn_classes "$peer")
	vm_check "conn from $peer: class $class, classified in the server's netns ($init_ino) by smb_prefix ($got)" \
		test "$got" = "$class $init_ino smb_prefix"
	sum=$(req_summary "$peer" "$class")
	echo "requests of $peer: $sum"
	vm_check "requests of $peer: all class $class" eval '[[ $sum != *BAD* ]]'
	vm_check "requests of $peer: READs and WRITEs among them" \
		eval '[[ $sum == *" READ "* && $sum == *" WRITE "* ]]'
done
vm_check "no event of the v1 clients in another class" \
	test "$(jq -r 'select(.peer == "::ffff:10.77.0.2" or .peer == "fd77::2") | select(.class != null) |
		select(.class != 4 and .class != 8) | .event' "$tmp/t.json" | wc -l)" = 0

for c in 4 8; do
	db=$(( $(sched_class_field "$c" bytes) - b4[$c] ))
	dd=$(( $(sched_class_field "$c" dispatched) - d4[$c] ))
	vm_check "class $c: +$dd dispatched, +$db bytes >= $((2 * SIZE)) (read + write)" \
		test "$dd" -gt 0 -a "$db" -ge $((2 * SIZE))
done
for c in 3 5 6; do
	vm_check "class $c (a shorter prefix) dispatched nothing" \
		test "$(sched_class_field "$c" dispatched)" = "${d4[$c]}"
done

smb-classify unload >/dev/null
vm_finish
