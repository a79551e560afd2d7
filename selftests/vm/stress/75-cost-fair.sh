#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fair by cost, not by request count (Dispatch v2, point 1).  Two
# classes with a dispatcher of budget 2: class 1 (127.0.0.2) reads 1 MiB
# at queue depth 4, class 2 (127.0.0.3) reads 4 KiB at depth 32 (two
# connections of depth 16).  The clients are raw SMB2 clients
# (smb2raw.py pipe) that keep their READs outstanding, each reply checked
# against the file: a cifs mount driven by fio on the same 2 vCPUs did
# not keep the small reader backlogged at the server.  Counted at the
# server over the contested dispatches (ksmbd_sched_dispatch with
# waited=1 and clients>=2: both classes had requests waiting, so the
# deficit round robin alone decides), until FAIR_BYTES have been
# dispatched in all:
#   equal weights:             class 1's share of the bytes 50% +-3%
#   class 2 weight 3:          class 2's share of the bytes 75% +-3%
# (Round robin by request gave class 1 over 99% of the bytes.)  The
# charged cost= of each request is its READ length (the 4 KiB floor
# included) and every request's data is intact.
# vm-timeout: 600

set -euo pipefail
# shellcheck source=../lib.sh
source "${VM_DIR:?run me inside the VM: selftests/vm/run $0}/lib.sh"
# shellcheck source=../testlib-sched.sh
source "$VM_DIR/testlib-sched.sh"
# shellcheck source=../testlib-fair.sh
source "$VM_DIR/testlib-fair.sh"
# shellcheck source=../testlib-read.sh
source "$VM_DIR/testlib-read.sh"
trap 'touch "$sched_tmp/stop"; fair_cleanup; read_cleanup' EXIT
read_need_impacket

BYTES=${FAIR_BYTES:-$(( 64 << 20 ))}
TOL=30			# per mille

head -c 64M /dev/urandom >"$SMB_SHARE_DIR/data.bin"
read_route_src 127.0.0.2
read_route_src 127.0.0.3

# contested_bytes PAT: bytes= of the contested READ dispatches matching PAT.
contested_bytes() {
	grep -E "$FAIR_CONTESTED" "$SCHED_TRACE/trace" | grep -- "$1" |
		sed -n 's/.* cmd=READ .* bytes=\([0-9]*\) .*/\1/p' |
		awk '{ s += $1 } END { print s + 0 }'
}
# served_bytes: bytes dispatched to classes 1 and 2 so far (/proc, cheap).
served_bytes() {
	echo $(( $(fair_class_field 1 bytes) + $(fair_class_field 2 bytes) ))
}
# window_wait DESC: trace until BYTES contested bytes are in the buffer.
# Formatting the trace buffer costs the guest seconds of CPU once it holds
# many events (and starves the clients), so it is read only each time
# another BYTES have been served (the class counters), at most 240 s.
window_wait() {
	local start target deadline c
	start=$(served_bytes)
	target=$((start + BYTES))
	deadline=$(( ${EPOCHREALTIME/./} + 240 * 1000000 ))
	while (( ${EPOCHREALTIME/./} < deadline )); do
		if (( $(served_bytes) >= target )); then
			c=$(contested_bytes ' class=')
			(( c >= BYTES )) && return 0
			target=$((target + BYTES))
		fi
		sleep 1
	done
	echo "$1: only $(contested_bytes ' class=') contested bytes in 240 s"
}

# pipe NAME SRC LENGTH DEPTH: a raw client from SRC keeping DEPTH READs
# of LENGTH outstanding until the phase's stop file exists.
pipe() {
	read_raw --host "$2" pipe data.bin --length "$3" --depth "$4" \
		--credits 2048 --stop-file "$sched_tmp/stop" \
		>"$sched_tmp/$1.out" 2>&1 &
	PIDS+=("$!")
	NAMES+=("$1")
	READ_PIDS+=("$!")
}

run_phase() {
	local desc=$1 want=$2 a b i rc
	PIDS=() NAMES=()
	rm -f "$sched_tmp/stop"
	fair_trace_dispatch_on
	pipe a 127.0.0.2 $((1 << 20)) 4
	pipe b1 127.0.0.3 4096 16
	pipe b2 127.0.0.3 4096 16
	if ! vm_poll 60 fair_at_least clients 2; then
		vm_fail "$desc: never 2 clients waiting"
	else
		: >"$SCHED_TRACE/trace"
		echo 1 >"$SCHED_TRACE/tracing_on"
		window_wait "$desc"
		echo 0 >"$SCHED_TRACE/tracing_on"
		a=$(contested_bytes ' class=1 ')
		b=$(contested_bytes ' class=2 ')
		echo "$desc: class 1 $a bytes ($(fair_contested ' class=1 ') READs), class 2 $b bytes ($(fair_contested ' class=2 ') READs); lost events $(fair_trace_overruns)"
		vm_check "$desc: no trace events lost" test "$(fair_trace_overruns)" = 0
		vm_check "$desc: >= $BYTES contested bytes" test $(( a + b )) -ge "$BYTES"
		vm_check "$desc: cost of a 1 MiB READ is 1048576, of a 4 KiB READ 4096" \
			test "$(grep -cE 'cmd=READ .*bytes=1048576 .* cost=1048576 ' "$SCHED_TRACE/trace")" -gt 0 -a \
			"$(grep -cE 'cmd=READ .*bytes=4096 .* cost=4096 ' "$SCHED_TRACE/trace")" -gt 0
		if (( a + b > 0 )); then
			fair_share_ok "$desc: class ${3}'s share of the bytes" \
				"$(fair_permille "$( (( $3 == 1 )) && echo "$a" || echo "$b")" $(( a + b )))" \
				"$want" "$TOL"
		fi
	fi
	touch "$sched_tmp/stop"
	for i in "${!PIDS[@]}"; do
		rc=0
		wait "${PIDS[$i]}" || rc=$?
		cat "$sched_tmp/${NAMES[$i]}.out"
		vm_check "$desc: client ${NAMES[$i]}: every reply byte-exact (exit $rc)" test "$rc" = 0
	done
	vm_check "$desc: back to 0: inflight, queued, clients, payloads" vm_poll 30 fair_idle
	smb-classify unload >/dev/null
}

fair_load 2
smb-classify prefix add 127.0.0.2/32 1 >/dev/null
smb-classify prefix add 127.0.0.3/32 2 >/dev/null
run_phase "1 MiB QD4 vs 4 KiB QD32, equal weights" 500 1

fair_load 2
smb-classify prefix add 127.0.0.2/32 1 >/dev/null
smb-classify prefix add 127.0.0.3/32 2 weight 3 >/dev/null
run_phase "1 MiB QD4 vs 4 KiB QD32 weight 3" 750 2

vm_finish
