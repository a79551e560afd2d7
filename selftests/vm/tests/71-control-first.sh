#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Control requests go ahead of their client's data.  One busy client
# (a cifs mount from 127.0.0.2, fio 64 KiB reads at queue depth 32, class
# 1) keeps ~30 requests waiting in a dispatcher of budget 2.  A new
# smbclient session from the same address (so the same client queue)
# runs echo + ls.  With the dispatch tracepoint (through the loader's
# tracer, whose trace clock is mono, the clock of wait_ns):
#   - its NEGOTIATE, SESSION_SETUP and TREE_CONNECT dispatch with
#     waited=0, and so does its ECHO;
#   - the client's READs dispatched in the same window all have waited=1
#     and wait_ns > 0;
#   - a READ queued before one of the session's control requests arrived
#     was dispatched after it (control served ahead of data queued
#     earlier);
#   - the client still has waiting requests after smbclient is done.
# vm-timeout: 240

set -euo pipefail
# shellcheck source=../lib.sh
source "${VM_DIR:?run me inside the VM: selftests/vm/run $0}/lib.sh"
# shellcheck source=../testlib-sched.sh
source "$VM_DIR/testlib-sched.sh"
# shellcheck source=../testlib-fair.sh
source "$VM_DIR/testlib-fair.sh"
trap fair_cleanup EXIT

head -c 16M /dev/urandom >"$SMB_SHARE_DIR/data.bin"
want_sha=$(sched_sha "$SMB_SHARE_DIR/data.bin")

fair_load 2
smb-classify prefix add 127.0.0.2/32 1 >/dev/null
sched_route_src 127.0.0.2	# smbclient to 127.0.0.2 leaves from it
fair_trace_dispatch_on		# the tracer's clock: mono, that of wait_ns

fair_mount 127.0.0.2 "$sched_tmp/a"
fair_fio busy "$sched_tmp/a/data.bin" 120 32
if ! vm_poll 60 fair_at_least queued 8; then
	vm_fail "the busy client never had 8 requests waiting"
	vm_finish
fi

sched_trace_clear
sc_rc=0
sched_smbclient 127.0.0.2 "echo 1 ping; ls" >"$sched_tmp/sc.out" 2>&1 || sc_rc=$?
queued_after=$(sched_proc queued)
clients_after=$(sched_proc clients)
sched_trace_stop
cp "$SCHED_TRACE_JSON" "$TEST_RESULTS/control.json"

vm_check "smbclient echo + ls (status $sc_rc)" test "$sc_rc" = 0
vm_check "smbclient listed data.bin" grep -q 'data.bin' "$sched_tmp/sc.out"
vm_check "no trace events lost" test "$(fair_trace_overruns)" = 0

# count COND: class 1's dispatches matching jq condition COND.
count() { sched_count ksmbd_sched_dispatch ".class == 1 and ($1)"; }
# first|last COND: the least|greatest ts (ns, mono) of those.
first() { sched_format ksmbd_sched_dispatch ".class == 1 and ($1)" .ts | sort -n | head -n 1; }
last() { sched_format ksmbd_sched_dispatch ".class == 1 and ($1)" .ts | sort -n | tail -n 1; }
for cmd in NEGOTIATE SESSION_SETUP TREE_CONNECT ECHO; do
	n=$(count ".cmd == \"$cmd\"")
	bad=$(count ".cmd == \"$cmd\" and .waited != 0")
	vm_check "$cmd: $n dispatch(es), all waited=0 ($bad waited)" \
		test "$n" -ge 1 -a "$bad" = 0
done
# The window: smbclient's session, its NEGOTIATE to its last control
# request.  (Before it, smbclient starting up takes the CPU from fio and
# the busy client's queue may drain: a READ then takes a free slot at
# once, waited=1 wait_ns=0.)
t0=$(first '.cmd == "NEGOTIATE"')
t1=$(last '.waited == 0')
win=".ts >= ${t0:-0} and .ts <= ${t1:-0} and .cmd == \"READ\""
reads=$(count "$win")
bad=$(count "$win and (.waited != 1 or .wait_ns <= 0)")
# Backlogged: most of them waited.  With 2 vCPUs a READ now and then
# finds a free slot at once (waited=1 wait_ns=0, or waited=0), and more
# often on a loaded host (88.5% waited at load 9 once): this only shows
# the client was busy; the precedence itself is the "went ahead" check.
vm_check "READs of the busy client during smbclient's session: $reads, >= 75% waited (wait_ns>0; $bad not)" \
	test "$reads" -ge 10 -a $(( bad * 4 )) -le "$reads"
waits=$(sched_events ksmbd_sched_dispatch ".class == 1 and $win" |
	jq -rs 'if length > 0 then "\(map(.wait_ns) | add / length / 1e5 | round / 10) ms mean" else "" end')
echo "busy client's READ wait during smbclient's session: $waits; control requests 0 ms"

# A READ enqueued (ts - wait_ns) before one of the session's control
# requests (NEGOTIATE, SESSION_SETUP, TREE_CONNECT, ECHO) and dispatched
# after it.  Any of them counts: the busy client's queue can drain for a
# moment while smbclient starts (2 vCPUs), and a control request that
# arrives then has nothing to overtake.
ahead=$(sched_events ksmbd_sched_dispatch '.class == 1' | jq -s '
	[.[] | select(.waited == 0 and .cmd != "READ") | .ts] as $c |
	[.[] | select(.cmd == "READ")] as $r |
	[$c[] as $t | $r[] | select(.ts > $t and .ts - .wait_ns < $t)] | length')
vm_check "control requests went ahead of $ahead READ(s) queued before them" test "${ahead:-0}" -ge 1
vm_check "busy client still had waiting requests after smbclient (queued $queued_after, clients $clients_after)" \
	test "$queued_after" -gt 0 -o "$clients_after" -ge 1

fair_kill_all
vm_check "busy fio without I/O errors" fair_fio_ok busy
vm_check "data.bin through the busy mount, sha256 equal" \
	test "$(sched_sha "$sched_tmp/a/data.bin")" = "$want_sha"
vm_finish
