#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Control requests go ahead of their client's data.  One busy client
# (a cifs mount from 127.0.0.2, fio 64 KiB reads at queue depth 32, class
# 1) keeps ~30 requests waiting in a dispatcher of budget 2.  A new
# smbclient session from the same address (so the same client queue)
# runs echo + ls.  With the dispatch tracepoint (trace_clock mono, the
# clock of wait_ns):
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
fair_trace_dispatch_on
echo mono >"$SCHED_TRACE/trace_clock"

fair_mount 127.0.0.2 "$sched_tmp/a"
fair_fio busy "$sched_tmp/a/data.bin" 120 32
if ! vm_poll 60 fair_at_least queued 8; then
	vm_fail "the busy client never had 8 requests waiting"
	vm_finish
fi

echo 1 >"$SCHED_TRACE/tracing_on"
sc_rc=0
sched_smbclient 127.0.0.2 "echo 1 ping; ls" >"$sched_tmp/sc.out" 2>&1 || sc_rc=$?
queued_after=$(sched_proc queued)
clients_after=$(sched_proc clients)
echo 0 >"$SCHED_TRACE/tracing_on"
cat "$SCHED_TRACE/trace" >"$TEST_RESULTS/control.trace"

vm_check "smbclient echo + ls (status $sc_rc)" test "$sc_rc" = 0
vm_check "smbclient listed data.bin" grep -q 'data.bin' "$sched_tmp/sc.out"
vm_check "no trace events lost" test "$(fair_trace_overruns)" = 0

# TS CMD WAITED WAIT_NS of class 1's dispatches, TS in ns (trace_clock mono).
awk '{
	for (i = 1; i <= NF; i++) if ($i == "ksmbd_sched_dispatch:") break
	if (i > NF) next
	ts = $(i - 1); sub(/:$/, "", ts)
	cls = cmd = waited = wns = ""
	for (j = i + 1; j <= NF; j++) {
		split($j, kv, "=")
		if (kv[1] == "class") cls = kv[2]
		else if (kv[1] == "cmd") cmd = kv[2]
		else if (kv[1] == "waited") waited = kv[2]
		else if (kv[1] == "wait_ns") wns = kv[2]
	}
	if (cls != 1) next
	split(ts, t, ".")
	printf "%d%06d000 %s %s %s\n", t[1], t[2], cmd, waited, wns
}' "$TEST_RESULTS/control.trace" >"$sched_tmp/ev"

count() { awk "$1" "$sched_tmp/ev" | wc -l; }
for cmd in NEGOTIATE SESSION_SETUP TREE_CONNECT ECHO; do
	n=$(count "\$2 == \"$cmd\"")
	bad=$(count "\$2 == \"$cmd\" && \$3 != 0")
	vm_check "$cmd: $n dispatch(es), all waited=0 ($bad waited)" \
		test "$n" -ge 1 -a "$bad" = 0
done
# The window: smbclient's session, its NEGOTIATE to its last control
# request.  (Before it, smbclient starting up takes the CPU from fio and
# the busy client's queue may drain: a READ then takes a free slot at
# once, waited=1 wait_ns=0.)
t0=$(awk '$2 == "NEGOTIATE" { print $1; exit }' "$sched_tmp/ev")
t1=$(awk '$3 == 0 { t = $1 } END { print t }' "$sched_tmp/ev")
win="\$1 >= ${t0:-0} && \$1 <= ${t1:-0} && \$2 == \"READ\""
reads=$(count "$win")
bad=$(count "$win && (\$3 != 1 || \$4 <= 0)")
# Backlogged: nearly all of them waited (with 2 vCPUs a READ now and then
# finds a free slot at once, waited=1 wait_ns=0 or waited=0).
vm_check "READs of the busy client during smbclient's session: $reads, >= 90% waited (wait_ns>0; $bad not)" \
	test "$reads" -ge 10 -a $(( bad * 10 )) -le "$reads"
waits=$(awk "$win"' { s += $4; n++ } END { if (n) printf "%.1f ms mean", s / n / 1e6 }' "$sched_tmp/ev")
echo "busy client's READ wait during smbclient's session: $waits; control requests 0 ms"

# A READ enqueued (ts - wait_ns) before one of the session's control
# requests (NEGOTIATE, SESSION_SETUP, TREE_CONNECT, ECHO) and dispatched
# after it.  Any of the five counts: the busy client's queue can drain
# for a moment while smbclient starts (2 vCPUs), and a control request
# that arrives then has nothing to overtake.
ahead=$(awk '$3 == 0 && $2 != "READ" { c[++n] = $1; next }
	$2 == "READ" { r[++m] = $1; w[m] = $4 }
	END { for (i = 1; i <= n; i++) for (j = 1; j <= m; j++)
		if (r[j] > c[i] && r[j] - w[j] < c[i]) k++
	      print k + 0 }' "$sched_tmp/ev")
vm_check "control requests went ahead of $ahead READ(s) queued before them" test "$ahead" -ge 1
vm_check "busy client still had waiting requests after smbclient (queued $queued_after, clients $clients_after)" \
	test "$queued_after" -gt 0 -o "$clients_after" -ge 1

fair_kill_all
vm_check "busy fio without I/O errors" fair_fio_ok busy
vm_check "data.bin through the busy mount, sha256 equal" \
	test "$(sched_sha "$sched_tmp/a/data.bin")" = "$want_sha"
vm_finish
