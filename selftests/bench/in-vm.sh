#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The fairness benchmark, run inside the test VM by selftests/bench/run:
#   selftests/vm/run -t S selftests/bench/in-vm.sh [all|cost]
# A = nothing attached (ksmbd's flat path), B = the reference classifier
# attached with one client per host (::/0 -> 0 per-peer), in this boot.
# Raw numbers go to $SMB_RESULTS/raw.tsv, the tables to
# $SMB_RESULTS/bench-fairness.md.  BENCH_QUICK=1: a short smoke version.
# BENCH_B_INFLIGHT=N (1, 2, 4): B with that dispatch budget instead of the
# kernel's default.

set -uo pipefail
# shellcheck source=../vm/lib.sh
source "${VM_DIR:?run me inside the VM: selftests/vm/run $0}/lib.sh"
# shellcheck source=../vm/testlib-sched.sh
source "$VM_DIR/testlib-sched.sh"
# shellcheck source=../vm/testlib-fair.sh
source "$VM_DIR/testlib-fair.sh"
trap fair_cleanup EXIT

WHAT=${1:-all}
QUICK=${BENCH_QUICK:-0}
B_INFLIGHT=${BENCH_B_INFLIGHT:-0}
OUT=$SMB_RESULTS
RAW=$OUT/raw.tsv
MD=$OUT/bench-fairness.md
BURST=$VM_CHECKOUT/selftests/bench/.build/burst
M=$sched_tmp/m
: >"$RAW"

if (( QUICK )); then
	RUNS=1 R=5 KS="4 16" NS="1 4" SHARE_KS="8" SHARE_T=4 COST_RUNS=1 COST_T=4
else
	RUNS=3 R=8 KS="4 8 16 32" NS="1 2 4 8" SHARE_KS="4 16" SHARE_T=6 COST_RUNS=3 COST_T=6
fi
MAXK=32
for k in $KS; do MAXK=$k; done
MAXN=1
for n in $NS; do MAXN=$n; done

log() { echo "bench: $*" >&2; }
raw() { printf '%s\n' "$*" >>"$RAW"; }

# median / min / max of numbers on stdin: "MED MIN MAX" (or "- - -").
stats() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (!NR) { print "- - -"; exit }
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		print m, v[1], v[NR] }'
}
p50() { stats | cut -d' ' -f1; }

# ---- modes -------------------------------------------------------------------
umount_all() {
	local m
	while read -r _ m _; do
		[[ $m == "$M"/* ]] && umount "$m" 2>/dev/null
	done < <(tac /proc/mounts)
	return 0
}

# mode A|B [PREFIX ARGS; ...]: unmount, detach, attach for B with the map
# given as "CIDR CLASS [weight W] [per-peer]" strings (default per-host).
mode() {
	local m=$1 p
	shift
	umount_all
	smb-classify unload >/dev/null 2>&1
	[[ $m == A ]] && return 0
	if (( B_INFLIGHT )); then
		fair_load "$B_INFLIGHT"
	else
		smb-classify load >/dev/null
	fi
	(( $# )) || set -- "::/0 0 per-peer"
	for p in "$@"; do
		# shellcheck disable=SC2086
		smb-classify prefix add $p >/dev/null
	done
}

# mnt SRC NAME: mount from SRC at $M/NAME (its own connection).
mnt() {
	grep -q " $M/$2 " /proc/mounts && return 0
	fair_mount "$1" "$M/$2" || { log "mount from $1 failed"; exit 1; }
}

# movers_start K: 64 KiB readers at depth 16 on $M/mv1..K, returning once
# every one of them has reported completed reads (fio's status, every
# second); the burst client discards its first bursts too.
movers_start() {
	local j
	for (( j = 1; j <= $1; j++ )); do
		fio --name="mv$j" --thread --invalidate=0 --filename="$M/mv$j/big.bin" \
			--rw=randread --bs=64k --iodepth=16 --ioengine=libaio \
			--direct=1 --time_based --runtime=3600 --status-interval=1 \
			--output="$sched_tmp/mv$j.fio" >/dev/null 2>&1 &
		FAIR_PIDS+=($!)
	done
	vm_poll 300 movers_running "$1" || log "not all $1 movers running"
}
movers_running() {
	local j
	for (( j = 1; j <= $1; j++ )); do
		grep -q 'read: IOPS=[1-9]' "$sched_tmp/mv$j.fio" 2>/dev/null || return 1
	done
}
movers_stop() { fair_kill_all; }

# bursts NCLIENTS MNT_PREFIX: N burst clients at once, one per mount
# $M/MNT_PREFIX1.., R bursts each; prints every burst's completion (ms).
bursts() {
	local n=$1 pre=$2 c pids=()
	for (( c = 1; c <= n; c++ )); do
		"$BURST" "$M/$pre$c/small.bin" "$R" 32 4096 50 2 "$c" \
			>"$sched_tmp/burst.$c" &
		pids+=($!)
	done
	for c in "${pids[@]}"; do
		wait "$c" || log "burst client failed"
	done
	cat "$sched_tmp"/burst.[0-9]*
	rm -f "$sched_tmp"/burst.[0-9]*
}

# ---- (a) and (b): bursts against backlogged connections of one host --------
bench_bursts() {
	local md k n r j
	for md in A B; do
		log "bursts, mode $md"
		mode "$md"
		mnt 127.0.0.2 i1
		for (( j = 1; j <= MAXK; j++ )); do mnt 127.0.0.3 "mv$j"; done
		for (( j = 1; j <= MAXN; j++ )); do mnt "127.0.0.$((10 + j))" "n$j"; done
		for (( r = 1; r <= RUNS; r++ )); do
			raw "a $md 0 $(bursts 1 i | p50)"
		done
		for k in $KS; do
			movers_start "$k"
			for (( r = 1; r <= RUNS; r++ )); do
				raw "a $md $k $(bursts 1 i | p50)"
			done
			if [[ $k == 16 ]]; then
				for n in $NS; do
					for (( r = 1; r <= RUNS; r++ )); do
						raw "b $md $n $(bursts "$n" n | p50)"
					done
				done
			fi
			[[ $md == B ]] && raw "q B $k $(sched_proc queued)"
			movers_stop
			log "  K=$k done"
		done
	done
	# (b) needs K=16 in KS; quick mode runs it at its largest K instead.
	if ! [[ " $KS " == *" 16 "* ]]; then
		for md in A B; do
			mode "$md"
			mnt 127.0.0.2 i1
			for (( j = 1; j <= 16; j++ )); do mnt 127.0.0.3 "mv$j"; done
			for (( j = 1; j <= MAXN; j++ )); do mnt "127.0.0.$((10 + j))" "n$j"; done
			movers_start 16
			for n in $NS; do
				for (( r = 1; r <= RUNS; r++ )); do
					raw "b $md $n $(bursts "$n" n | p50)"
				done
			done
			movers_stop
		done
	fi
	umount_all
}

# ---- (c): shares of backlogged 64 KiB readers ---------------------------------
# share_run TAG MNT...: fio on every mount for SHARE_T s (after 2 s ramp);
# prints the first mount's share of all reads, per mille.
share_run() {
	local tag=$1 m i=0 total=0 first=0 n
	shift
	for m in "$@"; do
		i=$((i + 1))
		fio --name="s$i" --thread --invalidate=0 --filename="$M/$m/big.bin" \
			--rw=randread --bs=64k --iodepth=16 --ioengine=libaio \
			--direct=1 --time_based --runtime="$SHARE_T" --ramp_time=2 \
			--output-format=json --output="$sched_tmp/s$i.json" \
			>/dev/null 2>&1 &
	done
	wait
	for (( n = 1; n <= i; n++ )); do
		m=$(jq '.jobs[0].read.total_ios' "$sched_tmp/s$n.json" 2>/dev/null || echo 0)
		total=$((total + m))
		(( n == 1 )) && first=$m
	done
	(( total > 0 )) || { echo 0; return; }
	echo $(( (first * 1000 + total / 2) / total ))
}

bench_shares() {
	local k md r j map cust mv
	# S: one customer connection (127.0.0.2) against one host (127.0.0.3)
	# with K connections; B = per-host map.
	for k in $SHARE_KS; do
		for md in A B; do
			mode "$md"
			mnt 127.0.0.2 c1
			mv=()
			for (( j = 1; j <= k; j++ )); do mnt 127.0.0.3 "h$j"; mv+=("h$j"); done
			for (( r = 1; r <= RUNS; r++ )); do
				raw "s $md $k $(share_run s c1 "${mv[@]}")"
			done
		done
		log "  share K=$k done"
	done
	# M: three movers (127.0.0.20-22) x 4 connections, one customer
	# (127.0.0.30) x 1 connection; the customer's share under four maps.
	for map in A per-address one-class weights; do
		case $map in
		A) mode A ;;
		per-address) mode B ;;
		one-class) mode B "127.0.0.20/30 1" "::/0 0 per-peer" ;;
		weights) mode B "127.0.0.20/30 1" "127.0.0.30/32 2 weight 3" "::/0 0 per-peer" ;;
		esac
		mnt 127.0.0.30 cust
		mv=()
		for j in 20 21 22; do
			for cust in 1 2 3 4; do mnt "127.0.0.$j" "mv$j-$cust"; mv+=("mv$j-$cust"); done
		done
		for (( r = 1; r <= RUNS; r++ )); do
			raw "m $map 0 $(share_run m cust "${mv[@]}")"
		done
		log "  movers map $map done"
	done
	umount_all
}

# ---- (d): cost ----------------------------------------------------------------
# cost_run NCONN DEPTH: 4 KiB random reads, NCONN mounts (127.0.0.2..),
# one fio job each at DEPTH; total IOPS.
cost_run() {
	local n=$1 d=$2 i s=0 v
	for (( i = 1; i <= n; i++ )); do
		fio --name="c$i" --thread --invalidate=0 --filename="$M/k$i/small.bin" \
			--rw=randread --bs=4k --iodepth="$d" --ioengine=libaio \
			--direct=1 --time_based --runtime="$COST_T" --ramp_time=1 \
			--output-format=json --output="$sched_tmp/c$i.json" \
			>/dev/null 2>&1 &
	done
	wait
	for (( i = 1; i <= n; i++ )); do
		v=$(jq '.jobs[0].read.iops | floor' "$sched_tmp/c$i.json" 2>/dev/null || echo 0)
		s=$((s + v))
	done
	echo "$s"
}

bench_cost() {
	local r md cfg n d i
	for cfg in "1 32" "4 16"; do
		read -r n d <<<"$cfg"
		for (( r = 1; r <= COST_RUNS; r++ )); do
			for md in A B; do
				[[ $WHAT == cost && $md == B ]] && continue
				mode "$md"
				for (( i = 1; i <= n; i++ )); do mnt "127.0.0.$((1 + i))" "k$i"; done
				raw "d $md ${n}x$d $(cost_run "$n" "$d")"
			done
		done
		log "  cost ${n}x$d done"
	done
	umount_all
}

# ---- report -------------------------------------------------------------------
# cell KIND MODE KEY [SCALE]: "med (min-max)" of raw values
cell() {
	local s
	s=$(awk -v k="$1" -v m="$2" -v x="$3" '$1 == k && $2 == m && $3 == x { print $4 }' "$RAW" | stats)
	# shellcheck disable=SC2086
	set -- $s "${4:-1}"
	if [[ $1 == - ]]; then echo "-"; return; fi
	awk -v a="$1" -v b="$2" -v c="$3" -v s="$4" 'BEGIN {
		if (s == 1) printf "%.0f (%.0f-%.0f)", a, b, c
		else printf "%.1f (%.1f-%.1f)", a / s, b / s, c / s }'
}
med() {
	awk -v k="$1" -v m="$2" -v x="$3" '$1 == k && $2 == m && $3 == x { print $4 }' "$RAW" | p50
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.2f", a / b }'; }

report() {
	local k n md default_mi
	default_mi=$(( $(nproc) * 4 )); (( default_mi < 8 )) && default_mi=8
	{
	echo "# ksmbd BPF scheduling: fairness benchmark"
	echo
	echo "Kernel $(uname -r), $(nproc) CPU(s) seen by the guest (QEMU TCG), $(date -u +%F)."
	echo "Mode: $( ((QUICK)) && echo "BENCH_QUICK (smoke: 1 run, fewer cells)" || echo "full"); runs per cell: $RUNS; cells are median (min-max) over runs."
	echo
	echo "A = nothing attached (ksmbd's flat path: per-CPU ksmbd-io workqueue)."
	echo "B = reference classifier attached, one client per host (::/0 -> 0 per-peer)," \
		"dispatch budget $( ((B_INFLIGHT)) && echo "max_inflight=$B_INFLIGHT" || echo "kernel default (max_inflight=$default_mi on $(nproc) CPU)")."
	echo
	echo "How the server is the bottleneck: everything (cifs clients, fio, ksmbd) runs in"
	echo "one TCG guest on $(nproc) vCPU over loopback to tmpfs, so ksmbd's work items queue up;"
	echo "the backlogged movers are fio 64 KiB randread at depth 16 per connection"
	echo "(cifs cache=none, O_DIRECT, one TCP connection per mount via srcaddr + nosharesock)."
	echo "In B, requests beyond the budget wait in the dispatcher, which serves clients round-robin."
	echo "Clients and server share the CPU, so part of every number is client CPU time."
	echo
	echo "## (a) One interactive client against one host with K backlogged connections"
	echo
	echo "Interactive client: one process (selftests/bench/burst), bursts of 32 concurrent"
	echo "4 KiB O_DIRECT reads (Linux AIO) on its own mount from 127.0.0.2, 50 ms think time,"
	echo "$R bursts a run after 2 discarded; movers: K mounts from 127.0.0.3."
	echo "Burst completion p50, ms. Floor = the interactive client alone (K=0)."
	echo
	echo "| K | A | B | A/floor | B/floor |"
	echo "|---|---|---|---|---|"
	echo "| floor (alone) | $(cell a A 0) | $(cell a B 0) | 1 | 1 |"
	for k in $KS; do
		echo "| $k | $(cell a A "$k") | $(cell a B "$k") | $(ratio "$(med a A "$k")" "$(med a A 0)") | $(ratio "$(med a B "$k")" "$(med a B 0)") |"
	done
	echo
	echo "Target (seed 003): B's p50 at K=32 within 1.3x of the floor while A grows with K."
	echo
	echo "## (b) N interactive clients (127.0.0.11..) against K=16 backlogged connections"
	echo
	echo "All N burst clients at once, one process and one mount each; p50 over all their bursts, ms."
	echo
	echo "| N | A | B | A/B |"
	echo "|---|---|---|---|"
	for n in $NS; do
		echo "| $n | $(cell b A "$n") | $(cell b B "$n") | $(ratio "$(med b A "$n")" "$(med b B "$n")") |"
	done
	echo
	echo "## (c) Share of dispatches"
	echo
	echo "Completed 64 KiB reads over ${SHARE_T} s (after 2 s ramp), every client backlogged"
	echo "(fio depth 16 per connection); share of the first client, %."
	echo
	echo "One customer connection (127.0.0.2) vs one host (127.0.0.3) with K connections;"
	echo "B = per host. Fair: 50%."
	echo
	echo "| K | A | B (per host) |"
	echo "|---|---|---|"
	for k in $SHARE_KS; do
		echo "| $k | $(cell s A "$k" 10) | $(cell s B "$k" 10) |"
	done
	echo
	echo "Three movers (127.0.0.20-22, 4 connections each; the seed's six movers scaled down)"
	echo "vs one customer (127.0.0.30, 1 connection): the customer's share."
	echo
	echo "| map | prefixes | customer share % | fair |"
	echo "|---|---|---|---|"
	echo "| A | nothing attached | $(cell m A 0 10) | - |"
	echo "| per address | ::/0 -> 0 per-peer | $(cell m per-address 0 10) | 25.0 |"
	echo "| movers one class | 127.0.0.20/30 -> 1, ::/0 -> 0 per-peer | $(cell m one-class 0 10) | 50.0 |"
	echo "| weights 3:1 | as above + 127.0.0.30/32 -> 2 weight 3 | $(cell m weights 0 10) | 75.0 |"
	echo
	echo "Targets: 2-class share 50+-1%, weights 3:1 75+-2%."
	echo
	echo "## (d) Cost: 4 KiB random read IOPS"
	echo
	echo "fio 4 KiB randread, O_DIRECT, ${COST_T} s (after 1 s ramp), $COST_RUNS runs, A and B interleaved."
	echo
	echo "| connections x depth | A IOPS | B IOPS | B/A |"
	echo "|---|---|---|---|"
	for k in 1x32 4x16; do
		echo "| $k | $(cell d A "$k") | $(cell d B "$k") | $(ratio "$(med d B "$k")" "$(med d A "$k")") |"
	done
	echo
	echo "Target: B >= 0.99x A."
	if [[ -n $(awk '$1 == "q"' "$RAW") ]]; then
		echo
		echo "Requests waiting in B's dispatcher when the movers stopped (K: queued):" \
			"$(awk '$1 == "q" { printf "%s%s: %s", s, $3, $4; s = ", " }' "$RAW")."
	fi
	} >"$MD"
}

head -c 32M /dev/urandom >"$SMB_SHARE_DIR/big.bin"
head -c 8M /dev/urandom >"$SMB_SHARE_DIR/small.bin"
t0=$SECONDS
case $WHAT in
cost)
	bench_cost
	awk '$1 == "d"' "$RAW"
	exit 0 ;;
all)
	bench_bursts; log "bursts: $((SECONDS - t0)) s"
	bench_shares; log "shares: $((SECONDS - t0)) s"
	bench_cost; log "cost: $((SECONDS - t0)) s"
	report
	cat "$MD" ;;
*)
	echo "usage: $0 [all|cost]" >&2; exit 2 ;;
esac
