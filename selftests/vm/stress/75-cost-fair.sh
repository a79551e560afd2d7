#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fair by cost, not by request count (Dispatch v2, point 1).  Two
# classes with a dispatcher of budget 2: class 1 (127.0.0.2) reads 1 MiB
# at queue depth 4, class 2 (127.0.0.3) reads 4 KiB at depth 32 on each
# of 4 mounts (fio, O_DIRECT, cifs; 4 mounts so that the small reader
# stays backlogged at the server although its clients share the vCPUs).  Counted at the server over the contested
# dispatches (ksmbd_sched_dispatch with waited=1 and clients>=2: both
# classes had requests waiting, so the deficit round robin alone
# decides), until FAIR_BYTES have been dispatched in all:
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
trap fair_cleanup EXIT

BYTES=${FAIR_BYTES:-$(( 64 << 20 ))}
TOL=30			# per mille
RUNTIME=260

head -c 64M /dev/urandom >"$SMB_SHARE_DIR/data.bin"
want_sha=$(sched_sha "$SMB_SHARE_DIR/data.bin")

# contested_bytes PAT: bytes= of the contested READ dispatches matching PAT.
contested_bytes() {
	grep -E "$FAIR_CONTESTED" "$SCHED_TRACE/trace" | grep -- "$1" |
		sed -n 's/.* cmd=READ .* bytes=\([0-9]*\) .*/\1/p' |
		awk '{ s += $1 } END { print s + 0 }'
}
contested_bytes_reached() {
	(( $(contested_bytes ' class=') >= $1 ))
}

run_phase() {
	local desc=$1 want=$2 a b
	fair_trace_dispatch_on
	local i
	fair_mount 127.0.0.2 "$sched_tmp/a"
	fair_fio a "$sched_tmp/a/data.bin" "$RUNTIME" 4 1m
	for i in 1 2 3 4; do
		fair_mount 127.0.0.3 "$sched_tmp/b$i"
		fair_fio "b$i" "$sched_tmp/b$i/data.bin" "$RUNTIME" 32 4k
	done
	if ! vm_poll 60 fair_at_least clients 2; then
		vm_fail "$desc: never 2 clients waiting"
	else
		: >"$SCHED_TRACE/trace"
		echo 1 >"$SCHED_TRACE/tracing_on"
		vm_poll 200 contested_bytes_reached "$BYTES" ||
			echo "$desc: only $(contested_bytes ' class=') contested bytes in 200 s"
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
	fair_kill_all
	for i in a b1 b2 b3 b4; do
		vm_check "$desc: fio $i without I/O errors" fair_fio_ok "$i"
	done
	vm_check "$desc: data.bin through class 1's mount, sha256 equal" \
		test "$(sched_sha "$sched_tmp/a/data.bin")" = "$want_sha"
	umount "$sched_tmp/a" "$sched_tmp/b1" "$sched_tmp/b2" "$sched_tmp/b3" "$sched_tmp/b4"
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
