#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The splice path under a changing file and a stalled reader.
# vm-timeout: 420
# (a) pattern.bin (every byte a non-zero function of its offset) is
#     truncated to a point between FLOOR and CEIL and extended back to
#     CEIL by appends, in a bounded loop on the server side, while
#     smb2raw.py sends 64 KiB READs around its end, spliced (splice-min
#     0).  Every reply: END_OF_FILE (73-byte frame) or success with a
#     frame of exactly 80 + DataLength bytes; every byte the pattern at
#     its offset, or 0 at offsets >= FLOOR (a read racing a truncate may
#     copy the zeroed tail of a page: the same on the copy path); every
#     reply with data spliced; then a READ on the same connection is
#     exact (the stream never desynced).
# (b) C10: client A (127.0.0.2, class 1) queues 48 READs of 1 MiB and
#     stops itself (SIGSTOP) before reading any reply; once >= 1 MiB of
#     replies wait in its socket and the server's (the server is stuck),
#     client B (127.0.0.3, class 2) opens, reads and closes small files
#     50 times, each checked, while A stays stopped; SIGCONT A: all 48
#     replies byte-exact.  Then A queues 48 more, stops, and is killed:
#     /proc/net/ksmbd_sched shows inflight 0, queued 0, payloads 0 and
#     payload_pages 0 (the kernel's exact count of the splice path's
#     pages: 48 MiB are at stake), and no connection from 127.0.0.2 is
#     left (so its socket, which referenced pages after their payload
#     was freed, is gone too).  MemFree is no oracle here: tmpfs, the page
#     cache and socket buffers all move it.
# The kernel gives a reply frame 60 s (KSMBD_TCP_SEND_DEADLINE) before it
# drops the connection; A is stopped well under that unless B starves.

set -euo pipefail
# shellcheck source=../lib.sh
source "${VM_DIR:?run me inside the VM: selftests/vm/run $0}/lib.sh"
# shellcheck source=../testlib-read.sh
source "$VM_DIR/testlib-read.sh"
trap read_cleanup EXIT

read_need_impacket

# ---- (a) reads while the file is truncated, extended, appended ---------
FLOOR=$(( 1024 * 1024 )) CEIL=$(( 1536 * 1024 ))
read_raw pattern-file "$SMB_SHARE_DIR/pattern.bin" "$CEIL"
smb-classify load >/dev/null
smb-classify policy set 0 splice-min 0 >/dev/null
stop=$read_tmp/mutator.done
( read_raw mutate "$SMB_SHARE_DIR/pattern.bin" --floor "$FLOOR" --ceil "$CEIL" \
	--rounds 3000 --seconds 45; touch "$stop" ) &
mutator=$!
READ_PIDS+=("$mutator")
vm_check "(a) 64 KiB READs near EOF during truncate/extend: frames exact, pattern bytes, spliced" \
	read_raw stress-read pattern.bin --floor "$FLOOR" --ceil "$CEIL" \
		--min-reads 300 --seconds 45 --stop-file "$stop"
vm_check "(a) the mutator finished" wait "$mutator"
smb-classify unload >/dev/null

# ---- (b) C10: a stalled reader, then a killed one -----------------------
read_route_src 127.0.0.2
read_route_src 127.0.0.3
head -c 16M /dev/urandom >"$SMB_SHARE_DIR/big.bin"
for i in $(seq 0 9); do head -c $(( 1000 + i * 700 )) /dev/urandom >"$SMB_SHARE_DIR/small$i.bin"; done
smb-classify load >/dev/null
smb-classify prefix add 127.0.0.2/32 1 >/dev/null
smb-classify prefix add 127.0.0.3/32 2 >/dev/null
smb-classify policy set 1 splice-min 0 >/dev/null
smb-classify policy set 2 splice-min 0 >/dev/null
read_trace_start

vm_check "(b) before: no payload held" vm_sched_held_zero

# start_hog TAG: client A queues 48 x 1 MiB READs and stops itself; wait
# until it is stopped and the server has filled its receive queue.
start_hog() {
	local tag=$1
	PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 "$READ_RAW" --host 127.0.0.2 \
		hog big.bin --count 48 --self-stop \
		--sent-file "$read_tmp/$tag.sent" >"$read_tmp/$tag.out" 2>&1 &
	hog=$!
	READ_PIDS+=("$hog")
	vm_poll 60 read_stopped "$hog" || return 1
	vm_poll 60 read_backlog_at_least 127.0.0.2 1048576
}

if start_hog a1; then
	vm_pass "(b) A stopped with $(read_backlog 127.0.0.2) bytes of replies unread"
	vm_check "(b) B completes 50 small reads while A is stopped" \
		timeout 35 env PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 "$READ_RAW" --host 127.0.0.3 small --count 50 \
			--progress "$read_tmp/b.progress"
	vm_check "(b) A was still stopped when B finished" read_stopped "$hog"
	kill -CONT "$hog"
	rc=0
	wait "$hog" || rc=$?
	cat "$read_tmp/a1.out"
	vm_check "(b) A resumed: all 48 replies byte-exact (exit $rc)" test "$rc" = 0
else
	vm_fail "(b) A never stopped with a full receive queue: $(cat "$read_tmp/a1.out")"
fi
echo "  oracle: $(read_trace_paths)"

if start_hog a2; then
	kill -KILL "$hog"
	wait "$hog" 2>/dev/null || true
	vm_check "(b) killed A: inflight 0, queued 0, payloads 0, payload_pages 0" \
		vm_poll 90 read_disp_idle
	vm_check "(b) killed A: its connection is gone" \
		vm_poll 90 read_no_conn 127.0.0.2
else
	vm_fail "(b) second A never stopped with a full receive queue"
fi
grep -E '^(inflight|queued|clients|payloads|payload_pages):' /proc/net/ksmbd_sched | tr '\n' ' '; echo
smb-classify unload >/dev/null
vm_check "(b) after unload: payloads 0, payload_pages 0" vm_sched_held_zero
vm_finish
