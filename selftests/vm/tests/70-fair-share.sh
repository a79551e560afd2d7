#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Shares of dispatches between backlogged clients.  The dispatcher has a
# budget of 2 (prefix_inflight2), so with five fio readers of 64 KiB at
# queue depth 16-32 nearly every request waits in it and its weighted
# round-robin order alone decides who is served.  Counted over a window
# that starts when both clients have waiting requests and ends after
# FAIR_N dispatches, no clock involved:
#   two classes, 1 connection vs 4:         each 50% +-3%
#   the same with weights 3:1:               75% / 25% +-3%
#   one PER_PEER class, peer .2 (1 conn) vs
#   peer .3 (4 conns), by tracepoint:        each 50% +-3%
# Reads after each phase are checked against the server's sha256.
# vm-timeout: 300

set -euo pipefail
# shellcheck source=../lib.sh
source "${VM_DIR:?run me inside the VM: selftests/vm/run $0}/lib.sh"
# shellcheck source=../testlib-sched.sh
source "$VM_DIR/testlib-sched.sh"
# shellcheck source=../testlib-fair.sh
source "$VM_DIR/testlib-fair.sh"
trap fair_cleanup EXIT

N=${FAIR_N:-2000}	# dispatches per window
TOL=30			# per mille
RUNTIME=120		# fio's bound; stopped once the window is counted

head -c 32M /dev/urandom >"$SMB_SHARE_DIR/data.bin"
want_sha=$(sched_sha "$SMB_SHARE_DIR/data.bin")

# start_clients DEPTH_A: one mount from 127.0.0.2 (fio at DEPTH_A), four
# from 127.0.0.3 (fio at 16), all reading data.bin.
start_clients() {
	local i
	fair_mount 127.0.0.2 "$sched_tmp/a"
	for i in 1 2 3 4; do
		fair_mount 127.0.0.3 "$sched_tmp/b$i"
	done
	fair_fio a "$sched_tmp/a/data.bin" "$RUNTIME" "$1"
	for i in 1 2 3 4; do
		fair_fio "b$i" "$sched_tmp/b$i/data.bin" "$RUNTIME" 16
	done
}

# stop_clients DESC: stop fio, check it saw no error, check data, unmount.
stop_clients() {
	local desc=$1 f i
	fair_kill_all
	for f in a b1 b2 b3 b4; do
		vm_check "$desc: fio $f without I/O errors" fair_fio_ok "$f"
	done
	vm_check "$desc: data.bin read through the class-1 mount, sha256 equal" \
		test "$(sched_sha "$sched_tmp/a/data.bin")" = "$want_sha"
	umount "$sched_tmp/a"
	for i in 1 2 3 4; do umount "$sched_tmp/b$i"; done
	smb-classify unload >/dev/null
}

# ---- two classes, equal weights ------------------------------------------
fair_load 2
smb-classify prefix add 127.0.0.2/32 1 >/dev/null
smb-classify prefix add 127.0.0.3/32 2 >/dev/null
start_clients 16
if fair_window 2 "$N" 1 2; then
	d1=${FAIR_DELTA[1]} d2=${FAIR_DELTA[2]}
	echo "2 classes: class 1 (1 conn) $d1, class 2 (4 conns) $d2; clients<2 in $FAIR_SHORT of $FAIR_SAMPLES samples"
	fair_share_ok "class 1 (1 conn) share vs class 2 (4 conns)" \
		"$(fair_permille "$d1" $(( d1 + d2 )))" 500 "$TOL"
	vm_check "queued requests in the window (the dispatcher was the bottleneck)" \
		fair_at_least queued 2
else
	vm_fail "2 classes: no counting window"
fi
stop_clients "2 classes"

# ---- weights 3:1 -----------------------------------------------------------
fair_load 2
smb-classify prefix add 127.0.0.2/32 1 weight 3 >/dev/null
smb-classify prefix add 127.0.0.3/32 2 >/dev/null
start_clients 32
if fair_window 2 "$N" 1 2; then
	d1=${FAIR_DELTA[1]} d2=${FAIR_DELTA[2]}
	echo "weights 3:1: class 1 (1 conn, weight 3) $d1, class 2 (4 conns) $d2; clients<2 in $FAIR_SHORT of $FAIR_SAMPLES samples"
	fair_share_ok "class 1 weight 3 (1 conn) share vs class 2 weight 1 (4 conns)" \
		"$(fair_permille "$d1" $(( d1 + d2 )))" 750 "$TOL"
else
	vm_fail "weights 3:1: no counting window"
fi
stop_clients "weights 3:1"

# ---- one PER_PEER class: peers are the clients ------------------------------
fair_load 2
smb-classify prefix add 127.0.0.0/8 1 per-peer >/dev/null
fair_trace_dispatch_on
start_clients 16
# Trace only while both peers have waiting requests.
if vm_poll 60 fair_at_least clients 2; then
	echo 1 >"$SCHED_TRACE/tracing_on"
	base=$(fair_class_field 1 dispatched)
	vm_poll 120 fair_sum_reached $(( base + N )) 1 || true
	echo 0 >"$SCHED_TRACE/tracing_on"
	clients_end=$(sched_proc clients)
	cat "$SCHED_TRACE/trace" >"$TEST_RESULTS/per-peer.trace" 2>/dev/null ||
		cat "$SCHED_TRACE/trace" >"$sched_tmp/per-peer.trace"
	tr=$TEST_RESULTS/per-peer.trace
	[[ -s $tr ]] || tr=$sched_tmp/per-peer.trace
	p2=$(grep -c 'ksmbd_sched_dispatch:.* client=1/::ffff:127\.0\.0\.2 .*waited=1' "$tr" || true)
	p3=$(grep -c 'ksmbd_sched_dispatch:.* client=1/::ffff:127\.0\.0\.3 .*waited=1' "$tr" || true)
	other=$(grep 'ksmbd_sched_dispatch:.*waited=1' "$tr" |
		grep -vc 'client=1/::ffff:127\.0\.0\.[23] ' || true)
	echo "per-peer: peer .2 (1 conn) $p2, peer .3 (4 conns) $p3, other $other; lost events $(fair_trace_overruns)"
	vm_check "per-peer: both peers waiting at the end of the window" test "$clients_end" -ge 2
	vm_check "per-peer: no trace events lost" test "$(fair_trace_overruns)" = 0
	vm_check "per-peer: >= $N traced dispatches" test $(( p2 + p3 )) -ge "$N"
	vm_check "per-peer: no dispatch of another client" test "$other" = 0
	if (( p2 + p3 > 0 )); then
		fair_share_ok "per-peer: peer .2 (1 conn) share vs peer .3 (4 conns)" \
			"$(fair_permille "$p2" $(( p2 + p3 )))" 500 "$TOL"
	fi
else
	vm_fail "per-peer: never 2 clients waiting"
fi
stop_clients "per-peer"

vm_finish
