#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The splice path under a changing file and a stalled reader.
# vm-timeout: 720
# (a) pattern.bin (every byte a non-zero function of its offset) is
#     truncated to a point between FLOOR and CEIL and extended back to
#     CEIL by appends, in a bounded loop on the server side, while
#     smb2raw.py sends 64 KiB READs around its end, spliced (splice-min
#     0).  Every reply: END_OF_FILE (73-byte frame) or success with a
#     frame of exactly 80 + DataLength bytes; every byte the pattern at
#     its offset, or 0 at offsets >= FLOOR (a read racing a truncate may
#     copy the zeroed tail of a page: the same on the copy path); every
#     reply with data spliced from the page cache (src=pagecache); then
#     a READ on the same connection is exact (the stream never desynced).
# (c) punch.bin (pattern) gets holes punched at unaligned ranges in
#     [PFLOOR, PCEIL) (fallocate PUNCH_HOLE|KEEP_SIZE, as fallocate -p)
#     and the pattern written back, with drop_caches every 20 rounds,
#     while 256 KiB READs (4 pipe rounds each) are spliced from the page
#     cache: every frame exact, every byte the pattern or 0 inside
#     [PFLOOR, PCEIL) (a referenced page removed from the file keeps its
#     bytes; the partial pages of a hole are zeroed in place), every
#     reply spliced, src=pagecache at least once and never copy (src=pages
#     is allowed here: the kernel's page-cache test is a heuristic on a
#     folio a punch removed, and one such reply in 310 was labelled
#     pages on 1 December, before folio_test_uptodate was added to it);
#     then payloads and payload_pages are 0.  On
#     tmpfs drop_caches evicts no shmem page, so (d) is its real test:
# (d) a share on an overlay whose lower layer is the guest's 9p root
#     (cache=loose: a page cache whose clean pages drop_caches evicts;
#     the root itself is read-only, and ksmbd's open wants a writable
#     mount), the largest shared library of /usr/lib/x86_64-linux-gnu:
#     1 MiB READs spliced (overlayfs passes ->splice_read() to 9p's
#     filemap_splice_read()) while a bounded loop drops the caches (that
#     drop_caches evicts this page cache is checked first: Cached falls
#     by >= 16 MiB after 40 MiB were read): every reply byte-exact, every
#     one src=pagecache, payloads and payload_pages 0 afterwards.
# (b) client A (127.0.0.2, class 1) queues 48 READs of 1 MiB and
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

# ---- (c) reads while holes are punched and caches dropped --------------
PFLOOR=$(( 256 * 1024 )) PCEIL=$(( 1280 * 1024 ))
read_raw pattern-file "$SMB_SHARE_DIR/punch.bin" $(( PCEIL + 512 * 1024 ))
smb-classify load >/dev/null
smb-classify policy set 0 splice-min 0 >/dev/null
stop=$read_tmp/puncher.done
( read_raw mutate "$SMB_SHARE_DIR/punch.bin" --mode punch --floor "$PFLOOR" \
	--ceil "$PCEIL" --rounds 4000 --seconds 40 --drop-caches 20; touch "$stop" ) &
mutator=$!
READ_PIDS+=("$mutator")
vm_check "(c) 256 KiB READs during punch-hole and drop_caches: frames exact, pattern or zeros in the holes, page cache" \
	read_raw stress-read punch.bin --floor "$PFLOOR" --ceil "$PCEIL" \
		--zero-end "$PCEIL" --length 262144 --min-reads 150 --seconds 40 \
		--stop-file "$stop" --src pagecache,pages
vm_check "(c) the hole puncher finished" wait "$mutator"
vm_check "(c) payloads 0, payload_pages 0" vm_poll 10 vm_sched_held_zero

# ---- (d) a page cache drop_caches evicts: a share on the 9p root --------
lib=$(find /usr/lib/x86_64-linux-gnu -maxdepth 1 -type f -name '*.so*' -size +40M \
	-printf '%s %p\n' 2>/dev/null | sort -rn | awk 'NR == 1 { print $2 }')
if [[ -z $lib ]]; then
	vm_fail "(d) no shared library of 40 MiB or more in /usr/lib/x86_64-linux-gnu"
else
	ovl=$read_tmp/ovl
	mkdir -p "$ovl/upper" "$ovl/work" "$ovl/merged"
	mount -t overlay overlay -o "lowerdir=$(dirname "$lib"),upperdir=$ovl/upper,workdir=$ovl/work" \
		"$ovl/merged"
	vm_ksmbd_stop
	printf '\n[hostro]\n\tpath = %s\n\tread only = yes\n\tforce user = root\n\tforce group = root\n' \
		"$ovl/merged" >>"$KSMBD_CONF"
	READ_CONF_CHANGED=1
	vm_ksmbd_start
	# cache=loose shows as cache=0xf in /proc/mounts
	vm_check "(d) $lib is on the 9p root, cache=loose" \
		grep -Eq '^[^ ]+ / 9p .*cache=(loose|0xf)[, ]' /proc/mounts
	# drop_caches does evict this page cache: read 40 MiB, drop, compare
	head -c $(( 40 << 20 )) "$lib" >/dev/null
	c1=$(awk '$1 == "Cached:" { print $2 }' /proc/meminfo)
	echo 3 >/proc/sys/vm/drop_caches
	c2=$(awk '$1 == "Cached:" { print $2 }' /proc/meminfo)
	vm_check "(d) drop_caches evicts the 9p page cache (Cached ${c1} kB -> ${c2} kB)" \
		test $(( c1 - c2 )) -ge $(( 16 << 10 ))
	dropper_stop=$read_tmp/dropper.stop
	( for i in $(seq 1 400); do
		[[ -e $dropper_stop ]] && break
		echo 3 >/proc/sys/vm/drop_caches
		echo "$i" >"$read_tmp/dropper.count"
		sleep 0.1
	done ) &
	dropper=$!
	READ_PIDS+=("$dropper")
	vm_check "(d) 1 MiB READs of $(basename "$lib") during drop_caches: byte-exact, page cache" \
		env SMB_SHARE=hostro PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 "$READ_RAW" \
			verify-read "$(basename "$lib")" --local "$lib" --count 48 --limit $(( 40 << 20 ))
	echo "  drop_caches written $(cat "$read_tmp/dropper.count" 2>/dev/null || echo 0) times"
	touch "$dropper_stop"
	wait "$dropper" || true
	vm_check "(d) payloads 0, payload_pages 0" vm_poll 10 vm_sched_held_zero
fi
smb-classify unload >/dev/null

# ---- (b) a stalled reader, then a killed one ---------------------------
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
sched_proc_show inflight queued clients payloads payload_pages
smb-classify unload >/dev/null
vm_check "(b) after unload: payloads 0, payload_pages 0" vm_sched_held_zero
vm_finish
