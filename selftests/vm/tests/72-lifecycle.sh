#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The dispatcher's lifecycle under load, with requests waiting in it
# (budget 2, fio 64 KiB readers at queue depth 16):
#   (a) replace, twice (budget 2 -> 4 -> 1) while fio (bounded at 120 s,
#       stopped by the test once both replaces are checked, so requests
#       wait through both however slow the host) keeps requests queued:
#       fio ends without I/O errors, then inflight 0, queued 0;
#   (b) unload while requests wait: they run, fio ends without errors
#       within its own runtime, nothing attached afterwards;
#   (c) kill -9 one client's fio and umount -f its mounts while its
#       requests wait: the other clients keep being served, and once
#       they stop: inflight 0, queued 0, clients 0;
#   (d) no kernel warnings (the harness fails the test on any).
# Each case ends with a read of data.bin checked against its sha256.
# vm-timeout: 300

set -euo pipefail
# shellcheck source=../lib.sh
source "${VM_DIR:?run me inside the VM: selftests/vm/run $0}/lib.sh"
# shellcheck source=../testlib-sched.sh
source "$VM_DIR/testlib-sched.sh"
# shellcheck source=../testlib-fair.sh
source "$VM_DIR/testlib-fair.sh"
trap fair_cleanup EXIT

head -c 16M /dev/urandom >"$SMB_SHARE_DIR/data.bin"
want_sha=$(sched_sha "$SMB_SHARE_DIR/data.bin")
RUNTIME=10	# fio's own bound in (a) and (b)

check_sha() {
	vm_check "$1: data.bin read through $2, sha256 equal" \
		test "$(sched_sha "$2/data.bin")" = "$want_sha"
}

# fio_done DESC NAME PID [STOPPED]: fio exited 0 (128 if we STOPPED it
# with SIGTERM: fio's exit status when interrupted) and saw no I/O error.
fio_done() {
	local rc=0 ok=0
	fair_wait "$3" || rc=$?
	[[ -n ${4:-} ]] && ok=128
	vm_check "$1: fio $2 exit status $rc, no I/O errors" \
		eval "test $rc = 0 -o $rc = $ok && fair_fio_ok $2"
}

fair_load 2
smb-classify prefix add 127.0.0.2/32 1 >/dev/null
smb-classify prefix add 127.0.0.3/32 2 >/dev/null
smb-classify prefix add 127.0.0.4/32 3 >/dev/null
fair_mount 127.0.0.2 "$sched_tmp/a"
fair_mount 127.0.0.3 "$sched_tmp/b1"
fair_mount 127.0.0.3 "$sched_tmp/b2"

# start_abb TAG [RUNTIME]: fio on a, b1, b2; pids in PID_<mount>.
start_abb() {
	local rt=${2:-$RUNTIME}
	fair_fio "a$1" "$sched_tmp/a/data.bin" "$rt"; PID_a=$FAIR_LAST_PID
	fair_fio "b1$1" "$sched_tmp/b1/data.bin" "$rt"; PID_b1=$FAIR_LAST_PID
	fair_fio "b2$1" "$sched_tmp/b2/data.bin" "$rt"; PID_b2=$FAIR_LAST_PID
}
# wait_abb DESC TAG [stopped]: wait for the three; "stopped": SIGTERM first.
wait_abb() {
	[[ -n ${3:-} ]] && kill "$PID_a" "$PID_b1" "$PID_b2" 2>/dev/null
	fio_done "$1" "a$2" "$PID_a" ${3:-}
	fio_done "$1" "b1$2" "$PID_b1" ${3:-}
	fio_done "$1" "b2$2" "$PID_b2" ${3:-}
	FAIR_PIDS=()
}

# ---- (a) replace under load ---------------------------------------------------
start_abb _r 120
vm_check "(a) requests waiting before the replace" vm_poll 60 fair_at_least queued 4
smb-classify replace "$(fair_obj 4)" >/dev/null
vm_check "(a) replaced: max_inflight 4" test "$(sched_proc max_inflight)" = 4
vm_check "(a) still waiting after the first replace" vm_poll 30 fair_at_least queued 2
smb-classify replace "$(fair_obj 1)" >/dev/null
vm_check "(a) replaced again: max_inflight 1, name prefix_mi1" \
	test "$(sched_proc max_inflight)/$(sched_proc name)" = 1/prefix_mi1
vm_check "(a) the budget holds: inflight <= 1 once it drains" \
	vm_poll 30 eval 'test "$(sched_proc inflight)" -le 1'
wait_abb "(a) replace" _r stopped
vm_check "(a) afterwards inflight 0, queued 0, clients 0" vm_poll 30 fair_idle
check_sha "(a) replace" "$sched_tmp/a"

# ---- (b) unload while requests wait -------------------------------------------
smb-classify replace "$(fair_obj 2)" >/dev/null
start_abb _u
vm_check "(b) requests waiting before the unload" vm_poll 60 fair_at_least queued 4
q=$(sched_proc queued)
smb-classify unload >/dev/null
vm_check "(b) unloaded with $q waiting: attached 0" test "$(sched_proc attached)" = 0
wait_abb "(b) unload" _u
check_sha "(b) unload" "$sched_tmp/a"
check_sha "(b) unload" "$sched_tmp/b1"

# ---- (c) a client killed and force-unmounted while its requests wait -------
fair_load 2	# prefixes were unpinned with the unload
smb-classify prefix add 127.0.0.2/32 1 >/dev/null
smb-classify prefix add 127.0.0.3/32 2 >/dev/null
smb-classify prefix add 127.0.0.4/32 3 >/dev/null
umount "$sched_tmp/a" "$sched_tmp/b1" "$sched_tmp/b2"
fair_mount 127.0.0.2 "$sched_tmp/a"	# new connections: classified again
fair_mount 127.0.0.3 "$sched_tmp/b1"
fair_mount 127.0.0.4 "$sched_tmp/v1"
fair_mount 127.0.0.4 "$sched_tmp/v2"
fair_fio a_k "$sched_tmp/a/data.bin" 120; PID_a=$FAIR_LAST_PID
fair_fio b1_k "$sched_tmp/b1/data.bin" 120; PID_b1=$FAIR_LAST_PID
fair_fio v1_k "$sched_tmp/v1/data.bin" 120; PID_v1=$FAIR_LAST_PID
fair_fio v2_k "$sched_tmp/v2/data.bin" 120; PID_v2=$FAIR_LAST_PID
vm_check "(c) all three clients waiting" vm_poll 60 fair_at_least clients 3
v_before=$(fair_class_field 3 dispatched)
kill -9 "$PID_v1" "$PID_v2"
forced=0
# umount -f aborts the victim's outstanding requests on the client side;
# it is refused (EBUSY) until the killed fio has let go of the files.
umount_f() {
	local m
	for m in "$sched_tmp/v1" "$sched_tmp/v2"; do
		if grep -q " $m " /proc/mounts; then
			umount -f "$m" 2>/dev/null || true
			forced=$((forced + 1))
		fi
	done
	! grep -q " $sched_tmp/v[12] " /proc/mounts
}
vm_check "(c) victim's mounts force-unmounted" vm_poll 60 umount_f
{ wait "$PID_v1" "$PID_v2"; } 2>/dev/null || true
echo "(c) victim (class 3): $v_before dispatched before the kill, $(fair_class_field 3 dispatched) at the unmount; umount -f calls: $forced"
s1=$(fair_class_field 1 dispatched)
s2=$(fair_class_field 2 dispatched)
vm_check "(c) the other clients keep being served (+100 each)" \
	vm_poll 60 eval '(( $(fair_class_field 1 dispatched) >= s1 + 100 && $(fair_class_field 2 dispatched) >= s2 + 100 ))'
vm_check "(c) the victim's TCP connections are closed" \
	vm_poll 60 eval 'test "$(ss -Htn state established "( dport = :445 )" src 127.0.0.4 | wc -l)" = 0'
kill "$PID_a" "$PID_b1"
fio_done "(c) kill" a_k "$PID_a" stopped
fio_done "(c) kill" b1_k "$PID_b1" stopped
FAIR_PIDS=()
vm_check "(c) afterwards inflight 0, queued 0, clients 0" vm_poll 30 fair_idle
grep -v '^class' "$SCHED_PROC" | tr '\n' ' '; echo
check_sha "(c) kill" "$sched_tmp/a"
check_sha "(c) kill" "$sched_tmp/b1"

smb-classify unload >/dev/null
vm_finish
