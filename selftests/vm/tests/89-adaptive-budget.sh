#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 480
#
# The default budget adapts to the storage
# (Documentation/dispatch.rst "The budget").  With max_inflight 0 the
# dispatcher keeps about as many requests in flight as the storage runs
# at once plus a few (TCP Vegas's rule on slot times), so that a sparse
# client's request waits behind a few requests inside the storage, not
# behind the whole budget.  The storage model (slowfs) counts the time
# its requests wait in its own queue.  One reader (127.0.0.3, class 1,
# two fio of 64 KiB at depth 32 on a cifs mount, no SPLICE verdicts)
# keeps 64 READs outstanding, more than any budget here.  Asserted:
#   (a) fixed budget 32 on storage of 2 in service, 10 ms +- 50% a
#       request: READs wait 60 ms or more on average in the storage's
#       queue (about 30 requests ahead of each);
#   (b) the default budget on the same storage: "budget: adaptive", it
#       falls to 10 or less within 60 s, stays at 12 or less for 10 s
#       of samples, and the storage's mean queue wait is at most 0.4x
#       that of (a);
#   (c) the storage becomes slower and wider (200 ms a request, 64 in
#       service), same attachment, 4 KiB READs: the budget measures the
#       storage again (budget_base_ns >= 150 ms) and grows back to 24 or
#       more within 90 s;
#   both fio error-free; inflight, queued, clients back to 0.

set -euo pipefail
# shellcheck source=../lib.sh
source "${VM_DIR:?run me inside the VM: selftests/vm/run $0}/lib.sh"
# shellcheck source=../testlib-sched.sh
source "$VM_DIR/testlib-sched.sh"
# shellcheck source=../testlib-fair.sh
source "$VM_DIR/testlib-fair.sh"
# shellcheck source=../testlib-slowfs.sh
source "$VM_DIR/testlib-slowfs.sh"

why=$(slowfs_available) || vm_skip_test "$why"
trap 'fair_cleanup; slowfs_share_stop' EXIT

MNT=$sched_tmp/m
WINDOW_S=10

# storage_wait S: the mean wait of a READ in slowfs's queue over the next
# S seconds (a measurement window), ms; and the READs it counts.
storage_wait() {
	local r0 q0 r1 q1
	r0=$(slowfs_stat reads) q0=$(slowfs_stat_file queue_ns)
	sleep "$1"
	r1=$(slowfs_stat reads) q1=$(slowfs_stat_file queue_ns)
	(( r1 > r0 )) || { echo "0 0"; return; }
	echo "$(( (q1 - q0) / (r1 - r0) / 1000000 )) $(( r1 - r0 ))"
}
# budget_at_most N: the budget in force is N or less, now (at least N:
# testlib-fair.sh's fair_at_least max_inflight N).
budget_at_most() { (( $(sched_proc max_inflight) <= $1 )); }
# budget_fell_to N: at most N once the storage is measured.  The first
# busy window after the switch is a probe at the floor (4 here), which
# sets budget_base_ns when it ends; a poll that saw the probe's floor
# would sample the budget while it still falls from the ceiling.
budget_fell_to() { (( $(sched_proc budget_base_ns) > 0 )) && budget_at_most "$1"; }
readers() {
	fair_fio r1 "$MNT/data.bin" 600 32 "$1"
	fair_fio r2 "$MNT/data.bin" 600 32 "$1"
}
stop_readers() {
	fair_kill_all
	vm_check "the readers saw no I/O error ($1)" eval 'fair_fio_ok r1 && fair_fio_ok r2'
}

slowfs_share_start --service-ms 10 --jitter-pct 50 --parallel 2 ||
	{ vm_fail "slowfs share started"; vm_finish; }
head -c 64M /dev/urandom >"$SLOWFS_BACKING/data.bin"
slowfs_mount 127.0.0.3 "$MNT"

# ---- (a) fixed budget 32 --------------------------------------------------
smb-classify load max-inflight 32 >/dev/null
smb-classify prefix add 127.0.0.3/32 1 >/dev/null
slowfs_no_splice 0 1
vm_check "(a) budget fixed at 32" \
	test "$(sched_proc budget)/$(sched_proc max_inflight)" = fixed/32
readers 64k
vm_poll 60 fair_at_least queued 1 || true
read -r fixed_ms fixed_n < <(storage_wait "$WINDOW_S")
echo "(a) fixed 32: $fixed_n READs, mean storage queue wait $fixed_ms ms; $(sched_proc_show max_inflight inflight queued)"
vm_check "(a) fixed budget 32: READs waited >= 60 ms in the storage's queue ($fixed_ms ms, $fixed_n READs)" \
	test "$fixed_ms" -ge 60 -a "$fixed_n" -ge 20

# ---- (b) the default budget adapts ----------------------------------------
c0=$(sched_proc budget_changes)
smb-classify replace max-inflight 0 >/dev/null
vm_check "(b) replace max-inflight 0: budget adaptive, from $(sched_proc budget_max)" \
	test "$(sched_proc budget)" = adaptive
vm_poll 60 budget_fell_to 10
fell=$?
vm_check "(b) the adaptive budget fell to 10 or less ($(sched_proc_show max_inflight budget_base_ns budget_changes))" \
	test "$fell" = 0
samples=()
for _ in $(seq "$WINDOW_S"); do
	sleep 1
	samples+=("$(sched_proc max_inflight)")
done
read -r adapt_ms adapt_n < <(storage_wait "$WINDOW_S")
high=$(printf '%s\n' "${samples[@]}" | sort -n | tail -1)
echo "(b) adaptive: budget ${samples[*]}; $adapt_n READs, mean storage queue wait $adapt_ms ms; $(sched_proc_show budget_min budget_max budget_base_ns budget_changes queued)"
vm_check "(b) the budget stayed at 12 or less (${samples[*]})" test "$high" -le 12
vm_check "(b) storage queue wait $adapt_ms ms <= 0.4 x fixed's $fixed_ms ms ($adapt_n READs)" \
	test $(( adapt_ms * 10 )) -le $(( fixed_ms * 4 )) -a "$adapt_n" -ge 20
vm_check "(b) the budget changed ($(( $(sched_proc budget_changes) - c0 )) times)" \
	test "$(sched_proc budget_changes)" -gt "$c0"
stop_readers b

# ---- (c) slower, wider storage: the budget grows back ---------------------
umount "$MNT"
slowfs_share_start --service-ms 200 --jitter-pct 0 --parallel 64 ||
	{ vm_fail "slowfs share restarted"; vm_finish; }
slowfs_mount 127.0.0.3 "$MNT"
before=$(sched_proc max_inflight)
readers 4k
vm_check "(c) the budget grew from $before to 24 or more ($(sched_proc_show max_inflight budget_base_ns budget_changes queued))" \
	vm_poll 90 fair_at_least max_inflight 24
base=$(sched_proc budget_base_ns)
vm_check "(c) the storage measured again: budget_base_ns $base >= 150 ms" \
	test "$base" -ge 150000000
stop_readers c
vm_check "back to 0: inflight, queued, clients, payloads" vm_poll 30 fair_idle
vm_finish
