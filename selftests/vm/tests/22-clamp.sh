#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel never trusts a program's words: a class word with its
# reserved bit (30) set, or a PEER6 field above 32 (/128), is cleared to
# its valid bits and clamped, and counted once (class_clamped); a
# verdict with an unknown queue runs on the per-CPU queue and is counted
# (verdict_clamped); reserved verdict bits are ignored.  Requests are
# served and data is intact either way.
# vm-timeout: 180

set -euo pipefail
# shellcheck source=../lib.sh
source "${VM_DIR:?run me inside the VM: selftests/vm/run $0}/lib.sh"
# shellcheck source=../testlib-sched.sh
source "$VM_DIR/testlib-sched.sh"
sched_need_built

holder=
cleanup() {
	[[ -n $holder ]] && { exec 9>&-; wait "$holder" 2>/dev/null || true; }
	sched_cleanup
}
trap cleanup EXIT

head -c 1M /dev/urandom >"$SMB_SHARE_DIR/clamp.bin"
want=$(sched_sha "$SMB_SHARE_DIR/clamp.bin")

# hold_start CLASSWORD VERDICT: a const_class program returning these,
# attached until fd 9 closes.
hold_start() {
	mkfifo "$sched_tmp/fifo"
	"$SCHED_ATTACH_TEST" hold "$1" "$2" <"$sched_tmp/fifo" >"$sched_tmp/hold.out" 2>&1 &
	holder=$!
	exec 9>"$sched_tmp/fifo"
	vm_poll 30 grep -q '^attached' "$sched_tmp/hold.out" ||
		{ cat "$sched_tmp/hold.out"; vm_fail "hold $1 $2: not attached"; vm_finish; }
}

# Class word 0x7f01002a: id 42, weight 1, reserved bit 30 set and PEER6 63
# (above its most, 32): 0x2001002a once clamped.
# Verdict 0x0001fe0f: queue 15 (unknown), every reserved bit but SPLICE.
hold_start 0x7f01002a 0x0001fe0f
sched_trace_start
cc0=$(sched_proc class_clamped)
vc0=$(sched_proc verdict_clamped)

rm -f "$sched_tmp/got"
if sched_smbclient 127.0.0.1 "get clamp.bin $sched_tmp/got" >"$sched_tmp/out" 2>&1 &&
   [[ $(sched_sha "$sched_tmp/got") == "$want" ]]; then
	vm_pass "read with out-of-range words: sha256 equal"
else
	vm_fail "read with out-of-range words"
	cat "$sched_tmp/out"
fi

cc=$(( $(sched_proc class_clamped) - cc0 ))
vc=$(( $(sched_proc verdict_clamped) - vc0 ))
sched_trace_sync
reqs=$(sched_count ksmbd_sched_req)
vm_check "class_clamped counted the connection ($cc)" test "$cc" -eq 1
sched_expect_peer_conns "class word cleared to its valid bits" \
	::ffff:127.0.0.1 0x2001002a hold
vm_check "verdict_clamped counted every request ($vc of $reqs)" \
	test "$vc" -eq "$reqs" -a "$reqs" -gt 0
# Each "none of them" count is paired with the count of events that DO
# have that field, so a changed trace format fails instead of passing at
# zero.
q0=$(sched_count ksmbd_sched_req '.verdict % 16 == 0')
bad=$(sched_count ksmbd_sched_req '.verdict % 16 != 0')
vm_check "every verdict ran as queue 0 ($q0 of $reqs, $bad otherwise)" \
	test "$bad" -eq 0 -a "$q0" -eq "$reqs"
pcpu=$(sched_count ksmbd_sched_dispatch '.queue == "percpu"')
unb=$(sched_count ksmbd_sched_dispatch '.queue != "percpu"')
vm_check "everything dispatched per-CPU ($pcpu), nothing to the unbound queue ($unb)" \
	test "$unb" -eq 0 -a "$pcpu" -gt 0
s0=$(sched_count ksmbd_sched_req '.splice == false')
spl=$(sched_count ksmbd_sched_req '.splice == true')
vm_check "reserved verdict bits do not mean SPLICE ($s0 of $reqs splice=0, $spl splice=1)" \
	test "$spl" -eq 0 -a "$s0" -eq "$reqs"

exec 9>&-
wait "$holder" || true
holder=
vm_check "detached when the holder exits" test "$(sched_proc attached)" = 0

vm_finish
