#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Shares of dispatches between backlogged clients.  The dispatcher has a
# budget of 2 (prefix_inflight2), so with five fio readers of 64 KiB at
# queue depth 16-32 most requests wait in it.  Counted with the
# ksmbd_sched_dispatch tracepoint over the contested dispatches (picked
# while both clients had waiting requests: clients>=2, where the weighted
# round-robin order alone decides who is served), FAIR_N of them, no
# clock involved:
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

# Contested dispatches per window.  Their order is the round-robin's, not
# chance's: a window is off by at most about one round (8 READs of
# 64 KiB at 3:1, quanta of 128 KiB), 1.3% of 600, within the 3%.
N=${FAIR_N:-600}
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

# share_of DESC COND_A COND_B WANT_PERMILLE: share of contested
# dispatches matching jq condition COND_A among those matching COND_A or
# COND_B.
share_of() {
	local desc=$1 a b
	a=$(fair_contested "$2")
	b=$(fair_contested "$3")
	echo "$desc: $a vs $b contested dispatches; lost events $(fair_trace_overruns)"
	vm_check "$desc: no trace events lost" test "$(fair_trace_overruns)" = 0
	vm_check "$desc: >= $N contested dispatches" test $(( a + b )) -ge "$N"
	(( a + b > 0 )) &&
		fair_share_ok "$desc" "$(fair_permille "$a" $(( a + b )))" "$4" "$TOL"
}

# ---- two classes, equal weights ------------------------------------------
fair_load 2
smb-classify prefix add 127.0.0.2/32 1 >/dev/null
smb-classify prefix add 127.0.0.3/32 2 >/dev/null
start_clients 32
if fair_trace_window "$N"; then
	share_of "class 1 (1 conn) share vs class 2 (4 conns)" \
		'.class == 1' '.class == 2' 500
else
	vm_fail "2 classes: no counting window"
fi
stop_clients "2 classes"

# ---- weights 3:1 -----------------------------------------------------------
fair_load 2
smb-classify prefix add 127.0.0.2/32 1 weight 3 >/dev/null
smb-classify prefix add 127.0.0.3/32 2 >/dev/null
start_clients 32
if fair_trace_window "$N"; then
	share_of "class 1 weight 3 (1 conn) share vs class 2 weight 1 (4 conns)" \
		'.class == 1' '.class == 2' 750
else
	vm_fail "weights 3:1: no counting window"
fi
stop_clients "weights 3:1"

# ---- one PER_PEER class: peers are the clients ------------------------------
fair_load 2
smb-classify prefix add 127.0.0.0/8 1 per-peer >/dev/null
start_clients 32
if fair_trace_window "$N"; then
	share_of "per-peer: peer .2 (1 conn) share vs peer .3 (4 conns)" \
		'.class == 1 and .peer == "::ffff:127.0.0.2"' '.class == 1 and .peer == "::ffff:127.0.0.3"' 500
	vm_check "per-peer: every contested dispatch is of peer .2 or .3" \
		test "$(fair_contested true)" -eq \
		$(( $(fair_contested '.class == 1 and .peer == "::ffff:127.0.0.2"') + $(fair_contested '.class == 1 and .peer == "::ffff:127.0.0.3"') ))
else
	vm_fail "per-peer: no counting window"
fi
stop_clients "per-peer"

vm_finish
