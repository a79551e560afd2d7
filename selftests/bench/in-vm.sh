#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The fairness benchmark, run inside the test VM by selftests/bench/run:
#   selftests/vm/run -t S selftests/bench/in-vm.sh [all|cost]
# A = nothing attached (ksmbd's flat path), B = the reference classifier
# attached, in this boot:
#   (a) one interactive client (bench/burst) vs K backlogged connections
#       of one host, B per host (::/0 -> 0 per-peer);
#   (b) N interactive clients vs K=16, same maps;
#   (c) shares of dispatches under the class maps of
#       Documentation/dispatch.rst, counted at the server: READs per
#       client of the ksmbd_sched_dispatch tracepoint (B), bytes sent per
#       peer address from the server's sockets (A and B);
#   (d) 4 KiB random READ IOPS, A vs B at max_inflight default/16/64/256;
#   (m) mixed sizes: a 1 MiB reader at depth 4 (127.0.0.40, class 1) and a
#       4 KiB reader at depth 32 (127.0.0.41, class 2): bytes per class at
#       the server, equal weights and 3:1 (the small reader weight 3),
#       and the small reader's IOPS alone and beside the big one, A and B
#       in the same boot;
#   (l) a lone client, A and B alternating: burst time, 4 KiB QD32 IOPS,
#       1 MiB QD4 throughput.
# Storage (BENCH_STORAGE): slowfs (the default: the FUSE storage model of
# selftests/vm/slowfs.c as the share, options BENCH_SLOWFS, so that the
# storage's service time and parallelism, not the clients' share of the
# vCPUs, make the server the bottleneck) or tmpfs (the old bench).  On
# slowfs B runs without SPLICE verdicts unless BENCH_SPLICE=on (see mode()).
# Every raw row ends with the host's 1-minute load before and after its
# run (lib.sh); a cell with a run above BENCH_QUIET_LOAD is marked "*".
# Every fio run is one fio process with one job per mount (starting fio
# costs seconds of CPU under TCG).  Raw numbers go to $SMB_RESULTS/raw.tsv,
# the tables to $SMB_RESULTS/bench-fairness.md.  BENCH_QUICK=1: a short
# smoke version.  BENCH_B_INFLIGHT=N: B of (a)-(c) with max_inflight N
# instead of the kernel's default.

set -uo pipefail
# report on the host: no SMB user there
[[ ${1:-} == report ]] && : "${SMB_USER:=-}" "${SMB_PASS:=-}"
# shellcheck source=../vm/lib.sh
source "${VM_DIR:?run me inside the VM: selftests/vm/run $0}/lib.sh"
# shellcheck source=../vm/testlib-sched.sh
source "$VM_DIR/testlib-sched.sh"
# shellcheck source=../vm/testlib-fair.sh
source "$VM_DIR/testlib-fair.sh"
# shellcheck source=../vm/testlib-slowfs.sh
source "$VM_DIR/testlib-slowfs.sh"
# shellcheck source=lib.sh
source "$VM_CHECKOUT/selftests/bench/lib.sh"
# "report" only reads raw.tsv (it also runs on the host, with the BENCH_*
# of the run: VM_DIR=$PWD/selftests/vm VM_CHECKOUT=$PWD SMB_RESULTS=DIR
# selftests/bench/in-vm.sh report): nothing to clean up then.
[[ ${1:-} == report ]] || trap 'fair_cleanup; slowfs_share_stop' EXIT

WHAT=${1:-all}
QUICK=${BENCH_QUICK:-0}
STORAGE=${BENCH_STORAGE:-slowfs}
# The storage model: 10 ms +- 50% a request, two requests in service at
# once (with four, a loaded 2-CPU host's TCG guest ran out of CPU before
# the storage was busy: 138 IOPS at depth 16 against a capacity of 400).
SLOWFS_OPTS=${BENCH_SLOWFS:---service-ms 10 --jitter-pct 50 --parallel 2}
QUIET_LOAD=${BENCH_QUIET_LOAD:-3}
SPLICE=${BENCH_SPLICE:-off}
B_INFLIGHT=${BENCH_B_INFLIGHT:-0}
OUT=$SMB_RESULTS
RAW=$OUT/raw.tsv
MD=$OUT/bench-fairness.md
BURST=$VM_CHECKOUT/selftests/bench/.build/burst
M=$sched_tmp/m
[[ $WHAT == report ]] || : >"$RAW"

# RUNS repetitions of every cell; R bursts per run (after 1 discarded).
# MOVERS x MCONNS: the movers of (c); CUSTS: its customers, one
# connection each at depth CUST_QD (BENCH_CUST_QD, default 128: deeper
# than a mover's 16, so that a customer stays backlogged at the server
# although its client threads get only their CFS share of the vCPUs).
if (( QUICK )); then
	RUNS=1 R=4 KS="16" NS="4" SHARE_T=3
	MOVERS="16 17 18 19 20 21" MCONNS=1 CUSTS="32 33"
	COST_RUNS=1 COST_T=3 COST_CFGS="4x16" BUDGETS="0 64"
	MIX_RUNS=1 MIX_T=4 LONE_RUNS=1 LONE_T=3 MIX_MAPS="A B B3 Bs B3s"
else
	RUNS=3 R=5 KS="4 8 16 32" NS="1 2 4 8" SHARE_T=4
	MOVERS="16 17 18 19 20 21" MCONNS=2 CUSTS="32 33 34 35"
	COST_RUNS=3 COST_T=4 COST_CFGS="1x32 4x16" BUDGETS="0 16 64 256"
	MIX_RUNS=3 MIX_T=8 LONE_RUNS=3 LONE_T=5 MIX_MAPS="A B B3 Bs B3s"
fi
CUST_QD=${BENCH_CUST_QD:-128}
# BENCH_KS, BENCH_NS: other K (movers) and N (burst clients) lists for (a), (b)
KS=${BENCH_KS:-$KS} NS=${BENCH_NS:-$NS}
# (m)'s small budget: the storage's parallelism (2 on tmpfs)
MIX_INFLIGHT=$(sed -n 's/.*--parallel[ =]\([0-9][0-9]*\).*/\1/p' <<<"$SLOWFS_OPTS")
MIX_INFLIGHT=${MIX_INFLIGHT:-2}
NMOVERS=$(wc -w <<<"$MOVERS")
NCUSTS=$(wc -w <<<"$CUSTS")
MAXK=32
for k in $KS; do MAXK=$k; done
MAXN=1
for n in $NS; do MAXN=$n; done

log() { echo "bench: $* ($((SECONDS - t0)) s)" >&2; }
# raw ROW HOST_LOAD_BEFORE: a raw row, the host's load before and after
# its run appended (the last two columns of every measured row).
raw() { printf '%s %s %s\n' "$1" "${2:--}" "$(bench_load_host)" >>"$RAW"; }
# rawi ROW: a row that is no measurement (no loads).
rawi() { printf '%s\n' "$*" >>"$RAW"; }

# median / min / max of numbers on stdin: "MED MIN MAX" (or "- - -").
stats() { bench_stats; }
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
# Connections are classified when they are made: every mode change
# remounts.
mode() {
	local m=$1 p
	shift
	umount_all
	smb-classify unload >/dev/null 2>&1
	[[ $m == A ]] && return 0
	if (( B_INFLIGHT )); then
		smb-classify load max-inflight "$B_INFLIGHT" >/dev/null
	else
		smb-classify load >/dev/null
	fi
	(( $# )) || set -- "::/0 0 per-peer"
	for p in "$@"; do
		# shellcheck disable=SC2086
		smb-classify prefix add $p >/dev/null
	done
	# On slowfs, no SPLICE verdicts (BENCH_SPLICE=on keeps the policy's
	# default, splice-min 64K): ksmbd's zero-copy READ reads the file
	# through its page cache (filemap_splice_read, also for a FUSE
	# direct_io file), so B's READs of 64 KiB and more would be served
	# from pages cached while fio keeps the file open and bypass the
	# storage model (measured 1 December: a 1 MiB READ became 8 storage
	# reads of 128 KiB, and B's 1 MiB reader ran at 150-220 MiB/s against
	# a storage capacity of 200 requests/s).
	if [[ $STORAGE == slowfs && $SPLICE != on ]]; then
		slowfs_no_splice 0 1 2
	fi
}

# mnt SRC NAME: mount from SRC at $M/NAME (its own connection).
mnt() {
	grep -q " $M/$2 " /proc/mounts && return 0
	fair_mount "$1" "$M/$2" || { log "mount from $1 failed"; exit 1; }
}

# bg_fio FILE NAME... : one fio process, one 64 KiB depth-16 randread job
# per mount $M/NAME, running until killed, status every second in
# $sched_tmp/bg.fio; returns once every job has completed reads in the
# latest status report.
bg_fio() {
	local file=$1 n jobs=()
	shift
	for n in "$@"; do
		jobs+=(--name="$n" --filename="$M/$n/$file")
		[[ $n == cu* ]] && jobs+=(--iodepth="$CUST_QD")
	done
	rm -f "$sched_tmp/bg.fio"
	fio --thread --invalidate=0 --rw=randread --bs=64k --iodepth=16 \
		--ioengine=libaio --direct=1 --time_based --runtime=3600 \
		--status-interval=1 --output="$sched_tmp/bg.fio" "${jobs[@]}" \
		>/dev/null 2>&1 &
	FAIR_PIDS+=($!)
	vm_poll 300 bg_running "$1" "$#" || log "not all $# jobs of fio running"
}
# bg_running FIRST_JOB N: the last complete status report (from the last
# "FIRST_JOB: (groupid" line on) shows N jobs with reads.
bg_running() {
	local n
	n=$(awk -v j="$1: (groupid" 'index($0, j) == 1 { c = 0 }
		/read: IOPS=[1-9]/ { c++ } END { print c + 0 }' "$sched_tmp/bg.fio" 2>/dev/null)
	(( n >= $2 ))
}
bg_stop() { fair_kill_all; }

# ---- (a) and (b): bursts against backlogged connections of one host --------
# bursts NCLIENTS MNT_PREFIX: N burst clients at once, one per mount
# $M/MNT_PREFIX1.., R bursts each; prints every burst's completion (ms).
bursts() {
	local n=$1 pre=$2 c pids=()
	for (( c = 1; c <= n; c++ )); do
		"$BURST" "$M/$pre$c/small.bin" "$R" 32 4096 50 1 "$c" \
			>"$sched_tmp/burst.$c" &
		pids+=($!)
	done
	for c in "${pids[@]}"; do
		wait "$c" || log "burst client failed"
	done
	cat "$sched_tmp"/burst.[0-9]*
	rm -f "$sched_tmp"/burst.[0-9]*
}

bench_bursts() {
	local md k n r j mv hb
	for md in A B; do
		log "bursts, mode $md"
		mode "$md"
		mnt 127.0.0.2 i1
		for (( j = 1; j <= MAXK; j++ )); do mnt 127.0.0.3 "mv$j"; done
		for (( j = 1; j <= MAXN; j++ )); do mnt "127.0.0.$((10 + j))" "n$j"; done
		for (( r = 1; r <= RUNS; r++ )); do
			hb=$(bench_load_host)
			raw "a $md 0 $(bursts 1 i | p50)" "$hb"
		done
		for k in $KS; do
			mv=()
			for (( j = 1; j <= k; j++ )); do mv+=("mv$j"); done
			bg_fio big.bin "${mv[@]}"
			for (( r = 1; r <= RUNS; r++ )); do
				hb=$(bench_load_host)
				raw "a $md $k $(bursts 1 i | p50)" "$hb"
			done
			if [[ $k == 16 ]]; then
				for n in $NS; do
					for (( r = 1; r <= RUNS; r++ )); do
						hb=$(bench_load_host)
						raw "b $md $n $(bursts "$n" n | p50)" "$hb"
					done
				done
			fi
			[[ $md == B ]] && rawi "q B $k $(sched_proc queued)" &&
				rawi "mi B $k $(sched_proc max_inflight)"
			bg_stop
			log "  K=$k done"
		done
	done
	umount_all
}

# ---- (c): shares of dispatches under the documented class maps ---------------
# Six movers (127.0.0.16-21, MCONNS connections each) and up to four
# customers (127.0.0.32-35, one connection each), all backlogged (fio
# 64 KiB randread, depth 16 per connection).  Per window of SHARE_T s:
#   server dispatch share (B): READs of the customers' clients among all
#     READs of the ksmbd_sched_dispatch tracepoint in the window;
#   server bytes share (A and B): bytes sent by port 445 to the customers'
#     addresses among all (tcp_info bytes_sent deltas, ss -ti).

# bytes_by_peer: "ADDR BYTES_SENT" for each server socket (port 445).
bytes_by_peer() {
	ss -tinH state established '( sport = :445 )' | awk '
		/:445[ \t]/ { for (i = 1; i <= NF; i++) if ($i ~ /:445$/) { p = $(i + 1); break }
			sub(/:[0-9]+$/, "", p); sub(/^\[::ffff:/, "", p); sub(/^::ffff:/, "", p); sub(/\]$/, "", p); next }
		{ for (i = 1; i <= NF; i++) if ($i ~ /^bytes_sent:/) { split($i, a, ":"); s[p] += a[2] } }
		END { for (p in s) print p, s[p] }'
}

# share_window CUST_RE CLIENT_RE: one window; prints "DISPATCH_PERMILLE
# BYTES_PERMILLE DISPATCHES" ("-" for the dispatch share in A).
# CUST_RE matches the customers' addresses (bytes), CLIENT_RE the
# customers' clients as the tracepoint prints client= (CLASS/PEER; jq
# regex over the loader's decoded events).
share_window() {
	local cre=$1 kre=$2 b0 b1 d
	b0=$(bytes_by_peer)
	sched_trace_clear
	sleep "$SHARE_T"
	sched_trace_sync
	b1=$(bytes_by_peer)
	d=$(sched_events ksmbd_sched_dispatch '.cmd == "READ"' |
		jq -rs --arg re "$kre" 'length as $n | map(select("\(.class)/\(.peer)" | test($re))) | length as $k |
			if $n > 0 then "\($k * 1000 / $n | round) \($n)" else "- 0" end')
	awk -v re="$cre" -v d="$d" '
		FNR == NR { a[$1] = $2; next }
		{ x = $2 - a[$1]; if (x < 0) x = 0; t += x; if ($1 ~ re) c += x }
		END { split(d, D, " "); printf "%s %s %s\n", D[1], t ? sprintf("%.0f", c * 1000 / t) : "-", D[2] }' \
		<(echo "$b0") <(echo "$b1")
}

# share_case MAP NCUST CUST_RE CLIENT_RE: with the map's mounts in place,
# movers + the first NCUST customers backlogged, RUNS windows; raw rows
# "c MAP NCUST DISPATCH BYTES DISPATCHES".
share_case() {
	local map=$1 nc=$2 cre=$3 kre=$4 j c r jobs=() res hb
	for j in $MOVERS; do
		for (( c = 1; c <= MCONNS; c++ )); do jobs+=("mv$j-$c"); done
	done
	c=0
	for j in $CUSTS; do
		(( c++ < nc )) && jobs+=("cu$j")
	done
	bg_fio big.bin "${jobs[@]}"
	log "    $map/$nc: ${#jobs[@]} jobs running"
	sleep 1
	for (( r = 1; r <= RUNS; r++ )); do
		hb=$(bench_load_host)
		res=$(share_window "$cre" "$kre")
		raw "c $map $nc $res" "$hb"
	done
	[[ $map != A ]] && rawi "cq $map $nc $(sched_proc queued) $(sched_proc max_inflight)"
	bg_stop
}

bench_shares() {
	local map j c
	sched_trace_only ksmbd_sched_dispatch
	for map in A per-address one-class weights; do
		case $map in
		A) mode A ;;
		per-address) mode B "::/0 0 per-peer" ;;
		one-class) mode B "::/0 0 per-peer" "127.0.0.16/29 1" ;;
		# Documentation's map 3 (class 1 weight 3 vs class 2) with the
		# customers as class 1 and the movers as class 2.
		weights) mode B "127.0.0.32/30 1 weight 3" "127.0.0.16/29 2" ;;
		esac
		for j in $MOVERS; do
			for (( c = 1; c <= MCONNS; c++ )); do mnt "127.0.0.$j" "mv$j-$c"; done
		done
		for j in $CUSTS; do mnt "127.0.0.$j" "cu$j"; done
		log "    map $map: mounted"
		case $map in
		weights)
			# class 1 (the customers, one client) vs class 2.
			share_case "$map" "$NCUSTS" '^127\.0\.0\.3[2-5]$' '^1/' ;;
		*)
			share_case "$map" 1 '^127\.0\.0\.32$' '127\.0\.0\.32$'
			share_case "$map" "$NCUSTS" '^127\.0\.0\.3[2-5]$' '127\.0\.0\.3[2-5]$' ;;
		esac
		log "  shares, map $map done"
	done
	sched_trace_stop
	umount_all
}

# ---- (d): cost ----------------------------------------------------------------
# cost_run NCONN DEPTH: 4 KiB random reads, NCONN mounts (127.0.0.2..),
# one fio process with one job each at DEPTH; total IOPS.
cost_run() {
	local n=$1 d=$2 i jobs=()
	for (( i = 1; i <= n; i++ )); do
		jobs+=(--name="c$i" --filename="$M/k$i/small.bin")
	done
	fio --thread --invalidate=0 --rw=randread --bs=4k --iodepth="$d" \
		--ioengine=libaio --direct=1 --time_based --runtime="$COST_T" \
		--ramp_time=1 --output-format=json --output="$sched_tmp/c.json" \
		"${jobs[@]}" >/dev/null 2>&1
	jq '[.jobs[].read.iops] | add | floor' "$sched_tmp/c.json" 2>/dev/null || echo 0
}

# A, then B loaded once and its budget switched with 'replace' (no
# remount: the budget applies at once); the budget order rotates per run.
bench_cost() {
	local r cfg n d i b bs hb
	for cfg in $COST_CFGS; do
		n=${cfg%x*} d=${cfg#*x}
		for (( r = 1; r <= COST_RUNS; r++ )); do
			mode A
			for (( i = 1; i <= n; i++ )); do mnt "127.0.0.$((1 + i))" "k$i"; done
			hb=$(bench_load_host)
			raw "d A $cfg $(cost_run "$n" "$d")" "$hb"
			[[ $WHAT == cost ]] && continue
			umount_all
			smb-classify load >/dev/null
			smb-classify prefix add ::/0 0 per-peer >/dev/null
			for (( i = 1; i <= n; i++ )); do mnt "127.0.0.$((1 + i))" "k$i"; done
			# rotate: run r starts at budget r
			bs=$(awk -v r="$r" '{ for (i = 0; i < NF; i++) printf "%s ", $((i + r - 1) % NF + 1) }' <<<"$BUDGETS")
			for b in $bs; do
				smb-classify replace max-inflight "$b" >/dev/null
				hb=$(bench_load_host)
				raw "d B$b $cfg $(cost_run "$n" "$d")" "$hb"
				rawi "dm B$b $cfg $(sched_proc max_inflight)"
			done
		done
		log "  cost ${n}x$d done"
	done
	umount_all
}

# ---- (m): mixed sizes --------------------------------------------------------
# The big reader: one mount from 127.0.0.40, fio 1 MiB randread at depth
# 4; the small reader: one mount from 127.0.0.41, 4 KiB at depth 32.
# Maps: A nothing attached; B 127.0.0.40/32 -> 1, 127.0.0.41/32 -> 2
# (equal weights: 50% of the bytes each); B3 the same with class 2
# weight 3 (75% of the bytes for the small reader); Bs and B3s the same
# with the budget set to the storage's parallelism (MIX_INFLIGHT, from
# --parallel): with the default budget (32) the 36 requests of the two
# readers are nearly all admitted, and their order is decided below the
# dispatcher (the CPUs' run queues, the storage's FIFO).  Per run: the small
# reader alone (IOPS), the big reader alone (MiB/s), then the big one
# backlogged in the background and the small one beside it, the bytes the
# server sent to each (tcp_info bytes_sent, A and B) and dispatched per
# class (/proc/net/ksmbd_sched, B) over the small reader's run.
# mix_fio NAME FILE BS QD [T]: one time-based fio job on $M/NAME (1 s
# ramp), prints "IOPS KiB/s".
mix_fio() {
	fio --name=x --thread --invalidate=0 --filename="$M/$1/$2" --rw=randread \
		--bs="$3" --iodepth="$4" --ioengine=libaio --direct=1 --time_based \
		--runtime="${5:-$MIX_T}" --ramp_time=1 --output-format=json \
		--output="$sched_tmp/mix.json" >/dev/null 2>&1
	jq -r '.jobs[0].read | "\(.iops | floor) \(.bw)"' "$sched_tmp/mix.json" 2>/dev/null || echo "0 0"
}
# class_bytes ID: bytes dispatched for class ID (0 when nothing attached).
class_bytes() { if [[ $(sched_proc attached) == 1 ]]; then fair_class_field "$1" bytes; else echo 0; fi; }

bench_mixed() {
	local map r hb b0 b1 c10 c20 res big small
	for map in $MIX_MAPS; do
		case $map in
		A) mode A ;;
		B) mode B "127.0.0.40/32 1" "127.0.0.41/32 2" ;;
		B3) mode B "127.0.0.40/32 1" "127.0.0.41/32 2 weight 3" ;;
		Bs) B_INFLIGHT=$MIX_INFLIGHT mode B "127.0.0.40/32 1" "127.0.0.41/32 2" ;;
		B3s) B_INFLIGHT=$MIX_INFLIGHT mode B "127.0.0.40/32 1" "127.0.0.41/32 2 weight 3" ;;
		esac
		mnt 127.0.0.40 big
		mnt 127.0.0.41 small
		for (( r = 1; r <= MIX_RUNS; r++ )); do
			hb=$(bench_load_host)
			raw "ma $map small $(mix_fio small small.bin 4k 32)" "$hb"
			hb=$(bench_load_host)
			raw "mb $map big $(mix_fio big big.bin 1m 4)" "$hb"
			fio --name=big --thread --invalidate=0 --filename="$M/big/big.bin" \
				--rw=randread --bs=1m --iodepth=4 --ioengine=libaio --direct=1 \
				--time_based --runtime=3600 --status-interval=1 \
				--output="$sched_tmp/bg.fio" >/dev/null 2>&1 &
			FAIR_PIDS+=($!)
			vm_poll 120 bg_running big 1 || log "the big reader is not reading"
			hb=$(bench_load_host)
			b0=$(bytes_by_peer) c10=$(class_bytes 1) c20=$(class_bytes 2)
			res=$(mix_fio small small.bin 4k 32)
			b1=$(bytes_by_peer)
			big=$(awk 'FNR == NR { a[$1] = $2; next } $1 == "127.0.0.40" { print $2 - a[$1] }' <(echo "$b0") <(echo "$b1"))
			small=$(awk 'FNR == NR { a[$1] = $2; next } $1 == "127.0.0.41" { print $2 - a[$1] }' <(echo "$b0") <(echo "$b1"))
			# m MAP mixed SMALL_IOPS SMALL_KiBs SENT_BIG SENT_SMALL DISP_BIG DISP_SMALL
			raw "m $map mixed $res ${big:-0} ${small:-0} $(( $(class_bytes 1) - c10 )) $(( $(class_bytes 2) - c20 ))" "$hb"
			bg_stop
		done
		log "  mixed, map $map done"
	done
	umount_all
}

# ---- (l): a lone client -------------------------------------------------------
# One client (127.0.0.2), A and B alternating (the first mode rotates per
# run): the burst client's p50, fio 4 KiB QD32 IOPS, 1 MiB QD4 KiB/s.
bench_lone() {
	local r md mds hb
	for (( r = 1; r <= LONE_RUNS; r++ )); do
		mds="A B"
		(( r % 2 )) || mds="B A"
		for md in $mds; do
			mode "$md"
			mnt 127.0.0.2 i1
			hb=$(bench_load_host)
			raw "l $md burst $(bursts 1 i | p50)" "$hb"
			hb=$(bench_load_host)
			raw "l $md iops4k $(mix_fio i1 small.bin 4k 32 "$LONE_T" | cut -d' ' -f1)" "$hb"
			hb=$(bench_load_host)
			raw "l $md bw1m $(mix_fio i1 big.bin 1m 4 "$LONE_T" | cut -d' ' -f2)" "$hb"
		done
	done
	umount_all
}

# storage_mark PART: slowfs's service time so far (for its utilization).
storage_mark() {
	[[ $STORAGE == slowfs ]] || return 0
	rawi "u $1 $(slowfs_stat service_ns) ${EPOCHREALTIME/./} $(slowfs_stat parallel) $(slowfs_stat reads)"
}

# ---- report -------------------------------------------------------------------
# vals KIND MODE KEY [COL]: the raw values of column COL (default 4)
vals() { awk -v k="$1" -v m="$2" -v x="$3" -v c="${4:-4}" '$1 == k && $2 == m && $3 == x && $c != "-" { print $c }' "$RAW"; }
# dist KIND MODE KEY: "*" when a run of the cell had the host's load
# (the last two columns of its rows) above QUIET_LOAD.
dist() {
	awk -v k="$1" -v m="$2" -v x="$3" -v q="$QUIET_LOAD" '$1 == k && $2 == m && $3 == x &&
		(($(NF - 1) != "-" && $(NF - 1) > q) || ($NF != "-" && $NF > q)) { d = 1 }
		END { if (d) printf "*" }' "$RAW"
}
# cell KIND MODE KEY [SCALE] [COL]: "med (min-max)" of raw values, "*"
# when disturbed
cell() {
	local s d
	s=$(vals "$1" "$2" "$3" "${5:-4}" | stats)
	d=$(dist "$1" "$2" "$3")
	# shellcheck disable=SC2086
	set -- $s "${4:-1}"
	if [[ $1 == - ]]; then echo "-"; return; fi
	awk -v a="$1" -v b="$2" -v c="$3" -v s="$4" -v d="$d" 'BEGIN {
		if (s == 1) printf "%.0f (%.0f-%.0f)%s", a, b, c, d
		else printf "%.1f (%.1f-%.1f)%s", a / s, b / s, c / s, d }'
}
# share KIND MODE KEY COL_A COL_B: "med (min-max)" over rows of the percent
# COL_A / (COL_A + COL_B), "*" when disturbed.
share() {
	local s d
	d=$(dist "$1" "$2" "$3")
	s=$(awk -v k="$1" -v m="$2" -v x="$3" -v a="$4" -v b="$5" '$1 == k && $2 == m && $3 == x &&
		$a + $b > 0 { printf "%.1f\n", 100 * $a / ($a + $b) }' "$RAW" | stats)
	# shellcheck disable=SC2086
	set -- $s
	[[ $1 == - ]] && { echo "-"; return; }
	echo "$1 ($2-$3)$d"
}
# shares_med KIND MODE KEY COL_A COL_B: just the median percent.
shares_med() {
	awk -v k="$1" -v m="$2" -v x="$3" -v a="$4" -v b="$5" '$1 == k && $2 == m && $3 == x &&
		$a + $b > 0 { printf "%.1f\n", 100 * $a / ($a + $b) }' "$RAW" | p50
}
# spread_ok KIND KEY: B's median within A's min-max or A's within B's
# (equal within the run-to-run spread): yes/no.
spread_ok() {
	local a b
	a=$(vals "$1" A "$2" | stats) b=$(vals "$1" B "$2" | stats)
	awk -v a="$a" -v b="$b" 'BEGIN { split(a, A, " "); split(b, B, " ");
		if (A[1] == "-" || B[1] == "-") { print "-"; exit }
		print ((B[1] >= A[2] && B[1] <= A[3]) || (A[1] >= B[2] && A[1] <= B[3])) ? "yes" : "no" }'
}
med() { vals "$1" "$2" "$3" "${4:-4}" | p50; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || a == "-" || b == "-" || b == 0) print "-"; else printf "%.2f", a / b }'; }
# within VALUE WANT TOL: met/missed
within() { awk -v v="$1" -v w="$2" -v t="$3" 'BEGIN { if (v == "" || v == "-") print "-"; else print (v - w <= t && w - v <= t) ? "met" : "missed" }'; }

report() {
	local k n b default_mi
	default_mi=$(awk '$1 == "dm" && $2 == "B0" { print $4; exit }' "$RAW")
	{
	echo "# ksmbd BPF scheduling: fairness benchmark"
	echo
	echo "Kernel $(uname -r), $(nproc) vCPU(s) seen by the guest (QEMU TCG), $(date -u +%F)."
	echo "Mode: $( ((QUICK)) && echo "BENCH_QUICK (smoke: 1 run, fewer cells)" || echo "full"); runs per cell: $RUNS; cells are median (min-max) over runs."
	echo
	echo "A = nothing attached (ksmbd's flat path: per-CPU ksmbd-io workqueue)."
	echo "B = reference classifier attached; (a), (b): one client per host (::/0 -> 0 per-peer);" \
		"dispatch budget $( ((B_INFLIGHT)) && echo "max_inflight=$B_INFLIGHT" || echo "kernel default (max_inflight 0: adaptive, Documentation/dispatch.rst \"The budget\")")."
	echo
	if [[ $STORAGE == slowfs ]]; then
		echo "How the server is the bottleneck: the share is the storage model slowfs"
		echo "(selftests/vm/slowfs.c: $SLOWFS_OPTS; direct_io, so no page cache in front"
		echo "of it): every READ waits for a storage slot in FIFO order and takes its service"
		echo "time, so the order in which the server hands requests to the storage decides who"
		echo "is served. Busy share of the storage's slots per part (service time / (slots x"
		echo "wall time); 100% = saturated): $(storage_util)."
		echo "B's SPLICE verdicts: $( [[ $SPLICE == on ]] && echo "the policy's default (READs of 64 KiB and more zero-copy: through the page cache, bypassing the model)" || echo "off for classes 0-2 (BENCH_SPLICE=off: zero-copy READ reads through the page cache and would bypass the model)")."
		echo "Clients and server still share the guest's $(nproc) vCPUs (TCG, loopback; cifs"
		echo "cache=none, O_DIRECT, one TCP connection per mount via srcaddr + nosharesock)."
	else
		echo "How the server is the bottleneck: everything (cifs clients, fio, ksmbd) runs in"
		echo "one TCG guest on $(nproc) vCPUs over loopback to a tmpfs share, so ksmbd's work items"
		echo "queue up behind CPU; the backlogged movers are fio 64 KiB randread at depth 16 per"
		echo "connection (cifs cache=none, O_DIRECT, one TCP connection per mount via srcaddr +"
		echo "nosharesock). In B, requests beyond the budget wait in the dispatcher, which serves"
		echo "clients round-robin. Clients and server share the vCPUs: part of every number is"
		echo "client CPU time."
	fi
	echo
	echo "Host load: the host's 1-minute load average before and after every run is in"
	echo "raw.tsv (last two columns); a cell marked * had a run with it above $QUIET_LOAD"
	echo "(disturbed: another process took CPU from the guest). Host load over the whole"
	echo "run: $(awk '$1 ~ /^(a|b|c|d|m|ma|mb|l)$/ { print $(NF - 1); print $NF }' "$RAW" | grep -v -- - | stats | awk '{ print "median " $1 ", min " $2 ", max " $3 }')."
	echo
	echo "## (a) One interactive client against one host with K backlogged connections"
	echo
	echo "Interactive client: one process (selftests/bench/burst), bursts of 32 concurrent"
	echo "4 KiB O_DIRECT reads (Linux AIO) on its own mount from 127.0.0.2, 50 ms think time,"
	echo "$R bursts a run after 1 discarded; movers: K mounts from 127.0.0.3."
	echo "Burst completion p50 of a run, ms. Floor = the interactive client alone (K=0)."
	echo
	echo "| K | A | B | A/floor | B/floor(B) | B/floor(A) |"
	echo "|---|---|---|---|---|---|"
	echo "| floor (alone) | $(cell a A 0) | $(cell a B 0) | 1 | 1 | $(ratio "$(med a B 0)" "$(med a A 0)") |"
	for k in $KS; do
		echo "| $k | $(cell a A "$k") | $(cell a B "$k") | $(ratio "$(med a A "$k")" "$(med a A 0)") | $(ratio "$(med a B "$k")" "$(med a B 0)") | $(ratio "$(med a B "$k")" "$(med a A 0)") |"
	done
	echo
	echo "Target: B's p50 at K=$MAXK within 1.3x of stock ksmbd's floor (A alone)" \
		"while A grows with K: $(awk -v b="$(ratio "$(med a B "$MAXK")" "$(med a A 0)")" 'BEGIN { if (b == "-") print "-"; else print (b <= 1.3 ? "met" : "missed") " (" b "x)" }')."
	echo
	echo "## (b) N interactive clients (127.0.0.11..) against K=16 backlogged connections"
	echo
	echo "All N burst clients at once, one process and one mount each; p50 over all their bursts of a run, ms."
	echo
	echo "| N | A | B | A/B |"
	echo "|---|---|---|---|"
	for n in $NS; do
		echo "| $n | $(cell b A "$n") | $(cell b B "$n") | $(ratio "$(med b A "$n")" "$(med b B "$n")") |"
	done
	echo
	echo "## (c) Shares under the class maps of Documentation/dispatch.rst"
	echo
	echo "$NMOVERS movers (127.0.0.16-21, $MCONNS connection(s) each) and customers (127.0.0.32-35,"
	echo "one connection each), every connection backlogged (fio 64 KiB randread, depth 16 per"
	echo "mover connection, $CUST_QD per customer connection)."
	echo "Windows of ${SHARE_T} s. Dispatch share = READs dispatched for the customers' clients"
	echo "among all READs dispatched (ksmbd_sched_dispatch tracepoint, at the server);"
	echo "bytes share = bytes the server sent to the customers' addresses (tcp_info bytes_sent)."
	echo "Percent, median (min-max) over $RUNS windows."
	echo
	echo "| map | prefixes | case | expected | dispatch share % | bytes share % | target |"
	echo "|---|---|---|---|---|---|---|"
	local e1 e4
	e1=$(awk -v n="$NMOVERS" 'BEGIN { printf "%.1f", 100 / (n + 1) }')
	e4=$(awk -v n="$NMOVERS" -v c="$NCUSTS" 'BEGIN { printf "%.1f", 100 * c / (n + c) }')
	echo "| flat | nothing attached | 1 customer | by requests outstanding: $(awk -v n="$((NMOVERS * MCONNS * 16))" -v q="$CUST_QD" 'BEGIN { printf "%.1f", 100 * q / (n + q) }') | - | $(cell c A 1 10 5) | - |"
	echo "| flat | nothing attached | $NCUSTS customers | by requests outstanding: $(awk -v n="$((NMOVERS * MCONNS * 16))" -v q="$((NCUSTS * CUST_QD))" 'BEGIN { printf "%.1f", 100 * q / (n + q) }') | - | $(cell c A "$NCUSTS" 10 5) | - |"
	echo "| 1. per address | ::/0 -> 0 per-peer | 1 customer | $e1 | $(cell c per-address 1 10) | $(cell c per-address 1 10 5) | - |"
	echo "| 1. per address | ::/0 -> 0 per-peer | $NCUSTS customers together | $e4 | $(cell c per-address "$NCUSTS" 10) | $(cell c per-address "$NCUSTS" 10 5) | - |"
	echo "| 2. movers one class | + 127.0.0.16/29 -> 1 | 1 customer (2 classes) | 50.0 | $(cell c one-class 1 10) | $(cell c one-class 1 10 5) | 50+-1: $(within "$(med c one-class 1)" 500 10) |"
	echo "| 2. movers one class | + 127.0.0.16/29 -> 1 | $NCUSTS customers together | $(awk -v c="$NCUSTS" 'BEGIN { printf "%.1f", 100 * c / (c + 1) }') | $(cell c one-class "$NCUSTS" 10) | $(cell c one-class "$NCUSTS" 10 5) | - |"
	echo "| 3. weights 3:1 | 127.0.0.32/30 -> 1 weight 3, 127.0.0.16/29 -> 2 | class 1 ($NCUSTS conns) vs class 2 (movers) | 75.0 | $(cell c weights "$NCUSTS" 10) | $(cell c weights "$NCUSTS" 10 5) | 75+-2: $(within "$(med c weights "$NCUSTS")" 750 20) |"
	echo
	echo "READs dispatched per window (median): $(awk '$1 == "c" && $2 != "A" { printf "%s%s/%s: %s", s, $2, $3, $6; s = ", " }' "$RAW" | head -c 400)."
	echo "Requests waiting in the dispatcher at the end (map/customers: queued, max_inflight):" \
		"$(awk '$1 == "cq" { printf "%s%s/%s: %s, %s", s, $2, $3, $4, $5; s = "; " }' "$RAW")."
	echo
	echo "## (d) Cost: 4 KiB random read IOPS, budget sweep"
	echo
	echo "fio 4 KiB randread, O_DIRECT, ${COST_T} s (after 1 s ramp), one fio process, $COST_RUNS runs;"
	echo "per run A, then B (::/0 -> 0 per-peer) with its budget switched by 'smb-classify replace"
	echo "max-inflight N' (order rotated per run). B0 = kernel default (max_inflight=${default_mi:-?})."
	echo
	local hdr="| connections x depth | A IOPS |" sep="|---|---|"
	for b in $BUDGETS; do hdr+=" B max_inflight=$( ((b)) && echo "$b" || echo "default ${default_mi:-}") |"; sep+="---|"; done
	for b in $BUDGETS; do hdr+=" B$b/A |"; sep+="---|"; done
	echo "$hdr"
	echo "$sep"
	for k in $COST_CFGS; do
		local row
		row="| $k | $(cell d A "$k") |"
		for b in $BUDGETS; do row+=" $(cell d "B$b" "$k") |"; done
		for b in $BUDGETS; do row+=" $(ratio "$(med d "B$b" "$k")" "$(med d A "$k")") |"; done
		echo "$row"
	done
	echo
	echo "Target: B >= 0.99x A."
	if [[ -n $(awk '$1 == "m"' "$RAW") ]]; then
		echo
		echo "## (m) Mixed sizes: 1 MiB QD4 (127.0.0.40, class 1) vs 4 KiB QD32 (127.0.0.41, class 2)"
		echo
		echo "One mount each, fio randread, O_DIRECT, ${MIX_T} s runs after 1 s ramp, $MIX_RUNS runs. Bytes"
		echo "share = the small reader's share of the bytes, while the big reader is backlogged,"
		echo "over the small reader's run: sent by the server (tcp_info bytes_sent per peer) and"
		echo "dispatched (/proc/net/ksmbd_sched class bytes, B only). Small IOPS: fio's, alone"
		echo "and beside the big reader; kept = beside / alone (medians)."
		echo
		echo "| map | small alone IOPS | big alone KiB/s | small beside big IOPS | kept | small bytes share sent % | small bytes share dispatched % | expected | target |"
		echo "|---|---|---|---|---|---|---|---|---|"
		local map e t d
		for map in $MIX_MAPS; do
			case $map in
			A) e="-"; t="-" ;;
			B|Bs) e="50"; t="50+-3: $(within "$(shares_med m "$map" mixed 7 6)" 50 3)" ;;
			B3|B3s) e="75"; t="75+-3: $(within "$(shares_med m "$map" mixed 7 6)" 75 3)" ;;
			esac
			d="-"
			[[ $map == A ]] || d=$(share m "$map" mixed 9 8)
			echo "| $map | $(cell ma "$map" small) | $(cell mb "$map" big 1 5) | $(cell m "$map" mixed) | $(ratio "$(med m "$map" mixed)" "$(med ma "$map" small)") | $(share m "$map" mixed 7 6) | $d | $e | $t |"
		done
		echo
		echo "Maps: A nothing attached; B 127.0.0.40/32 -> 1, 127.0.0.41/32 -> 2; B3 the same"
		echo "with class 2 weight 3; Bs, B3s: B, B3 with max_inflight $MIX_INFLIGHT (the storage's parallelism)."
		echo "Target: the small reader attached is never worse"
		echo "off than with nothing attached, in this run: small beside big, B $(med m B mixed) vs A $(med m A mixed) IOPS" \
			"($(ratio "$(med m B mixed)" "$(med m A mixed)")x), Bs $(med m Bs mixed) ($(ratio "$(med m Bs mixed)" "$(med m A mixed)")x);" \
			"kept B $(ratio "$(med m B mixed)" "$(med ma B small)"), Bs $(ratio "$(med m Bs mixed)" "$(med ma Bs small)") vs A $(ratio "$(med m A mixed)" "$(med ma A small)")."
	fi
	if [[ -n $(awk '$1 == "l"' "$RAW") ]]; then
		echo
		echo "## (l) A lone client (127.0.0.2), A and B alternating"
		echo
		echo "$LONE_RUNS runs per mode. Burst = bench/burst p50 of a run (32 x 4 KiB, ms);"
		echo "4 KiB QD32 = fio IOPS; 1 MiB QD4 = fio KiB/s (${LONE_T} s after 1 s ramp)."
		echo "Equal = B's median within A's min-max or A's within B's."
		echo
		echo "| measure | A | B | B/A | equal within the spread |"
		echo "|---|---|---|---|---|"
		for k in burst iops4k bw1m; do
			echo "| $k | $(cell l A "$k") | $(cell l B "$k") | $(ratio "$(med l B "$k")" "$(med l A "$k")") | $(spread_ok l "$k") |"
		done
	fi
	if [[ -n $(awk '$1 == "q"' "$RAW") ]]; then
		echo
		echo "Requests waiting in B's dispatcher in (a) when the movers stopped (K: queued):" \
			"$(awk '$1 == "q" { printf "%s%s: %s", s, $3, $4; s = ", " }' "$RAW")."
	fi
	if [[ -n $(awk '$1 == "mi"' "$RAW") ]]; then
		echo "B's budget in force then (K: max_inflight):" \
			"$(awk '$1 == "mi" { printf "%s%s: %s", s, $3, $4; s = ", " }' "$RAW")."
	fi
	} >"$MD"
}

# storage_util: the storage's busy share per part, from the "u" marks.
storage_util() {
	awk '$1 == "u" { if (w != "") { printf "%s(%s) %.0f%%", s, $2, 100 * ($3 - sv) / (par * ($4 - w) * 1000); s = ", " }
		sv = $3; w = $4; par = $5 }' "$RAW"
}

t0=$SECONDS
if [[ $WHAT == report ]]; then
	# the tables again from an existing raw.tsv (BENCH_QUICK as for the run)
	report
	cat "$MD"
	exit 0
fi
DATA=$SMB_SHARE_DIR
if [[ $STORAGE == slowfs ]]; then
	# shellcheck disable=SC2086 # options
	slowfs_share_start $SLOWFS_OPTS || exit 1
	export SMB_SHARE=$SLOWFS_SHARE
	DATA=$SLOWFS_BACKING
	log "storage: slowfs $SLOWFS_OPTS"
fi
head -c 32M /dev/urandom >"$DATA/big.bin"
head -c 8M /dev/urandom >"$DATA/small.bin"
case $WHAT in
cost)
	bench_cost
	awk '$1 == "d"' "$RAW"
	exit 0 ;;
*)
	for w in $WHAT; do
		[[ $w == @(all|a|c|d|m|l) ]] || { echo "usage: $0 [all|cost|report|PART...], PART a c d m l" >&2; exit 2; }
	done
	storage_mark start
	# in the order given ("m l a" runs the mixed sizes first)
	[[ " $WHAT " == *" all "* ]] && WHAT="a c d m l"
	for w in $WHAT; do
		case $w in
		a) bench_bursts ;;
		c) bench_shares ;;
		d) bench_cost ;;
		m) bench_mixed ;;
		l) bench_lone ;;
		esac
		log "part $w done"
		storage_mark "$w"
	done
	report
	cat "$MD" ;;
esac
