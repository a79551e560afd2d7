#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 420
#
# Bounded memory under a WRITE flood (Documentation/dispatch.rst,
# "Bounded").  A
# dispatcher of budget 1; client A (127.0.0.2, class 1) is two raw
# connections, each growing its credits to 8192 and pipelining 1 MiB
# WRITEs with all of them (up to 512 at once per connection, their
# replies read only when the credits are used up: stock ksmbd would
# hold up to 1 GiB of their messages); client B (127.0.0.3, class 2)
# keeps 32 READs of 64 KiB outstanding on two connections meanwhile.
# (One writer connection alone never fills its queue: its receiver reads
# a message no faster than a worker writes it.)  Counted at the server:
#   - A's receivers are throttled at the cap: throttled grows, and A
#     never has more than QMAX requests waiting (sampled), where QMAX
#     follows from the byte cap: a receiver queues a message, and waits
#     when its client is then at client_qbytes_max, so floor((qbytes_max
#     - 1) / msg) + 1 messages can wait, plus one more for each other
#     receiver that had its message in hand (33 for 32 MiB, 2 receivers);
#   - the server's unreclaimable kernel memory (SUnreclaim, where the
#     1 MiB kmalloc buffers are accounted, plus VmallocUsed, their
#     kvmalloc fallback) grows by less than a bound derived from the cap
#     (below; the largest queue sampled and the growth are printed);
#   - B keeps its share: over the contested dispatches (both classes
#     waiting, clients>=2) B gets at least 25% of the bytes (half of
#     the 50% deficit round robin gives it while both stay backlogged;
#     the share is printed);
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
WRITERS=2
WRITES=512			# per writer: 1 GiB in all, over the 64 MiB file 16 times
tmp=$sched_tmp

head -c "$SIZE" /dev/urandom >"$tmp/src.bin"
truncate -s "$SIZE" "$SMB_SHARE_DIR/flood.bin"
head -c 16M /dev/urandom >"$SMB_SHARE_DIR/other.bin"

fair_two_classes 1
budget=$(sched_proc max_inflight)
qbmax=$(sched_proc client_qbytes_max)
# A WRITE of 1 MiB is charged to the byte cap as its message: 64 bytes of
# header, 48 of body, the data, and the 4-byte RFC 1002 length.
msg=$((MIB + 116))
qmax=$(( (qbmax - 1) / msg + WRITERS ))
t0=$(sched_proc throttled)

# meminfo_kb: SUnreclaim + VmallocUsed, kB.
meminfo_kb() {
	awk '$1 == "SUnreclaim:" || $1 == "VmallocUsed:" { s += $2 } END { print s }' /proc/meminfo
}
# The bound: A's waiting messages (qmax of them), the ones in flight or
# being received (budget + WRITERS) with their reply buffers, B's 32
# READs (64 KiB each, request and reply), the TCP queues of the four
# connections the server holds (rmem and wmem maxima; mostly page frags,
# not slab, so this is generous), and 16 MiB for everything else the
# kernel allocates meanwhile (the tracer's buffers are allocated before
# the baseline).  Without the cap A alone would have 1 GiB waiting.
rmem=$(awk '{ print $3 }' /proc/sys/net/ipv4/tcp_rmem)
wmem=$(awk '{ print $3 }' /proc/sys/net/ipv4/tcp_wmem)
bound_kb=$(( (qmax * msg + (budget + WRITERS) * 2 * msg + 32 * 2 * 65536 +
	4 * (rmem + wmem) + 16 * MIB) / 1024 ))

sched_trace_start
sync
echo 1 >/proc/sys/vm/drop_caches
base=$(meminfo_kb)

bpids=() apids=()
for i in 1 2; do
	read_raw --host 127.0.0.3 pipe other.bin --length 65536 --depth 16 \
		--stop-file "$tmp/stop" --progress "$tmp/b$i.progress" >"$tmp/b$i.out" 2>&1 &
	bpids+=("$!")
	READ_PIDS+=("$!")
done
# (a start gate, not a check of the feature: two Python clients log in
# and read the file first, which took over 60 s on a host at load 12)
b_started() { test -s "$tmp/b1.progress" && test -s "$tmp/b2.progress"; }
vm_poll 180 b_started ||
	vm_fail "B's READs never started: $(cat "$tmp"/b*.out)"
for i in $(seq "$WRITERS"); do
	read_raw --host 127.0.0.2 pipe flood.bin --write --source "$tmp/src.bin" \
		--size "$SIZE" --length "$MIB" --depth 0 --credits 8192 --count "$WRITES" \
		>"$tmp/a$i.out" 2>&1 &
	apids+=("$!")
	READ_PIDS+=("$!")
done

# writing: some writer still runs
writing() {
	local p
	for p in "${apids[@]}"; do kill -0 "$p" 2>/dev/null && return 0; done
	return 1
}
max=0 maxq=0 peak=$base samples=0
while writing; do
	q=$(sched_client_field 1 queued)
	(( ${q:-0} > max )) && max=${q:-0}
	q=$(sched_proc queued)
	(( ${q:-0} > maxq )) && maxq=${q:-0}
	m=$(meminfo_kb)
	(( m > peak )) && peak=$m
	samples=$((samples + 1))
	sleep 0.3
done
for i in "${!apids[@]}"; do
	rc=0
	wait "${apids[$i]}" || rc=$?
	cat "$tmp/a$((i + 1)).out"
	vm_check "A$((i + 1)): $WRITES WRITEs of 1 MiB with all its credits, every reply right (exit $rc)" test "$rc" = 0
	out=$(sed -n 's/.*at most \([0-9]*\) outstanding.*/\1/p' "$tmp/a$((i + 1)).out")
	vm_check "A$((i + 1)) pipelined more than the cap (${out:-?} outstanding > $qmax)" \
		test "${out:-0}" -gt "$qmax"
done
touch "$tmp/stop"
for i in "${!bpids[@]}"; do
	rc=0
	wait "${bpids[$i]}" || rc=$?
	cat "$tmp/b$((i + 1)).out"
	vm_check "B$((i + 1)): READs during the flood all byte-exact (exit $rc)" test "$rc" = 0
done
sched_trace_sync

vm_check "the written file is byte-exact" \
	test "$(sched_sha "$SMB_SHARE_DIR/flood.bin")" = "$(sched_sha "$tmp/src.bin")"
vm_check "A's receiver was throttled: throttled $t0 -> $(sched_proc throttled)" \
	test "$(sched_proc throttled)" -gt "$t0"
vm_check "A never had more than $qmax requests waiting (the byte cap; max sampled $max of $samples samples)" \
	test "$max" -le "$qmax"
vm_check "never more than $((qmax + 32)) requests waiting in all (max sampled $maxq)" \
	test "$maxq" -le $((qmax + 32))
grow=$((peak - base))
vm_check "kernel memory grew by $grow kB (SUnreclaim + VmallocUsed), bound $bound_kb kB" \
	test "$grow" -le "$bound_kb"

# One jq pass over the dispatch events: contested bytes of A and B, B's
# READs and its longest wait.
read -r ab bb bn bwait < <(jq -s -r '[.[] | select(.event == "ksmbd_sched_dispatch")] |
	[.[] | select((.waited == 1 or .waited == true) and .clients >= 2)] as $c |
	[.[] | select(.class == 2 and .cmd == "READ")] as $b |
	"\([$c[] | select(.class == 1) | .bytes] | add // 0) \([$c[] | select(.class == 2) | .bytes] | add // 0) \($b | length) \([$b[] | .wait_ns] | max // 0)"' \
	"$SCHED_TRACE_JSON")
# B's waits are mostly its own: a READ at the end of its 32 waits for
# the ones ahead of it (printed, not asserted).
echo "contested bytes: A $ab, B $bb; B: $bn READs dispatched, longest wait $((bwait / 1000000)) ms"
vm_check "contested dispatches seen (A $ab, B $bb bytes)" test "$ab" -gt 0 -a "$bb" -gt 0
if (( ab + bb > 0 )); then
	# Deficit round robin gives B 50% while both stay backlogged;
	# measured 54.6% (38.7-41.5% before a client in debt stopped being
	# sparse again; B's Python clients share the 2 vCPUs with the flood
	# and are not always backlogged): asserted is that B is not
	# starved, at least half its share.
	bp=$(fair_permille "$bb" $((ab + bb)))
	vm_check "B keeps at least half its share of the contested bytes: $(fair_pct "$bp")% (DRR: 50%)" \
		test "$bp" -ge 250
fi
vm_check "back to 0: inflight, queued, clients, payloads" vm_poll 30 fair_idle
vm_check "the dispatcher was never bypassed" test "$(sched_proc bypass)" = 0

vm_finish
