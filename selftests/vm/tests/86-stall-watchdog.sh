#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 240
#
# Stall guard and watchdog (Dispatch v2, point 4): slots held by
# requests that block in the server's own work, on something the
# dispatcher does not know.  A local process holds the inode lock of
# locked.bin in the share (smb2raw.py inode-hold: a write(2) from a
# userfaultfd page that is never filled faults inside
# shmem_file_write_iter, which holds i_rwsem).  A dispatcher of budget 2;
# a raw client A (127.0.0.2, class 1) pipelines 200 WRITEs of 4 KiB to
# locked.bin: every one blocks in vfs_write() on the lock, keeping its
# slot.  Asserted:
#   - stall guard: slots are admitted above the budget (stall_admits
#     grows, inflight > max_inflight) and a client B (127.0.0.3, class 2)
#     gets 20 READs of 64 KiB done, byte-exact, while no WRITE of A has
#     completed;
#   - watchdog: once the oldest request and its client (no turn in the
#     round: A progresses only through stall admits) have waited
#     watchdog_ms, the dispatcher is bypassed: bypass 1, bypass_wait_ns
#     >= watchdog_ms, one ksmbd_sched_bypass event (reason watchdog),
#     one kernel log line;
#     every waiting request was handed to its worker (queued 0), and B's
#     READs now run at once, without a slot (waited=0);
#   - it does not re-arm by itself: after the lock is released and every
#     WRITE has completed (byte-exact file, no error), still bypass 1;
#     a replace re-arms it (bypass 0, READs take slots again);
#   - inflight, queued, clients, payloads are back to exactly 0.
# The lock is held about 40 s, under the hung-task timeout (120 s).

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

fair_two_classes 2
budget=$(sched_proc max_inflight)
wd_ms=$(sched_proc watchdog_ms)
s0=$(sched_proc stall_admits)
# slots_held: every slot taken, requests waiting; bypassed: the watchdog fired.
slots_held() { (( $(sched_proc inflight) >= budget && $(sched_proc queued) > 0 )); }
bypassed() { [[ $(sched_proc bypass) == 1 ]]; }
seq0=$("$VM_DIR/kmsg-since" -1 | sed -n 's/^seq //p')
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

# ---- the stall guard ------------------------------------------------------
vm_check "all $budget slots held by A's blocked WRITEs, more waiting" \
	vm_poll 60 slots_held
rc=0
read_raw --host 127.0.0.3 pipe other.bin --length 65536 --depth 2 --count 20 \
	>"$tmp/b.out" 2>&1 || rc=$?
cat "$tmp/b.out"
admits=$(( $(sched_proc stall_admits) - s0 ))
inflight=$(sched_proc inflight)
vm_check "B: 20 READs byte-exact while every slot was held (exit $rc)" test "$rc" = 0
vm_check "no WRITE of A has completed yet (progress $(cat "$tmp/a.progress" 2>/dev/null || echo none))" \
	test "$(cat "$tmp/a.progress" 2>/dev/null || echo 0)" = 0
vm_check "the stall guard admitted above the budget: stall_admits +$admits (>= 20), inflight $inflight > $budget" \
	test "$admits" -ge 20 -a "$inflight" -gt "$budget"

# ---- the watchdog ---------------------------------------------------------
vm_check "the watchdog bypassed the dispatcher" \
	vm_poll 60 bypassed
bw=$(sched_proc bypass_wait_ns)
vm_check "bypass_wait_ns $bw >= watchdog_ms $wd_ms" test "$bw" -ge $((wd_ms * 1000000))
vm_check "every waiting request handed to its worker: queued 0" test "$(sched_proc queued)" = 0
vm_check "no WRITE of A completed before the bypass" \
	test "$(cat "$tmp/a.progress" 2>/dev/null || echo 0)" = 0
sched_trace_sync
n=$(sched_count ksmbd_sched_bypass)
vm_check "one ksmbd_sched_bypass event ($n), reason watchdog" \
	test "$n" = 1 -a "$(sched_count ksmbd_sched_bypass '.reason == "watchdog"')" = 1
n=$("$VM_DIR/kmsg-since" "$seq0" | grep -c "$SCHED_WATCHDOG_LOG" || true)
vm_check "one kernel log line '$SCHED_WATCHDOG_LOG ...' ($n)" test "$n" = 1
sched_trace_clear
rc=0
read_raw --host 127.0.0.3 pipe other.bin --length 65536 --depth 2 --count 20 \
	>"$tmp/b2.out" 2>&1 || rc=$?
sched_trace_sync
vm_check "bypassed: B's 20 READs byte-exact (exit $rc)" test "$rc" = 0
n=$(sched_count ksmbd_sched_dispatch '.class == 2 and .cmd == "READ" and .bytes == 65536 and (.waited == 0 or .waited == false)')
vm_check "bypassed: B's READs ran without a slot ($n of 20 waited=0)" test "$n" = 20

# ---- release; no re-arm by itself; replace re-arms ------------------------
release
rc=0
wait "$a" || rc=$?
cat "$tmp/a.out" "$tmp/hold.out"
vm_check "A: all $WRITES WRITEs completed once the lock was released (exit $rc)" test "$rc" = 0
vm_check "locked.bin is byte-exact" \
	test "$(sched_sha "$SMB_SHARE_DIR/locked.bin")" = "$(sched_sha "$tmp/src.bin")"
vm_check "back to 0: inflight, queued, clients, payloads" vm_poll 30 fair_idle
vm_check "does not re-arm by itself: still bypass 1 with nothing waiting" \
	test "$(sched_proc bypass)" = 1
smb-classify replace "$(fair_obj 2)" >/dev/null
vm_check "replace re-arms it: bypass 0" test "$(sched_proc bypass)" = 0
sched_trace_clear
rc=0
read_raw --host 127.0.0.3 pipe other.bin --length 65536 --depth 4 --count 20 \
	>"$tmp/b3.out" 2>&1 || rc=$?
sched_trace_sync
n=$(sched_count ksmbd_sched_dispatch '.class == 2 and .cmd == "READ" and .bytes == 65536 and (.waited == 1 or .waited == true)')
vm_check "after replace: B's READs byte-exact (exit $rc) and take slots again ($n of 20)" \
	test "$rc" = 0 -a "$n" = 20
vm_check "still no second bypass" test "$(sched_count ksmbd_sched_bypass)" = 0
vm_check "back to 0 at the end" vm_poll 30 fair_idle

vm_finish
