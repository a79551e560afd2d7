#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 240
#
# A stuck client is that client's problem.  A local process holds the
# inode lock of locked.bin in the share (smb2raw.py inode-hold: a
# write(2) from a userfaultfd page that is never filled faults inside
# shmem_file_write_iter, which holds i_rwsem).  A dispatcher of budget 2
# with a watchdog of 3 s (progs/prefix_inflight2t: ops timeout_ms 3000);
# a raw client A (127.0.0.2, class 1) pipelines 200 WRITEs of 4 KiB to
# locked.bin: every one blocks in vfs_write() on the lock, holding its
# slot.  Asserted:
#   - the watchdog's bound is the program's: watchdog_ms 3000;
#   - A takes both slots while it is alone, then, once a client B
#     (127.0.0.3, class 2) asks, its slots are stuck: they leave the
#     budget (stuck_total grows) and stay counted against A, which never
#     holds more than the budget (its client line's inflight <= 2,
#     sampled throughout) and takes no slot while its own are stuck;
#   - B gets 20 READs of 64 KiB done, byte-exact, with slots (waited=1
#     in the dispatch tracepoint), while no WRITE of A has completed;
#   - after the watchdog's 3 s have passed many times over (8 s), B's
#     next 20 READs still take slots: the namespace keeps fair dispatch,
#     bypass stays 0, no ksmbd_sched_bypass event, no kernel warning;
#   - once the lock is released, all of A's WRITEs complete, byte-exact;
#     stuck, inflight, queued, clients, payloads are back to exactly 0.

set -euo pipefail
# shellcheck source=../lib.sh
source "${VM_DIR:?run me inside the VM: selftests/vm/run $0}/lib.sh"
# shellcheck source=../testlib-sched.sh
source "$VM_DIR/testlib-sched.sh"
# shellcheck source=../testlib-fair.sh
source "$VM_DIR/testlib-fair.sh"
# shellcheck source=../testlib-read.sh
source "$VM_DIR/testlib-read.sh"
tmp=$sched_tmp
release() { touch "$tmp/stop"; }
trap 'release; fair_cleanup; read_cleanup' EXIT
read_need_impacket
# The slots are held through userfaultfd: Debian's kernel has it; the
# tiny kernels (vm.config, and the KDEBUG one) do not, so the test cannot
# run there.  On the stock kernel its absence fails the test below.
# shellcheck disable=SC2153 # VM_KERNEL is set by the harness
if [[ $VM_KERNEL != stock && ! -e /proc/sys/vm/unprivileged_userfaultfd ]]; then
	vm_skip_test "no userfaultfd in this kernel (CONFIG_USERFAULTFD; VM_KERNEL=$VM_KERNEL)"
fi

WRITES=200
head -c 64K /dev/urandom >"$tmp/src.bin"
truncate -s 64K "$SMB_SHARE_DIR/locked.bin"
head -c 16M /dev/urandom >"$SMB_SHARE_DIR/other.bin"
seq0=$("$VM_DIR/kmsg-since" -1 | sed -n 's/^seq //p')

read_route_src 127.0.0.2
read_route_src 127.0.0.3
smb-classify load "$FAIR_PROGS/prefix_inflight2t.bpf.o" >/dev/null
smb-classify prefix add 127.0.0.2/32 1 >/dev/null
smb-classify prefix add 127.0.0.3/32 2 >/dev/null
budget=$(sched_proc max_inflight)
vm_check "the watchdog's bound is the program's: watchdog_ms $(sched_proc watchdog_ms)" \
	test "$(sched_proc watchdog_ms)" = 3000
st0=$(sched_proc stuck_total)
# a_inflight: A's slots, stuck ones included (its client line).
a_inflight() { sched_client_field 1 inflight; }
# slots_held: A holds the budget's worth of slots, counting those the
# stall guard took out of the budget once nothing came back (200 ms
# after they were taken: a poll may see either), and more of its
# requests wait.
slots_held() { local n; n=$(a_inflight); (( ${n:-0} >= budget && $(sched_proc queued) > 0 )); }
a_max=0
# sample: the most slots A held so far.
sample() { local n; n=$(a_inflight); (( ${n:-0} > a_max )) && a_max=${n:-0}; return 0; }
sched_trace_start

read_raw inode-hold "$SMB_SHARE_DIR/locked.bin" --ready-file "$tmp/held" \
	--stop-file "$tmp/stop" >"$tmp/hold.out" 2>&1 &
hold=$!
READ_PIDS+=("$hold")
if ! vm_poll 30 test -s "$tmp/held"; then
	vm_fail "the inode lock was never held: $(cat "$tmp/hold.out")"
	vm_finish
fi
read_raw --host 127.0.0.2 pipe locked.bin --write --source "$tmp/src.bin" \
	--size 65536 --length 4096 --depth 0 --credits 1024 --count "$WRITES" \
	--progress "$tmp/a.progress" >"$tmp/a.out" 2>&1 &
a=$!
READ_PIDS+=("$a")

vm_check "all $budget slots held by A's blocked WRITEs, more waiting" \
	vm_poll 60 slots_held
sample
# b_reads FILE: B's 20 READs of 64 KiB at depth 2, byte-exact; A sampled.
b_reads() {
	local rc=0 pid
	read_raw --host 127.0.0.3 pipe other.bin --length 65536 --depth 2 \
		--count 20 >"$1" 2>&1 &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		sample
		sleep 0.2
	done
	wait "$pid" || rc=$?
	cat "$1"
	return "$rc"
}
sched_trace_clear
rc=0
b_reads "$tmp/b.out" || rc=$?
sched_trace_sync
n=$(sched_count ksmbd_sched_dispatch '.class == 2 and .cmd == "READ" and .bytes == 65536 and (.waited == 1 or .waited == true)')
vm_check "B: 20 READs byte-exact while A's WRITEs block (exit $rc), with slots ($n of 20)" \
	test "$rc" = 0 -a "$n" = 20
vm_check "no WRITE of A has completed yet (progress $(cat "$tmp/a.progress" 2>/dev/null || echo none))" \
	test "$(cat "$tmp/a.progress" 2>/dev/null || echo 0)" = 0
st=$(( $(sched_proc stuck_total) - st0 ))
vm_check "A's slots left the budget: stuck_total +$st, stuck $(sched_proc stuck)" \
	test "$st" -ge 1 -a "$(sched_proc stuck)" -ge 1

# Past the watchdog's bound, many times over.
t_end=$((SECONDS + 8))
while (( SECONDS < t_end )); do
	sample
	sleep 0.5
done
sched_trace_clear
rc=0
b_reads "$tmp/b2.out" || rc=$?
sched_trace_sync
n=$(sched_count ksmbd_sched_dispatch '.class == 2 and .cmd == "READ" and .bytes == 65536 and (.waited == 1 or .waited == true)')
vm_check "after 8 s: B's READs byte-exact (exit $rc) and still take slots ($n of 20)" \
	test "$rc" = 0 -a "$n" = 20
vm_check "never bypassed: bypass 0, no bypass event" \
	test "$(sched_proc bypass)" = 0 -a "$(sched_count ksmbd_sched_bypass)" = 0
vm_check "no WRITE of A completed meanwhile" \
	test "$(cat "$tmp/a.progress" 2>/dev/null || echo 0)" = 0
vm_check "A never held more than the budget ($a_max slots, budget $budget)" \
	test "$a_max" -le "$budget" -a "$a_max" -ge 1

release
rc=0
wait "$a" || rc=$?
cat "$tmp/a.out" "$tmp/hold.out"
vm_check "A: all $WRITES WRITEs completed once the lock was released (exit $rc)" test "$rc" = 0
vm_check "locked.bin is byte-exact" \
	test "$(sched_sha "$SMB_SHARE_DIR/locked.bin")" = "$(sched_sha "$tmp/src.bin")"
vm_check "back to 0: inflight, queued, clients, payloads, stuck" \
	vm_poll 30 vm_sched_zero inflight queued clients payloads payload_pages stuck
n=$("$VM_DIR/kmsg-since" "$seq0" | grep -c "$SCHED_WATCHDOG_LOG" || true)
vm_check "no watchdog line in the kernel log ($n)" test "$n" = 0

vm_finish
