#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 240
#
# Bounded per client (Documentation/dispatch.rst, "Bounded").  A
# dispatcher of budget 1;
# a raw client (127.0.0.2, class 1) sends 600 READs of 64 KiB at once
# and only then reads the replies.  Counted at the server:
#   - its receiver stopped reading at the cap (throttled grows) and the
#     client never had more than client_queued_max requests waiting
#     (/proc/net/ksmbd_sched_clients queued=, sampled);
#   - meanwhile a second client (127.0.0.3, class 2, a cifs mount) reads
#     a file and gets it intact;
#   - all 600 replies arrive, byte-exact, and the dispatcher drains.
# Also: /proc/net/ksmbd_sched_clients lists one line per client in the
# planned format.

set -euo pipefail
# shellcheck source=../lib.sh
source "${VM_DIR:?run me inside the VM: selftests/vm/run $0}/lib.sh"
# shellcheck source=../testlib-sched.sh
source "$VM_DIR/testlib-sched.sh"
# shellcheck source=../testlib-fair.sh
source "$VM_DIR/testlib-fair.sh"
# shellcheck source=../testlib-read.sh
source "$VM_DIR/testlib-read.sh"
trap 'fair_cleanup; read_cleanup' EXIT
read_need_impacket

CLIENTS=/proc/net/ksmbd_sched_clients
head -c 16M /dev/urandom >"$SMB_SHARE_DIR/big.bin"
head -c 4M /dev/urandom >"$SMB_SHARE_DIR/other.bin"
want_other=$(sched_sha "$SMB_SHARE_DIR/other.bin")

fair_two_classes 1
cap=$(sched_proc client_queued_max)
t0=$(sched_proc throttled)

read_raw --host 127.0.0.2 hog big.bin --count 600 --length 65536 \
	--sent-file "$sched_tmp/sent" >"$sched_tmp/hog.out" 2>&1 &
hog=$!
READ_PIDS+=("$hog")

max=0
fair_mount 127.0.0.3 "$sched_tmp/o"
( sched_sha "$sched_tmp/o/other.bin" >"$sched_tmp/other.sha" ) &
other=$!
while kill -0 "$hog" 2>/dev/null; do
	q=$(sched_client_field 1 queued)
	(( ${q:-0} > max )) && max=${q:-0}
	sleep 0.1
done
rc=0
wait "$hog" || rc=$?
cat "$sched_tmp/hog.out"
wait "$other" || true
vm_check "600 READs of 64 KiB: all replies byte-exact (exit $rc)" test "$rc" = 0
vm_check "the receiver stopped at the cap: throttled $t0 -> $(sched_proc throttled)" \
	test "$(sched_proc throttled)" -gt "$t0"
vm_check "class 1 never had more than $cap requests waiting (max sampled $max)" \
	test "$max" -le "$cap"
vm_check "another client's read during the flood is intact" \
	test "$(cat "$sched_tmp/other.sha")" = "$want_other"
vm_check "the dispatcher drains: inflight 0, queued 0" vm_poll 30 fair_idle
cat "$CLIENTS"
vm_check "the clients listing: class 2 (still mounted) with all fields" \
	grep -qE '^client id=[0-9]+ class=2 weight=1 peer=- conns=[0-9]+ queued=[0-9]+ inflight=[0-9]+ dispatched=[0-9]+ bytes=[0-9]+' "$CLIENTS"
umount "$sched_tmp/o"
smb-classify unload >/dev/null
vm_check "nothing attached: the clients listing is empty" test -z "$(cat "$CLIENTS")"

vm_finish
