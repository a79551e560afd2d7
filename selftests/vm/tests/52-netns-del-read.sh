#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A netns deleted while its clients are reading.
# 6.12 ksmbd serves the initial netns only, so the clients are what the
# deleted netns takes with it: netns "d1" reaches ksmbd over the veth
# pair vd0 (init: 10.78.0.1/24 and 10.78.0.11/24) <-> vd1 (d1: 10.78.0.2
# and 10.78.0.3, the source of the connections to .11).  The initial
# netns has the reference classifier with max-inflight 1 (the smallest
# budget), 10.78.0.0/24 -> class 7 per peer (two clients),
# splice-min 16K for class 7; d1 has a program of its own attached too.
#   - a first read from d1 is byte-exact (sha256);
#   - four smbclient loops in d1 (two per source address; sessions of 50
#     reads each, so connections stay up) read a 16 MiB
#     file until killed; once both class-7 clients are connected and
#     class 7 has dispatched 40 of their requests, "ip netns del d1" and
#     SIGKILL of the loops: the netns goes (its veth pair with it: vd0
#     disappears);
#   - ksmbd drops every connection from d1: no class-7 client is left in
#     "smb-classify clients" (after 15 s, server sockets whose peer's
#     reset was lost with the veth are destroyed with ss -K), and
#     inflight, queued, clients, payloads and payload_pages are exactly 0;
#   - "smb-classify -n d1 status" cleans d1's pins (its program was
#     detached when the netns exited);
#   - ksmbd in the initial netns still serves: a read from 127.0.0.1 is
#     byte-exact and its connection is classified (trace);
#   - no kernel report (the harness fails the test on any).
# vm-timeout: 300

set -euo pipefail
# shellcheck source=../lib.sh
source "${VM_DIR:?run me inside the VM: selftests/vm/run $0}/lib.sh"
# shellcheck source=../testlib-sched.sh
source "$VM_DIR/testlib-sched.sh"
# shellcheck source=../testlib-netns.sh
source "$VM_DIR/testlib-netns.sh"
PGIDS=()
stop_readers() {
	local g
	for g in "${PGIDS[@]}"; do
		kill -KILL -- "-$g" 2>/dev/null || true
	done
	for g in "${PGIDS[@]}"; do
		wait "$g" 2>/dev/null || true
	done
	PGIDS=()
}
trap 'stop_readers; sched_ltrace_stop; netns_cleanup; sched_cleanup' EXIT

tmp=$sched_tmp
init_ino=$(sched_netns_ino)

netns_veth d1 vd0 vd1 10.78.0.1/24 10.78.0.2/24
ip addr add 10.78.0.11/24 dev vd0
ip -n d1 addr add 10.78.0.3/24 dev vd1
ip -n d1 route add 10.78.0.11/32 dev vd1 src 10.78.0.3
vm_pass "netns d1 over veth vd0/vd1, ksmbd listens on vd0"
d1_ino=$(stat -L -c %i /run/netns/d1)

smb-classify load max-inflight 1 >/dev/null
smb-classify prefix add 10.78.0.0/24 7 per-peer >/dev/null
smb-classify policy set 7 splice-min 16K >/dev/null
smb-classify -n d1 load >/dev/null
vm_check "d1 has a program of its own" test "$(sched_proc attached d1)" = 1
d1_link=$(sched_proc link_id d1)

head -c 16M /dev/urandom >"$SMB_SHARE_DIR/big.bin"
want=$(sched_sha "$SMB_SHARE_DIR/big.bin")

sched_ltrace_start "$tmp/t.json"
if out=$(netns_smbclient d1 10.78.0.1 "get big.bin $tmp/first.bin" 2>&1); then
	vm_check "first read from d1 byte-exact" test "$(sched_sha "$tmp/first.bin")" = "$want"
else
	vm_fail "first read from d1: $out"
fi

disp0=$(sched_class_field 7 dispatched)
# Four readers, each its own process group (setsid), so one kill takes
# the loop and the smbclient it runs; each session reads the file 50
# times, so its connection stays up across many READs.
gets=$(for i in $(seq 50); do printf 'get big.bin /dev/null; '; done)
for dest in 10.78.0.1 10.78.0.1 10.78.0.11 10.78.0.11; do
	setsid ip netns exec d1 bash -c '
		while :; do
			smbclient "//$1/$2" -U "$3" -m SMB3 \
				--option="client signing = disabled" \
				-c "$4" >/dev/null 2>&1
		done' reader "$dest" "$SMB_SHARE" "$SMB_USER%$SMB_PASS" "$gets" </dev/null &
	PGIDS+=("$!")
done

class7_clients() { smb-classify -j clients | jq '[.[] | select(.class == 7)] | length'; }
# reading: both class-7 clients (10.78.0.2, 10.78.0.3) have connections
# and class 7 dispatched 40 more requests since the readers started.
# (Requests need not queue: a READ gives its slot back while its reply
# is sent, wait_releases.)
reading() {
	(( $(smb-classify -j clients |
		jq '[.[] | select(.class == 7 and .conns > 0)] | length') >= 2 &&
	   $(sched_class_field 7 dispatched) >= disp0 + 40 ))
}
vm_check "both class-7 clients (10.78.0.2, 10.78.0.3) connected and reading" \
	vm_poll 90 reading
before=$(smb-classify -j clients | jq -c '[.[] | select(.class == 7) | {peer, conns, queued, inflight, dispatched}]')
disp_before=$(( $(sched_class_field 7 dispatched) - disp0 ))
ip netns del d1
vm_check "at the delete, class-7 connections were open: $before" \
	test "$(jq '[.[].conns] | add // 0' <<<"$before")" -gt 0
vm_check "d1's name is gone" test ! -e /run/netns/d1
stop_readers
vm_check "the netns is gone (its veth vd0 with it)" vm_poll 60 netns_dev_gone vd0
NETNS_HOST_DEVS=()

# ksmbd learns that d1's peers are gone from the resets their sockets
# send as the readers die.  A reset can be lost when d1's veth goes
# before it is delivered (once in about a dozen runs: the connections
# were still listed 90 s later), as when a client drops off a network,
# and then only TCP's own timeouts would end the connection.  So after
# 15 s the server's sockets still open to 10.78.0.0/24 are destroyed
# (ss -K, as an administrator would); either way ksmbd must then have
# dropped every connection and come back to 0.
no_class7() { test "$(class7_clients)" = 0; }
if ! vm_poll 15 no_class7; then
	echo "class-7 clients after 15 s: $(smb-classify -j clients | jq -c '[.[] | select(.class == 7) | {peer, conns}]');" \
		"destroying $(ss -Htn dst 10.78.0.0/24 | wc -l) server socket(s) to 10.78.0.0/24"
	ss -HtnK dst 10.78.0.0/24 >/dev/null || true
fi
vm_check "ksmbd dropped every connection from d1: no class-7 client left" \
	vm_poll 30 no_class7
vm_check "inflight, queued, clients, payloads, payload_pages exactly 0" \
	vm_poll 30 vm_sched_zero inflight queued clients payloads payload_pages
grep -v '^class' "$SCHED_PROC" | tr '\n' ' '; echo

sched_check_netns_gone d1 "$d1_ino" "$d1_link"

# The initial netns still serves, and still classifies.
if out=$(sched_smbclient 127.0.0.1 "get big.bin $tmp/after.bin" 2>&1); then
	vm_check "read from 127.0.0.1 after the delete byte-exact" \
		test "$(sched_sha "$tmp/after.bin")" = "$want"
else
	vm_fail "read from 127.0.0.1 after the delete: $out"
fi
vm_check "idle again: inflight, queued, clients, payloads, payload_pages 0" \
	vm_poll 30 vm_sched_zero inflight queued clients payloads payload_pages
sched_ltrace_sync "$tmp/t.json"

n=$(jq -r 'select(.event == "ksmbd_sched_conn" and .class == 7) | .peer' "$tmp/t.json" | sort | uniq -c | tr -s ' \n' ' ')
echo "class-7 connections (trace): $n; class 7 dispatched $disp_before by the readers before the delete"
vm_check "connections from both d1 addresses classified 7" \
	eval '[[ $n == *" ::ffff:10.78.0.2 "* && $n == *" ::ffff:10.78.0.3 "* ]]'
vm_check "the connection from 127.0.0.1 after the delete classified by the initial netns' program" \
	test "$(jq -r 'select(.event == "ksmbd_sched_conn" and .peer == "::ffff:127.0.0.1") |
		"\(.netns_ino) \(.prog)"' "$tmp/t.json" | sort -u)" = "$init_ino smb_prefix"
# ksmbd_read_payload: path 0 = spliced, else the reason copied (enum
# ksmbd_read_path); src 3 = page cache, 2 = private pages, 1 = copy.
paths=$(jq -r 'select(.event == "ksmbd_read_payload") | "path=\(.path)/src=\(.src)"' "$tmp/t.json" |
	sort | uniq -c | tr -s ' \n' ' ')
echo "READ replies (trace): $paths"
vm_check "READs were spliced (payloads were held while the netns went)" \
	test "$(jq -r 'select(.event == "ksmbd_read_payload" and .path == 0) | .src' "$tmp/t.json" | wc -l)" -gt 0
dropped=$(jq -r 'select(.event == "ksmbd_sched_dispatch" and .class == 7 and (.dropped == 1 or .dropped == true)) | .cmd' "$tmp/t.json" | wc -l)
echo "class-7 requests dropped as their connection went: $dropped"

smb-classify unload >/dev/null
vm_finish
