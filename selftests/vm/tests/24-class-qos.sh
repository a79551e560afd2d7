#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Reservation and limit per class (init_class() of the reference maps,
# "smb-classify class set"), measured by fio on real cifs mounts:
#   - limits, three classes side by side on the tmpfs share: class 1 at
#     200 IOPS (4 KiB READs, one I/O each) measures 200 +-10%; class 2 at
#     20 MiB/s (1 MiB READs) measures 20 MiB/s +-10%; class 3, unlimited,
#     keeps at least half of what it reads alone (it takes the rest), and
#     the limited classes' waits are counted (limited, throttled_ns);
#   - reservation, on the slow share (5 ms a READ, one at a time, so
#     about 200 READs a second in all): class 4 of weight 1 with a
#     reservation of 100 IOPS keeps at least 95 while three backlogged
#     classes of weight 64 compete; its reservation is served ahead of
#     the round (res_served), missed (a burst behind) at most 5% as often.
#     Skips without FUSE (the tiny kernel).
# vm-timeout: 300

set -euo pipefail
# shellcheck source=../lib.sh
source "${VM_DIR:?run me inside the VM: selftests/vm/run $0}/lib.sh"
# shellcheck source=../testlib-sched.sh
source "$VM_DIR/testlib-sched.sh"
# shellcheck source=../testlib-fair.sh
source "$VM_DIR/testlib-fair.sh"
# shellcheck source=../testlib-slowfs.sh
source "$VM_DIR/testlib-slowfs.sh"
trap 'fair_cleanup; slowfs_share_stop' EXIT

RT=12			# fio's measured seconds, after RAMP
RAMP=3

# class_qos ID KEY: a value of class ID's class_qos line of
# /proc/net/ksmbd_sched (empty if it has none).
class_qos() {
	awk -v id="$1" -v k="$2" '$1 == "class_qos:" && $2 == id {
		for (i = 3; i < NF; i += 2) if ($i == k) print $(i + 1) }' /proc/net/ksmbd_sched
}

# within VALUE WANT PERMILLE: |VALUE - WANT| <= WANT * PERMILLE / 1000.
within() { local d=$(( $1 - $2 )); (( (d < 0 ? -d : d) * 1000 <= $2 * $3 )); }

for a in 127.0.0.2 127.0.0.3 127.0.0.4 127.0.0.5; do sched_route_src "$a"; done
head -c 64M /dev/urandom >"$SMB_SHARE_DIR/data.bin"

# ---- limits ------------------------------------------------------------------
fair_load 4
smb-classify prefix add 127.0.0.2/32 1 >/dev/null
smb-classify prefix add 127.0.0.3/32 2 >/dev/null
smb-classify prefix add 127.0.0.4/32 3 >/dev/null
smb-classify class set 1 limit-iops 200 >/dev/null
smb-classify class set 2 limit-bytes 20M >/dev/null
fair_mount 127.0.0.2 "$sched_tmp/l1"
fair_mount 127.0.0.3 "$sched_tmp/l2"
fair_mount 127.0.0.4 "$sched_tmp/l3"

alone=$(fair_fio_measure bw alone "$sched_tmp/l3/data.bin" "$RT" 16 64k "$RAMP")
echo "class 3 alone: $alone KiB/s"
fair_fio_json c1 "$sched_tmp/l1/data.bin" "$RT" 16 4k "$RAMP"
p1=$FAIR_LAST_PID
fair_fio_json c2 "$sched_tmp/l2/data.bin" "$RT" 4 1m "$RAMP"
p2=$FAIR_LAST_PID
c3=$(fair_fio_measure bw c3 "$sched_tmp/l3/data.bin" "$RT" 16 64k "$RAMP")
fair_wait "$p1" || true
fair_wait "$p2" || true
c1=$(fair_fio_iops c1)
c2=$(( $(fair_fio_report c2 | jq '.jobs[0].read.bw') / 1024 ))
echo "limits: class 1 $c1 IOPS, class 2 $c2 MiB/s, class 3 $c3 KiB/s (alone $alone)"
grep '^class_qos:' /proc/net/ksmbd_sched
vm_check "limits: fio c1 without errors" fair_fio_json_ok c1
vm_check "limits: fio c2 without errors" fair_fio_json_ok c2
vm_check "limits: class 1 at 200 IOPS measures 200 +-10% ($c1)" within "$c1" 200 100
vm_check "limits: class 2 at 20 MiB/s measures 20 +-10% ($c2 MiB/s)" within "$c2" 20 100
vm_check "limits: class 3, unlimited, keeps half of its rate alone ($c3 of $alone KiB/s)" \
	test $(( c3 * 2 )) -ge "$alone"
vm_check "limits: class 1's waits for its limit are counted" \
	test "$(class_qos 1 limited)" -gt 0 -a "$(class_qos 1 throttled_ns)" -gt 0
vm_check "limits: class 3 has no class_qos line" test -z "$(class_qos 3 limited)"
umount "$sched_tmp/l1" "$sched_tmp/l2" "$sched_tmp/l3"
smb-classify unload >/dev/null

# ---- reservation -----------------------------------------------------------------
if why=$(slowfs_available); then
	slowfs_share_start --service-ms 5 --jitter-pct 0 --parallel 1 ||
		{ vm_fail "slowfs share started"; vm_finish; }
	head -c 16M /dev/urandom >"$SLOWFS_BACKING/data.bin"
	fair_load 2
	smb-classify prefix add 127.0.0.2/32 4 >/dev/null
	smb-classify prefix add 127.0.0.3/32 5 weight 64 >/dev/null
	smb-classify prefix add 127.0.0.4/32 6 weight 64 >/dev/null
	smb-classify prefix add 127.0.0.5/32 7 weight 64 >/dev/null
	smb-classify class set 4 reservation-iops 100 >/dev/null
	for i in 2 3 4 5; do slowfs_mount "127.0.0.$i" "$sched_tmp/r$i"; done
	for i in 3 4 5; do
		fair_fio_json "big$i" "$sched_tmp/r$i/data.bin" $((RT + 2)) 8 64k "$RAMP"
	done
	r=$(fair_fio_measure iops res "$sched_tmp/r2/data.bin" "$RT" 8 4k "$RAMP")
	fair_kill_all
	others=0
	for i in 3 4 5; do others=$(( others + $(fair_fio_iops "big$i") )); done
	echo "reservation: class 4 $r IOPS, the three others $others IOPS"
	grep '^class_qos:' /proc/net/ksmbd_sched
	vm_check "reservation: class 4 (weight 1, 100 IOPS reserved) keeps >= 95 IOPS ($r)" \
		test "$r" -ge 95
	vm_check "reservation: the others, weight 64, are served too ($others IOPS)" \
		test "$others" -gt 0
	served=$(class_qos 4 res_served)
	missed=$(class_qos 4 res_missed)
	vm_check "reservation: served ahead of the round ($served), missed at most 5% of that ($missed)" \
		test "${served:-0}" -gt 0 -a $(( ${missed:-0} * 20 )) -le "${served:-0}"
	for i in 2 3 4 5; do umount "$sched_tmp/r$i"; done
else
	echo "SKIP: reservation: $why"
fi

vm_finish
