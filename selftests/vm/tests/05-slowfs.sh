#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The FUSE storage model of the benches (slowfs.c, testlib-slowfs.sh),
# exported by ksmbd as the share "slow", 10 ms per request, no jitter,
# 4 in service at once.  Asserts, through a cifs mount (cache=none):
#   - an 8 MiB file placed in the backing directory reads back
#     byte-exact, and a 3 MiB + 123 file written through the share lands
#     byte-exact in the backing directory;
#   - the service time is visible: 40 QD1 4 KiB O_DIRECT reads each take
#     at least 10 ms (fio's minimum completion latency), and each is
#     exactly one slowfs read (direct_io: no page cache in front);
#   - the parallelism is limited: 100 4 KiB reads at depth 16 never had
#     more than 4 in service (and reached 4), and took at least
#     100 / 4 x 10 ms;
#   - with the reference classifier attached (its default policy splices
#     READs of 64 KiB and more), 1 MiB reads are byte-exact too;
#   - hold: while the hold file exists a read blocks (slowfs counts it
#     held, the reader has not finished); removing the file completes it
#     with the right bytes, and no read is held afterwards.
# Skipped on a kernel without FUSE (the tiny kernel): Debian's has it.
# vm-timeout: 300

set -euo pipefail
# shellcheck source=../lib.sh
source "${VM_DIR:?run me inside the VM: selftests/vm/run $0}/lib.sh"
# shellcheck source=../testlib-sched.sh
source "$VM_DIR/testlib-sched.sh"
# shellcheck source=../testlib-slowfs.sh
source "$VM_DIR/testlib-slowfs.sh"

why=$(slowfs_available) || vm_skip_test "$why"
trap 'slowfs_release; sched_cleanup; slowfs_share_stop' EXIT
M=$sched_tmp/m
SERVICE_MS=10 PARALLEL=4

slowfs_share_start --service-ms "$SERVICE_MS" --jitter-pct 0 --parallel "$PARALLEL" ||
	{ vm_fail "slowfs share started"; vm_finish; }
vm_pass "slowfs mounted at $SLOWFS_MNT and served as //127.0.0.1/$SLOWFS_SHARE"
head -c 8M /dev/urandom >"$SLOWFS_BACKING/data.bin"
slowfs_mount 127.0.0.1 "$M"

# ---- data ---------------------------------------------------------------------
vm_check "8 MiB read through ksmbd and slowfs is byte-exact" \
	test "$(sched_sha "$M/data.bin")" = "$(sched_sha "$SLOWFS_BACKING/data.bin")"
head -c $(( 3 * 1048576 + 123 )) /dev/urandom >"$sched_tmp/w.bin"
w0=$(slowfs_stat writes)
cp "$sched_tmp/w.bin" "$M/w.bin"
vm_check "3 MiB + 123 written through ksmbd lands byte-exact in the backing directory" \
	test "$(sched_sha "$SLOWFS_BACKING/w.bin")" = "$(sched_sha "$sched_tmp/w.bin")"
vm_check "the writes went through the model ($(( $(slowfs_stat writes) - w0 )) slowfs writes)" \
	test "$(slowfs_stat writes)" -gt "$w0"

# fio_json OUT ARGS...: one fio run of 4 KiB random reads of data.bin.
fio_json() {
	local out=$1
	shift
	fio --name=s --filename="$M/data.bin" --rw=randread --bs=4k --direct=1 \
		--invalidate=0 --output-format=json --output="$out" "$@" >/dev/null 2>&1
}

# ---- service time: QD1 --------------------------------------------------------
r0=$(slowfs_stat reads)
fio_json "$sched_tmp/qd1.json" --ioengine=psync --io_size=160k
min_us=$(jq '.jobs[0].read.clat_ns.min / 1000 | floor' "$sched_tmp/qd1.json")
mean_us=$(jq '.jobs[0].read.clat_ns.mean / 1000 | floor' "$sched_tmp/qd1.json")
n=$(jq '.jobs[0].read.total_ios' "$sched_tmp/qd1.json")
vm_check "QD1: $n reads of 4 KiB" test "$n" -eq 40
vm_check "QD1: every read took >= ${SERVICE_MS} ms (min ${min_us} us, mean ${mean_us} us)" \
	test "$min_us" -ge $(( SERVICE_MS * 1000 ))
vm_check "QD1: each SMB READ was one slowfs read ($(( $(slowfs_stat reads) - r0 )) for $n)" \
	test "$(( $(slowfs_stat reads) - r0 ))" -eq "$n"

# ---- parallelism: QD16 ----------------------------------------------------------
t0=${EPOCHREALTIME/./}
fio_json "$sched_tmp/qd16.json" --ioengine=libaio --iodepth=16 --io_size=400k
el_ms=$(( (${EPOCHREALTIME/./} - t0) / 1000 ))
n=$(jq '.jobs[0].read.total_ios' "$sched_tmp/qd16.json")
iops=$(jq '.jobs[0].read.iops | floor' "$sched_tmp/qd16.json")
vm_check "QD16: $n reads, never more than $PARALLEL in service, $PARALLEL reached (in_service_max $(slowfs_stat in_service_max))" \
	test "$(slowfs_stat in_service_max)" -eq "$PARALLEL"
vm_check "QD16: $n reads took >= $(( n * SERVICE_MS / PARALLEL )) ms ($el_ms ms, $iops IOPS)" \
	test "$el_ms" -ge $(( n * SERVICE_MS / PARALLEL ))

# ---- with the classifier attached -------------------------------------------------
umount "$M"
smb-classify load >/dev/null
slowfs_mount 127.0.0.1 "$M"
dd if="$M/data.bin" of="$sched_tmp/copy.bin" bs=1M iflag=direct status=none
vm_check "attached: 1 MiB reads are byte-exact" \
	test "$(sched_sha "$sched_tmp/copy.bin")" = "$(sched_sha "$SLOWFS_BACKING/data.bin")"
smb-classify unload >/dev/null

# ---- hold -----------------------------------------------------------------------------
slowfs_hold
dd if="$M/data.bin" of="$sched_tmp/held.bin" bs=4k count=1 skip=7 iflag=direct status=none &
dd_pid=$!
vm_check "hold: the read is held by slowfs" vm_poll 30 slowfs_held_at_least 1
vm_check "hold: the reader has not finished" kill -0 "$dd_pid"
slowfs_release
dd_rc=0
vm_poll 30 vm_settled "$dd_pid" && wait "$dd_pid" || dd_rc=$?
vm_check "release: the read completes (status $dd_rc)" test "$dd_rc" -eq 0
vm_check "release: with the right bytes" cmp -s "$sched_tmp/held.bin" \
	<(dd if="$SLOWFS_BACKING/data.bin" bs=4k count=1 skip=7 status=none)
vm_check "release: no read held" vm_poll 10 slowfs_none_held
vm_finish
