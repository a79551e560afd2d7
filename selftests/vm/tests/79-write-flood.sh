#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 300
#
# Bounded memory under a WRITE flood (Dispatch v2, point 6).  A
# dispatcher of budget 2; a raw client A (127.0.0.2, class 1) grows its
# credits to 8192 and pipelines 1 MiB WRITEs with all of them (512 at
# once, none of their replies read while credits last: stock ksmbd would
# hold up to 512 MiB of its messages); a raw client B (127.0.0.3, class
# 2) keeps 8 READs of 64 KiB outstanding meanwhile.  Counted at the
# server:
#   - A's receiver is throttled at the cap: throttled grows, and A never
#     has more than QMAX requests waiting (sampled), where QMAX is the
#     byte cap in 1 MiB messages: a receiver queues a message only while
#     its client is below client_qbytes_max, so at most
#     floor((qbytes_max - 1) / msg) + 1 messages wait (32 for 32 MiB);
#   - the server's unreclaimable kernel memory (SUnreclaim, where 1 MiB
#     kmalloc buffers are accounted, plus VmallocUsed, their kvmalloc
#     fallback) grows by less than a bound derived from the cap (below);
#   - B keeps its share: over the contested dispatches (both classes
#     waiting, clients>=2) B gets 50% +-10 of the bytes, and no READ of
#     B waits a second in the dispatcher;
#   - every WRITE and READ reply is right, the written file is byte-exact
#     (sha256), and inflight, queued, clients, payloads are back to 0.

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

MIB=$((1 << 20))
SIZE=$((64 * MIB))
WRITES=1024			# 1 GiB written, over the 64 MiB file 16 times
tmp=$sched_tmp

head -c "$SIZE" /dev/urandom >"$tmp/src.bin"
truncate -s "$SIZE" "$SMB_SHARE_DIR/flood.bin"
head -c 16M /dev/urandom >"$SMB_SHARE_DIR/other.bin"
read_route_src 127.0.0.2
read_route_src 127.0.0.3

fair_load 2
smb-classify prefix add 127.0.0.2/32 1 >/dev/null
smb-classify prefix add 127.0.0.3/32 2 >/dev/null
budget=$(sched_proc max_inflight)
qbmax=$(sched_proc client_qbytes_max)
# A WRITE of 1 MiB is charged to the byte cap as its message: 64 bytes of
# header, 48 of body, the data, and the 4-byte RFC 1002 length.
msg=$((MIB + 116))
qmax=$(( (qbmax - 1) / msg + 1 ))
t0=$(sched_proc throttled)

# meminfo_kb: SUnreclaim + VmallocUsed, kB.
meminfo_kb() {
	awk '$1 == "SUnreclaim:" || $1 == "VmallocUsed:" { s += $2 } END { print s }' /proc/meminfo
}
# The bound: A's waiting messages (qbytes_max, plus the one that crossed
# it), the ones in flight or being received (budget + 1) and their reply
# buffers, B's 8 READs (64 KiB each, request and reply), and the TCP
# queues of the two connections the server holds (rmem and wmem maxima,
# sk_buff heads are slab), plus 16 MiB for everything else the kernel
# allocates meanwhile (the other connection, the tracer's buffers are
# allocated before the baseline).  Without the cap A alone would have
# 512 MiB waiting.
rmem=$(awk '{ print $3 }' /proc/sys/net/ipv4/tcp_rmem)
wmem=$(awk '{ print $3 }' /proc/sys/net/ipv4/tcp_wmem)
bound_kb=$(( (qbmax + msg + (budget + 1) * 2 * msg + 16 * 2 * 65536 +
	2 * (rmem + wmem) + 16 * MIB) / 1024 ))

sched_trace_start
sync
echo 1 >/proc/sys/vm/drop_caches
base=$(meminfo_kb)

read_raw --host 127.0.0.3 pipe other.bin --length 65536 --depth 8 \
	--stop-file "$tmp/stop" --progress "$tmp/b.progress" >"$tmp/b.out" 2>&1 &
b=$!
READ_PIDS+=("$b")
vm_poll 60 test -s "$tmp/b.progress" || vm_fail "B's READs never started: $(cat "$tmp/b.out")"
read_raw --host 127.0.0.2 pipe flood.bin --write --source "$tmp/src.bin" \
	--size "$SIZE" --length "$MIB" --depth 0 --credits 8192 --count "$WRITES" \
	--progress "$tmp/a.progress" >"$tmp/a.out" 2>&1 &
a=$!
READ_PIDS+=("$a")

max=0 maxq=0 peak=$base samples=0
while kill -0 "$a" 2>/dev/null; do
	q=$(sched_client_field 1 queued)
	(( ${q:-0} > max )) && max=${q:-0}
	q=$(sched_proc queued)
	(( ${q:-0} > maxq )) && maxq=${q:-0}
	m=$(meminfo_kb)
	(( m > peak )) && peak=$m
	samples=$((samples + 1))
	sleep 0.2
done
rc=0
wait "$a" || rc=$?
cat "$tmp/a.out"
touch "$tmp/stop"
rcb=0
wait "$b" || rcb=$?
cat "$tmp/b.out"
sched_trace_sync

vm_check "A: $WRITES WRITEs of 1 MiB with all its credits, every reply right (exit $rc)" test "$rc" = 0
vm_check "A pipelined more than the cap ($(sed -n 's/.*at most \([0-9]*\) outstanding.*/\1/p' "$tmp/a.out") outstanding > $qmax)" \
	test "$(sed -n 's/.*at most \([0-9]*\) outstanding.*/\1/p' "$tmp/a.out")" -gt "$qmax"
vm_check "B's READs during the flood all byte-exact (exit $rcb)" test "$rcb" = 0
vm_check "the written file is byte-exact" \
	test "$(sched_sha "$SMB_SHARE_DIR/flood.bin")" = "$(sched_sha "$tmp/src.bin")"
vm_check "A's receiver was throttled: throttled $t0 -> $(sched_proc throttled)" \
	test "$(sched_proc throttled)" -gt "$t0"
vm_check "A never had more than $qmax requests waiting (the byte cap; max sampled $max of $samples samples)" \
	test "$max" -le "$qmax"
vm_check "A reached the cap: at least $((qmax - 2)) waiting at a sample ($max)" \
	test "$max" -ge $((qmax - 2))
vm_check "never more than $((qmax + 8)) requests waiting in all (max sampled $maxq)" \
	test "$maxq" -le $((qmax + 8))
grow=$((peak - base))
vm_check "kernel memory grew by $grow kB (SUnreclaim + VmallocUsed), bound $bound_kb kB" \
	test "$grow" -le "$bound_kb"

contested='.event == "ksmbd_sched_dispatch" and (.waited == 1 or .waited == true) and .clients >= 2'
ab=$(jq -s "[.[] | select($contested and .class == 1) | .bytes] | add // 0" "$SCHED_TRACE_JSON")
bb=$(jq -s "[.[] | select($contested and .class == 2) | .bytes] | add // 0" "$SCHED_TRACE_JSON")
bwait=$(jq -s '[.[] | select(.event == "ksmbd_sched_dispatch" and .class == 2 and .cmd == "READ") | .wait_ns] | max // 0' "$SCHED_TRACE_JSON")
bn=$(sched_count ksmbd_sched_dispatch '.class == 2 and .cmd == "READ"')
echo "contested bytes: A $ab, B $bb; B: $bn READs dispatched, longest wait $((bwait / 1000000)) ms"
vm_check "contested dispatches seen (A $ab, B $bb bytes)" test "$ab" -gt 0 -a "$bb" -gt 0
if (( ab + bb > 0 )); then
	fair_share_ok "B's share of the contested bytes" "$(fair_permille "$bb" $((ab + bb)))" 500 100
fi
vm_check "no READ of B waited 1 s in the dispatcher ($((bwait / 1000000)) ms)" \
	test "$bwait" -lt 1000000000
vm_check "back to 0: inflight, queued, clients, payloads" vm_poll 30 fair_idle
vm_check "the dispatcher was never bypassed" test "$(sched_proc bypass)" = 0

vm_finish
