#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# replace from a fresh process: one link update switches programs;
# new connections get the new program's class, and an existing connection
# takes it at its next request (a connection mounted before the program
# was loaded too), without a new ksmbd_sched_conn event; the link id and
# the prefixes survive a round trip; clients connecting during replaces are always classified by one of
# the two programs, never by neither; a bad object is an error that
# changes nothing.  Then, with attach_test: a connection whose
# classify_conn is held inside its call while the link is updated
# (slow_class, released after the update: it happens every run, not by
# chance) is classified by the old program, name and class together, and
# the next one by the new; and 1,000 updates while clients connect and
# read: every connection by one program or the other, data exact.
# vm-timeout: 600

set -euo pipefail
# shellcheck source=../lib.sh
source "${VM_DIR:?run me inside the VM: selftests/vm/run $0}/lib.sh"
# shellcheck source=../testlib-sched.sh
source "$VM_DIR/testlib-sched.sh"
sched_need_built
trap 'sched_stop_loop; sched_cleanup' EXIT

tmp=$sched_tmp
head -c 1M /dev/urandom >"$SMB_SHARE_DIR/data.bin"
want=$(sched_sha "$SMB_SHARE_DIR/data.bin")

# A connection accepted while nothing is attached.
sched_mount 127.0.0.5 127.0.0.1 "$tmp/d"

smb-classify load
smb-classify prefix add 127.0.0.2/32 1
smb-classify prefix add 127.0.0.5/32 5
smb-classify prefix add ::1/128 3 weight 2
smb-classify prefix list >"$tmp/prefixes.before"
link=$(sched_proc link_id)
sched_trace_start

# Mounted before load: its next requests carry the program's class.
re0=$(sched_proc conns_reclassified)
vm_check "mounted before load: read, sha256 equal" test "$(sched_sha "$tmp/d/data.bin")" = "$want"
sched_expect_reqs "mounted before load, read after" ::ffff:127.0.0.5 0x00010005 READ
# ... and every one of its READs was dispatched as the program's class 5
# (one dispatch event per READ req event), without a new conn event.
nreq=$(sched_count ksmbd_sched_req '.peer == "::ffff:127.0.0.5" and .cmd == "READ"')
ndisp=$(sched_count ksmbd_sched_dispatch '.class == 5 and .cmd == "READ"')
vm_check "mounted before load: its $nreq READs dispatched as class 5 ($ndisp dispatch events)" \
	test "$ndisp" = "$nreq" -a "$nreq" -gt 0
vm_check "mounted before load: no ksmbd_sched_conn event for it" \
	test "$(sched_count ksmbd_sched_conn '.peer == "::ffff:127.0.0.5"')" = 0
vm_check "mounted before load: reclassified once (conns_reclassified $re0 -> $(sched_proc conns_reclassified))" \
	test "$(sched_proc conns_reclassified)" -ge $(( re0 + 1 ))
umount "$tmp/d"
sched_trace_clear

# A connection classified by smb_prefix, kept open.
sched_mount 127.0.0.2 127.0.0.1 "$tmp/a"
port_a=$(sched_client_port 127.0.0.2)
sched_expect_conn "before replace" ::ffff:127.0.0.2 "$port_a" 0x00010001 smb_prefix

# Replace from a new process.
if out=$(smb-classify replace "$SCHED_CONST_OBJ" 2>&1); then
	vm_pass "replace with const_class: $out"
else
	vm_fail "replace with const_class: $out"
fi
vm_check "after replace: name const_class" test "$(sched_proc name)" = const_class
vm_check "after replace: link id unchanged ($link)" test "$(sched_proc link_id)" = "$link"
vm_check "after replace: still attached" test "$(sched_proc attached)" = 1
smb-classify prefix list >"$tmp/prefixes.mid"
vm_check "after replace: prefix list unchanged" cmp -s "$tmp/prefixes.before" "$tmp/prefixes.mid"
st=$(smb-classify -j status)
vm_check "status shows const_class's programs" \
	test "$(jq -r '[.progs[].name] | sort | join(",")' <<<"$st")" = "const_classify_,const_classify_"

# New connections get const_class's class word.
sched_trace_clear
sched_mount 127.0.0.3 127.0.0.1 "$tmp/b"
port_b=$(sched_client_port 127.0.0.3)
sched_expect_conn "new conn after replace" ::ffff:127.0.0.3 "$port_b" "$SCHED_CONST_WORD" const_class
vm_check "new conn after replace: read, sha256 equal" test "$(sched_sha "$tmp/b/data.bin")" = "$want"
sched_expect_reqs "new conn after replace" ::ffff:127.0.0.3 "$SCHED_CONST_WORD" READ
sched_trace_clear
sched_mount "" ::1 "$tmp/c"
port_c=$(sched_client_port ::1)
sched_expect_conn "new conn over ::1 after replace (prefix ignored)" ::1 "$port_c" "$SCHED_CONST_WORD" const_class
umount "$tmp/c"

# The old connection takes const_class's class at its next request.
sched_trace_clear
vm_check "old conn after replace: read, sha256 equal" test "$(sched_sha "$tmp/a/data.bin")" = "$want"
sched_expect_reqs "old conn after replace takes the new program's class" ::ffff:127.0.0.2 "$SCHED_CONST_WORD" READ
vm_check "old conn: no new ksmbd_sched_conn event" \
	test "$(sched_count ksmbd_sched_conn '.peer == "::ffff:127.0.0.2"')" = 0

# And back to the reference classifier: the pinned prefixes are used.
if out=$(smb-classify replace 2>&1); then
	vm_pass "replace back with the built-in smb_prefix: $out"
else
	vm_fail "replace back with the built-in smb_prefix: $out"
fi
vm_check "after replace back: name smb_prefix" test "$(sched_proc name)" = smb_prefix
vm_check "after replace back: link id unchanged ($link)" test "$(sched_proc link_id)" = "$link"
smb-classify prefix list >"$tmp/prefixes.after"
vm_check "after the round trip: prefix list unchanged" cmp -s "$tmp/prefixes.before" "$tmp/prefixes.after"
sched_trace_clear
sched_route_src 127.0.0.2
sched_smbclient 127.0.0.2 "get data.bin $tmp/sc.bin" >"$tmp/sc.out" 2>&1 || { cat "$tmp/sc.out"; vm_fail "smbclient via 127.0.0.2"; }
sched_expect_peer_conns "new conn after replace back uses the prefixes" ::ffff:127.0.0.2 0x00010001 smb_prefix
umount "$tmp/a" "$tmp/b"

# A bad object is refused and changes nothing.
bpf_before=$(sched_proc link_id):$(sched_proc name)
if out=$(smb-classify replace /etc/hostname 2>&1); then
	vm_fail "replace with a non-BPF file succeeded: $out"
else
	vm_check "replace with a non-BPF file: one Error: line ($out)" \
		test "$(grep -c '^Error: ' <<<"$out")" = 1
fi
# Objects that open but are not a link-based ksmbd_sched_ops: refused
# before anything is loaded, naming what is wrong.
progs=$VM_CHECKOUT/selftests/vm/progs
bad_object() {
	local obj=$1 want=$2 out
	if out=$(smb-classify replace "$progs/$obj" 2>&1); then
		vm_fail "replace with $obj succeeded: $out"
	else
		vm_check "replace with $obj: refused ($out)" grep -q -- "$want" <<<"$out"
	fi
}
bad_object other_ops.bpf.o "is a struct tcp_congestion_ops, not ksmbd_sched_ops"
bad_object nolink.bpf.o 'must be in SEC(".struct_ops.link")'
vm_check "bad replace: same link and program" \
	test "$(sched_proc link_id):$(sched_proc name)" = "$bpf_before"

# Clients connecting in a loop while replace flips the program: every
# connection is classified by smb_prefix (class 0 per peer, 0x80010000,
# for 127.0.0.1 here) or
# by const_class (42), never by neither (prog "-").
sched_trace_clear
(
	while :; do
		smbclient "//127.0.0.1/$SMB_SHARE" "${sched_auth[@]}" -m SMB3 -c "ls" >/dev/null 2>&1 || true
	done
) &
SCHED_LOOP_PID=$!
flips=6
seen=$(sched_conn_count)
for ((i = 0; i < flips; i++)); do
	if (( i % 2 == 0 )); then obj=("$SCHED_CONST_OBJ"); else obj=(); fi
	if ! out=$(smb-classify replace "${obj[@]}" 2>&1); then
		vm_fail "replace $i during connections: $out"
	fi
	# Let at least one connection be classified by this program.
	vm_poll 60 sched_conn_count_gt "$seen" || vm_fail "no connection after replace $i"
	seen=$(sched_conn_count)
done
sched_stop_loop
sched_trace_sync
sched_conn_events >"$tmp/loop.events"
n=$(sched_count ksmbd_sched_conn)
bad=$(sched_format ksmbd_sched_conn "(.class_word == $((0x80010000)) and .prog == \"smb_prefix\" or
	.class_word == $((SCHED_CONST_WORD)) and .prog == \"const_class\") | not" '"\(.peer) \(.class_word | hex8) \(.prog)"')
vm_check "during $flips replaces: all $n connections classified by smb_prefix (0) or const_class (42)" \
	test -z "$bad"
[[ -z $bad ]] || echo "$bad"
vm_check "during replaces: both programs classified connections" \
	test "$(sched_format ksmbd_sched_conn true .prog | sort -u | tr '\n' ' ')" = "const_class smb_prefix "
vm_check "after the replace loop: link id unchanged ($link)" test "$(sched_proc link_id)" = "$link"
vm_check "after the replace loop: name smb_prefix" test "$(sched_proc name)" = smb_prefix

smb-classify unload

# ---- a connection classified inside the update (deterministic) ---------
holder=
race_cleanup() {
	if [[ -n $holder ]]; then
		exec 8>&-
		wait "$holder" 2>/dev/null || true
		holder=
	fi
}
trap 'race_cleanup; sched_stop_loop; sched_cleanup' EXIT
mkfifo "$tmp/race.fifo"
"$SCHED_ATTACH_TEST" race <"$tmp/race.fifo" >"$tmp/race.out" 2>&1 &
holder=$!
exec 8>"$tmp/race.fifo"
if vm_poll 30 grep -q '^armed' "$tmp/race.out"; then
	sched_trace_clear
	rm -f "$tmp/race.bin"
	smbclient "//127.0.0.1/$SMB_SHARE" "${sched_auth[@]}" -m SMB3 \
		-c "get data.bin $tmp/race.bin" >"$tmp/race.sc" 2>&1 &
	sc=$!
	vm_check "race: the connection's classify_conn was held and released after the update" \
		vm_poll 60 grep -q '^raced .*update=0 saw_release=1' "$tmp/race.out"
	cat "$tmp/race.out"
	rc=0
	wait "$sc" || rc=$?
	vm_check "race: smbclient through the held connection (exit $rc), sha256 equal" \
		test "$rc" = 0 -a "$(sched_sha "$tmp/race.bin")" = "$want"
	port=$(sed -n 's/^raced port=\([0-9]*\) .*/\1/p' "$tmp/race.out")
	sched_expect_conn "race: classified inside the update, by the old program" \
		::ffff:127.0.0.1 "$port" 0x0001002a slow_class
	sched_trace_clear
	sched_smbclient 127.0.0.1 "get data.bin $tmp/race2.bin" >"$tmp/race.sc" 2>&1 ||
		vm_fail "race: smbclient after the update"
	sched_expect_peer_conns "race: the next connection, by the new program" \
		::ffff:127.0.0.1 0x0001002b const_b
else
	vm_fail "race: attach_test race did not arm: $(cat "$tmp/race.out")"
fi
race_cleanup

# ---- 1,000 updates while clients connect and read --------------------------
head -c 64K /dev/urandom >"$SMB_SHARE_DIR/small.bin"
want_small=$(sched_sha "$SMB_SHARE_DIR/small.bin")
sched_trace_clear
"$SCHED_ATTACH_TEST" flip 1000 20 >"$tmp/flip.out" 2>&1 &
flipper=$!
vm_poll 30 grep -q '^attached' "$tmp/flip.out" || vm_fail "flip: not attached: $(cat "$tmp/flip.out")"
# reader K: smbclient gets of small.bin while the flipper runs; counts of
# exact and bad reads in $tmp/flip.K.
reader() {
	local k=$1 good=0 bad=0
	while kill -0 "$flipper" 2>/dev/null; do
		rm -f "$tmp/flip$k.bin"
		if sched_smbclient 127.0.0.1 "get small.bin $tmp/flip$k.bin" >/dev/null 2>&1 &&
		   [[ $(sched_sha "$tmp/flip$k.bin") == "$want_small" ]]; then
			good=$((good + 1))
		else
			bad=$((bad + 1))
		fi
	done
	echo "$good $bad" >"$tmp/flip.$k"
}
reader 1 & r1=$!
reader 2 & r2=$!
reader 3 & r3=$!
rc=0
wait "$flipper" || rc=$?
wait "$r1" "$r2" "$r3" || true
gets=$(cat "$tmp"/flip.[123] | awk '{ g += $1 } END { print g + 0 }')
bad_gets=$(cat "$tmp"/flip.[123] | awk '{ b += $2 } END { print b + 0 }')
vm_check "flip: 1,000 link updates, all succeeded ($(tail -n 1 "$tmp/flip.out"))" \
	eval 'test "$rc" = 0 && grep -q "^flipped 1000 errors 0" "$tmp/flip.out"'
vm_check "flip: $gets reads during the updates, all sha256 equal ($bad_gets not)" \
	test "$bad_gets" = 0 -a "$gets" -gt 0
sched_trace_sync
sched_conn_events >"$tmp/flip.events"
n=$(sched_count ksmbd_sched_conn)
bad=$(sched_format ksmbd_sched_conn "(.class_word == $((0x0001002a)) and .prog == \"const_a\" or
	.class_word == $((0x0001002b)) and .prog == \"const_b\") | not" '"\(.peer) \(.class_word | hex8) \(.prog)"')
# The last read of each reader may connect after the detach (no conn
# event): n >= gets - 3.
vm_check "flip: all $n connections classified by const_a (42) or const_b (43), name and class together" \
	test -z "$bad" -a "$n" -ge $((gets - 3)) -a "$n" -ge 3
vm_check "flip: both programs classified connections" \
	test "$(sched_format ksmbd_sched_conn true .prog | sort -u | tr '\n' ' ')" = "const_a const_b "
[[ -z $bad ]] || echo "$bad" | head
vm_check "flip: nothing attached afterwards" vm_poll 30 eval 'test "$(sched_proc attached)" = 0'
vm_finish
