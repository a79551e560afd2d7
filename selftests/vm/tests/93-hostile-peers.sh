#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Peers that lie and flood before they log in cannot take the server from
# a client that did.  The reference classifier (unmatched peers: class 0,
# PER_PEER); a victim, a cifs mount from 127.0.0.2 (class 1), reads 4 KiB
# at queue depth 8.
#   (a) two raw peers (127.0.0.3 and .4, hostile.py unauth-read) stream
#       READs with Length 0xffffffff on connections without a session:
#       - the victim keeps at least a quarter of the IOPS it had alone in
#         this boot;
#       - their requests never take a slot of the budget: class 0 has
#         dispatched 0 and every one of its requests was counted as
#         control, and requests of theirs waited for their own client's
#         bound (unauth_waits grows) and, as READs need a session, for
#         their client's rate (invalid_waits grows; the peers got no more
#         answers than 16 a second each allows); never bypassed;
#   (b) one raw peer (127.0.0.6, hostile.py neg-flood) opens connection
#       after connection with NEGOTIATE and a failing SESSION_SETUP while
#       another address (127.0.0.5) mounts and reads 8 MiB, byte-exact.
#       The medians of three such mounts and reads, in this boot: with
#       the classifier attached, beside the flood, they take at most
#       twice what they take alone, and at most 1.25 times what they
#       take beside the same flood with nothing attached (a tolerance
#       for the noise of three samples).
# The peers run at nice 19 (testlib-hostile.sh: without it, 20% of the
# victim's IOPS instead of 30-50%).
# vm-timeout: 240

set -euo pipefail
# shellcheck source=../lib.sh
source "${VM_DIR:?run me inside the VM: selftests/vm/run $0}/lib.sh"
# shellcheck source=../testlib-sched.sh
source "$VM_DIR/testlib-sched.sh"
# shellcheck source=../testlib-fair.sh
source "$VM_DIR/testlib-fair.sh"
# shellcheck source=../testlib-hostile.sh
source "$VM_DIR/testlib-hostile.sh"

cleanup() {
	hostile_stop
	umount "$sched_tmp/m" 2>/dev/null || true
	fair_cleanup
}
trap cleanup EXIT

head -c 8M /dev/urandom >"$SMB_SHARE_DIR/data.bin"
want_sha=$(sched_sha "$SMB_SHARE_DIR/data.bin")
for a in 127.0.0.3 127.0.0.4 127.0.0.5 127.0.0.6; do
	sched_route_src "$a"
done

smb-classify load >/dev/null
smb-classify prefix add 127.0.0.2/32 1 >/dev/null
fair_mount 127.0.0.2 "$sched_tmp/a"

# class0_beyond N: class 0 (the unmatched peers) counted more than N requests.
class0_beyond() { (( $(fair_class_field 0 bypassed) > $1 )); }

# iops NAME: 4 KiB random reads at depth 8 for 6 s; prints the IOPS.
iops() { fair_fio_measure iops "$1" "$sched_tmp/a/data.bin" 6 8 4k 1; }

# ---- (a) READs with a 4 GiB Length, no session -------------------------
alone=$(iops alone)
vm_check "the victim reads alone ($alone IOPS)" test "$alone" -gt 0

w0=$(sched_proc unauth_waits) iw0=$(sched_proc invalid_waits)
c0=$(fair_class_field 0 bypassed)
hostile_lie_start 14 127.0.0.3 127.0.0.4
# the attack is under way before the victim measures
vm_poll 10 class0_beyond $((c0 + 100)) || echo "the lying peers were slow to start"
attacked=$(iops attacked)
hostile_wait
sent=$(hostile_lie_count sent 127.0.0.3 127.0.0.4)
replies=$(hostile_lie_count replies 127.0.0.3 127.0.0.4)
echo "victim: alone $alone IOPS, beside two peers lying about READ Length $attacked IOPS ($sent lying READs sent, $replies answered)"
vm_check "the peers sent lying READs ($sent)" test "$sent" -gt 100
vm_check "the victim keeps >= 1/4 of its IOPS alone ($attacked of $alone)" \
	test $((attacked * 4)) -ge "$alone"
d0=$(fair_class_field 0 dispatched)
b0=$(fair_class_field 0 bypassed)
vm_check "the lying peers took no slot (class 0 dispatched $d0, counted $b0)" \
	test "$d0" = 0 -a "$b0" -gt 0
w1=$(sched_proc unauth_waits)
vm_check "their requests waited for their own bound (unauth_waits +$((w1 - w0)))" \
	test "$w1" -gt "$w0"
# READs need a session: each peer runs 16 a second after a burst of 16
# (KSMBD_SCHED_CLIENT_INVALID_*), for the 14 s of the attack and 1 more.
iw1=$(sched_proc invalid_waits)
vm_check "their READs waited for their rate (invalid_waits +$((iw1 - iw0)))" \
	test "$iw1" -gt "$iw0"
vm_check "their READs were answered at their rate ($replies <= 2 x (16 + 16 x 15))" \
	test "$replies" -gt 0 -a "$replies" -le $(( 2 * (16 + 16 * 15) ))
vm_check "never bypassed" test "$(sched_proc bypass)" = 0

# ---- (b) NEGOTIATE and SESSION_SETUP flood ------------------------------
# median3: the median of three mounts and reads of data.bin from 127.0.0.5.
median3() {
	local a b c m=$sched_tmp/m
	a=$(hostile_mount_read 127.0.0.5 "$m" data.bin "$want_sha") &&
		b=$(hostile_mount_read 127.0.0.5 "$m" data.bin "$want_sha") &&
		c=$(hostile_mount_read 127.0.0.5 "$m" data.bin "$want_sha") || return 1
	printf '%s\n' "$a" "$b" "$c" | sort -n | sed -n 2p
}
quiet_ms=$(median3)
c0=$(fair_class_field 0 bypassed)
flood_ms=$(hostile_during_flood 127.0.0.6 median3)
vm_check "the flood's peer is class 0 and counted" class0_beyond "$c0"
vm_check "never bypassed" test "$(sched_proc bypass)" = 0
smb-classify unload >/dev/null
bare_ms=$(hostile_during_flood 127.0.0.6 median3)
echo "mount + 8 MiB read from 127.0.0.5, medians of 3: alone $quiet_ms ms," \
	"beside a NEGOTIATE flood $flood_ms ms, the same with nothing attached $bare_ms ms"
vm_check "mount and read beside the flood: byte-exact, <= 2x alone ($flood_ms ms vs $quiet_ms ms)" \
	test "$flood_ms" -le $((quiet_ms * 2))
vm_check "... and <= 1.25x what nothing attached gives ($flood_ms ms vs $bare_ms ms)" \
	test $((flood_ms * 4)) -le $((bare_ms * 5))
vm_finish
