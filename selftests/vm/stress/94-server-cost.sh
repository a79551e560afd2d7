#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 600
#
# A client is charged what the server spent on its requests, not what
# their Length fields claim (Documentation/dispatch.rst, "Cost").  On the
# storage model (slowfs: 5 ms a request plus its length at 16 MiB/s, one
# in service at once), with the prefix classifier at a budget of 2:
#
#   (a) server-side copies: a host (127.0.0.2, class 1) runs 24
#       copy_file_range(2) loops on its cifs mount, 1 MiB each, which the
#       cifs client sends as FSCTL_SRV_COPYCHUNK_WRITE (MS-SMB2 2.2.31.1):
#       an IOCTL with no Length, which reads 1 MiB and writes it (charged
#       2 MiB when it completes, and up front its client's learnt
#       average once it has one);
#   (b) small synchronous writes: the same host writes 4 KiB with an
#       fsync after each (fio, 8 jobs): WRITEs and FLUSHes that move
#       less than 64 KiB each, charged by the time they held their slot
#       at the storage's rate (learnt from the other host's READs);
#
# beside a host (127.0.0.3, class 2) reading 1 MiB at queue depth 4.
# In each:
#   - the reader's throughput beside the other host, attached, is at
#     least 95% of what it is with nothing attached (same boot; one
#     sample each, and with the fsync host the storage is the limit
#     either way: make bench's medians give 1.00x);
#   - while both hosts have requests waiting (from WARM_MIB charged
#     after the attach), each class's share of the cost the dispatcher
#     charged (/proc/net/ksmbd_sched "class_cost")
#     is 50% +-5% at weights 1:1 and the copying or writing host's is
#     75% +-5% at weights 3:1;
#   - the copies are byte-exact, fio saw no I/O error, and the
#     dispatcher never bypassed.

set -euo pipefail
# shellcheck source=../lib.sh
source "${VM_DIR:?run me inside the VM: selftests/vm/run $0}/lib.sh"
# shellcheck source=../testlib-sched.sh
source "$VM_DIR/testlib-sched.sh"
# shellcheck source=../testlib-fair.sh
source "$VM_DIR/testlib-fair.sh"
# shellcheck source=../testlib-slowfs.sh
source "$VM_DIR/testlib-slowfs.sh"

# make deps installs FUSE and the stock kernel has it: no skip.
if ! why=$(slowfs_available); then
	vm_fail "$why"
	vm_finish
fi
# stop_load: the copy loops finish their copy and exit; fio is stopped.
stop_load() {
	if [[ -n $SLOWFS_COPY_PID ]]; then
		vm_check "the copy loops exited cleanly" slowfs_copies_stop
	fi
	slowfs_syncwrites_stop
}
trap 'stop_load; fair_cleanup; slowfs_share_stop' EXIT

BUDGET=${COST_BUDGET:-2}	# the dispatch budget, slots
COPIES=24
TOL=50			# per mille
WINDOW_MIB=${COST_WINDOW_MIB:-128}		# cost charged in a share window, MiB
WARM_MIB=32		# charged after the attach, before the window
A=$sched_tmp/a B=$sched_tmp/b

slowfs_share_start --service-ms 5 --jitter-pct 0 --parallel 1 \
	--bw-mibps 16 || { vm_fail "slowfs share started"; vm_finish; }
head -c 16M /dev/urandom >"$SLOWFS_BACKING/data.bin"
slowfs_mount 127.0.0.2 "$A"
slowfs_mount 127.0.0.3 "$B"
echo "guest load before: $(cut -d' ' -f1-3 /proc/loadavg)"

# attach W1 W2: the prefix classifier of budget BUDGET, 127.0.0.2 in
# class 1 of weight W1, 127.0.0.3 in class 2 of weight W2; then a
# replace, so that a connection that sent a request between the load and
# the prefixes is classified again, with the prefixes.
attach() {
	fair_weighted "$BUDGET" "$1" "$2"
	smb-classify replace "$(fair_obj "$BUDGET")" >/dev/null
}

# class_cost ID: bytes class ID's finished requests were charged.
class_cost() {
	awk -v id="$1" '$1 == "class_cost:" && $2 == id { print $3; f = 1 }
		END { if (!f) print 0 }' /proc/net/ksmbd_sched
}

copies_start() { slowfs_copies_start "$A" "$COPIES" "$sched_tmp/stop"; }
writes_start() { slowfs_syncwrites_start "$A" "$sched_tmp/sync.fio"; }

# reader NAME: B reads 1 MiB at depth 4 for 2 + 8 s; prints KiB/s.
reader() { fair_fio_measure bw "$1" "$B/data.bin" 8 4 1m 2; }

# charged_since BEFORE1 BEFORE2 BYTES: classes 1 and 2 were charged BYTES or
# more since they were charged BEFORE1 and BEFORE2.
charged_since() { (( $(class_cost 1) + $(class_cost 2) - $1 - $2 >= $3 )); }

# share DESC W1 W2 WANT: attached at weights W1:W2, with the load and a
# backlogged reader, class 1's share of the cost charged while both wait,
# WANT per mille.
share() {
	local desc=$1 want=$4 c1 c2 d1 d2 n=0 short=0 deadline
	attach "$2" "$3"
	fair_fio_json share "$B/data.bin" 600 4 1m
	if ! vm_poll 60 fair_at_least clients 2; then
		vm_fail "$desc: never both hosts waiting ($(sched_proc_show clients queued inflight))"
		return
	fi
	# The window starts once WARM_MIB were charged: the new dispatcher
	# has learnt its clients' hold times and costs by then.
	c1=$(class_cost 1) c2=$(class_cost 2)
	vm_poll 60 charged_since "$c1" "$c2" $(( WARM_MIB << 20 )) ||
		echo "$desc: $WARM_MIB MiB not charged in 60 s"
	c1=$(class_cost 1) c2=$(class_cost 2)
	deadline=$(( ${EPOCHREALTIME/./} + 120 * 1000000 ))
	while (( $(class_cost 1) + $(class_cost 2) - c1 - c2 < WINDOW_MIB << 20 )); do
		if (( ${EPOCHREALTIME/./} > deadline )); then
			vm_fail "$desc: $WINDOW_MIB MiB not charged in 120 s"
			break
		fi
		(( $(sched_proc clients) >= 2 )) || short=$(( short + 1 ))
		n=$(( n + 1 ))
		sleep 0.2
	done
	d1=$(( $(class_cost 1) - c1 )) d2=$(( $(class_cost 2) - c2 ))
	kill "$FAIR_LAST_PID" 2>/dev/null || true
	fair_wait "$FAIR_LAST_PID" || true
	echo "$desc: charged class 1 $d1, class 2 $d2 bytes; both waiting in $(( n - short )) of $n samples; $(sched_proc_show stuck_total stall_admits rate_bytes_per_us held_avg_ns parked bypass); guest load $(cut -d' ' -f1 /proc/loadavg)"
	sed 's/^/  /' /proc/net/ksmbd_sched_clients
	vm_check "$desc: both hosts had requests waiting in 90% of the samples ($(( n - short )) of $n)" \
		test $(( short * 10 )) -le "$n"
	(( d1 + d2 > 0 )) &&
		fair_share_ok "$desc: class 1's share of the cost charged" \
			"$(fair_permille "$d1" $(( d1 + d2 )))" "$want" "$TOL"
	vm_check "$desc: never bypassed" test "$(sched_proc bypass)" = 0
	smb-classify unload >/dev/null
}

# scenario NAME START: the reader with nothing attached and attached
# beside the load START starts, then the shares at 1:1 and 3:1.
scenario() {
	local name=$1 flat att
	smb-classify unload >/dev/null 2>&1 || true
	"$2"
	flat=$(reader "$name-flat")
	attach 1 1
	att=$(reader "$name-att")
	smb-classify unload >/dev/null
	echo "$name: the 1 MiB reader beside it: nothing attached $flat KiB/s, attached $att KiB/s"
	# One 8 s sample each: where the storage is the limit either way
	# (WRITE + fsync), the two are equal within a few percent.
	vm_check "$name: the reader attached ($att KiB/s) >= 95% of nothing attached ($flat KiB/s)" \
		test $(( att * 100 )) -ge $(( flat * 95 ))
	share "$name, weights 1:1" 1 1 500
	share "$name, weights 3:1" 3 1 750
	stop_load
}

scenario "server-side copies" copies_start
vm_check "every copy equals its source" slowfs_copies_exact "$COPIES"
ncopies=$(find "$SLOWFS_BACKING" -name 'copy*.bin' | wc -l)
vm_check "copies were made ($ncopies files)" test "$ncopies" = "$COPIES"
scenario "4 KiB WRITE + fsync" writes_start
vm_check "fio's writers saw no I/O error" grep -q 'err= 0' "$sched_tmp/sync.fio"
vm_finish
