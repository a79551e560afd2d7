#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 240
#
# A reply frame has a deadline (Documentation/dispatch.rst, "Bounded";
# patch 0002: 60 s,
# or longer for a frame that needs it at 64 KiB/s).  A dispatcher of
# budget 1; a raw client A (127.0.0.2, class 1) sends one 1 MiB READ on
# a socket with a 4 KiB receive buffer and then reads its reply 1 KiB
# every 2 s: it makes progress all the time, so a stall counter that
# resets on progress (the old rule) would let it hold the worker and its
# connection's send mutex for hours.  Asserted:
#   - the READ gave its slot back when the send would block on A
#     (wait_releases grows), and meanwhile a client B (127.0.0.3, class
#     2) reads 200 x 64 KiB, byte-exact, through the same budget of 1;
#   - A kept reading (more than its socket buffer's worth arrived, so
#     the server's send progressed), yet the server gave the connection
#     up, not before 55 s after the READ and before A got the whole
#     reply: one kernel log line says why;
#   - ksmbd released the connection (its class-1 client is gone: its
#     worker returned, ksmbd frees a connection only after its requests
#     have run, and with it the send mutex); once A stops, no TCP
#     connection of A is left;
#   - inflight, queued, clients, payloads are back to exactly 0, and B
#     reads again after it, byte-exact.

set -euo pipefail
# shellcheck source=../lib.sh
source "${VM_DIR:?run me inside the VM: selftests/vm/run $0}/lib.sh"
# shellcheck source=../testlib-sched.sh
source "$VM_DIR/testlib-sched.sh"
# shellcheck source=../testlib-fair.sh
source "$VM_DIR/testlib-fair.sh"
# shellcheck source=../testlib-read.sh
source "$VM_DIR/testlib-read.sh"
WMEM=/proc/sys/net/ipv4/tcp_wmem
wmem0=$(cat "$WMEM")
trap 'echo "$wmem0" >"$WMEM"; fair_cleanup; read_cleanup' EXIT
read_need_impacket

tmp=$sched_tmp
LOGLINE='a reply was not read by the client before its deadline'
head -c 4M /dev/urandom >"$SMB_SHARE_DIR/big.bin"
head -c 16M /dev/urandom >"$SMB_SHARE_DIR/other.bin"

fair_two_classes 1
seq0=$("$VM_DIR/kmsg-since" -1 | sed -n 's/^seq //p')
w0=$(sched_proc wait_releases)

# On loopback a new connection's send buffer starts at about 2.6 MiB
# (4 x 10 segments of the 64 KiB MSS), so a 1 MiB frame would be taken by
# the socket whole and no worker would wait for the reader (right, but
# not this test).  A send buffer of at most 64 KiB, as a real link's
# would be for a bigger frame, makes the frame wait for the reader.
echo "4096 16384 65536" >"$WMEM"
read_raw --host 127.0.0.2 slow-read big.bin --length $((1 << 20)) \
	--rcvbuf 4096 --chunk 1024 --interval 2 \
	--progress "$tmp/a.progress" --stop-file "$tmp/a.stop" >"$tmp/a.out" 2>&1 &
a=$!
READ_PIDS+=("$a")
vm_poll 60 grep -q 'sent, rcvbuf' "$tmp/a.out" || vm_fail "A's READ never sent: $(cat "$tmp/a.out")"
t_sent=${EPOCHREALTIME/./}
vm_check "A's READ gave its slot back when the send blocked (wait_releases $w0 -> ...)" \
	vm_poll 60 fair_at_least wait_releases $((w0 + 1))

read_raw --host 127.0.0.3 pipe other.bin --length 65536 --depth 4 --count 200 \
	>"$tmp/b.out" 2>&1 &
b=$!
READ_PIDS+=("$b")
rc=0
wait "$b" || rc=$?
cat "$tmp/b.out"
vm_check "B: 200 READs of 64 KiB byte-exact while A's reply is stuck (exit $rc)" test "$rc" = 0
vm_check "A's connection still open after B's reads" kill -0 "$a"

# The deadline, at the server: the log line of the abort.  (A itself sees
# the end of its connection only after the frames already in the
# server's send buffer have crept out at its pace: the abort shuts the
# socket down behind them.)
log_seen() { "$VM_DIR/kmsg-since" "$seq0" | grep -q "$LOGLINE"; }
end_t=$(( ${EPOCHREALTIME/./} + 150 * ${TEST_TIMEOUT_SCALE:-1} * 1000000 ))
while ! log_seen && (( ${EPOCHREALTIME/./} < end_t )); do
	sleep 1
done
secs=$(( (${EPOCHREALTIME/./} - t_sent) / 1000000 ))
n=$("$VM_DIR/kmsg-since" "$seq0" | grep -c "$LOGLINE" || true)
vm_check "one kernel log line: '$LOGLINE' ($n), $secs s after the READ" test "$n" = 1
vm_check "the connection was given up past the deadline, not before (>= 55 s: $secs)" \
	test "$secs" -ge 55
got=$(cat "$tmp/a.progress" 2>/dev/null || echo 0)
rcvbuf=$(sed -n 's/.* rcvbuf \([0-9]*\).*/\1/p' "$tmp/a.out")
vm_check "A kept reading: $got bytes of the reply arrived, more than its receive buffer (${rcvbuf:-?})" \
	test "$got" -gt "${rcvbuf:-999999999}"
vm_check "A had not got the whole reply ($got of $(( (1 << 20) + 84 )) bytes)" \
	test "$got" -lt $(( (1 << 20) + 84 ))
# ksmbd frees a connection only after its requests have run: its class-1
# client disappears when the worker has returned from the send (and
# with it the connection's send mutex).
no_client1() { [[ -z $(sched_client_field 1 conns) ]]; }
vm_check "ksmbd released A's connection: no client of class 1 left" vm_poll 30 no_client1
touch "$tmp/a.stop"
rc=0
wait "$a" || rc=$?
cat "$tmp/a.out"
vm_check "A stopped (exit $rc)" test "$rc" = 0
vm_check "A's connection is gone, both ends" vm_poll 30 read_no_conn 127.0.0.2
echo "$wmem0" >"$WMEM"
vm_check "back to 0: inflight, queued, clients, payloads" vm_poll 30 fair_idle

rc=0
read_raw --host 127.0.0.3 pipe other.bin --length 65536 --depth 4 --count 50 \
	>"$tmp/b2.out" 2>&1 || rc=$?
cat "$tmp/b2.out"
vm_check "B reads again afterwards, byte-exact (exit $rc)" test "$rc" = 0
vm_check "the dispatcher was never bypassed" test "$(sched_proc bypass)" = 0

vm_finish
