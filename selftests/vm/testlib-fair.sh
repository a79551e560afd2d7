# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers of the fairness and lifecycle tests (70-72) and of the benchmark,
# on top of lib.sh and testlib-sched.sh: backlogged fio clients on cifs
# mounts from chosen source addresses, a dispatcher with a small budget,
# counting windows over /proc/net/ksmbd_sched and the dispatch tracepoint
# (through the loader's tracer: testlib-sched.sh's sched_trace_*).
# Source after testlib-sched.sh.

# The reference classifier with a fixed max_inflight (progs/*.bpf.h): the
# same "prefixes" map, so smb-classify reuses the pin and fills it.
FAIR_PROGS=$VM_CHECKOUT/selftests/vm/progs
FAIR_PIDS=()

# fair_obj N: the object with max_inflight N (1, 2 or 4).
fair_obj() {
	local o=$FAIR_PROGS/prefix_inflight$1.bpf.o
	if [[ ! -e $o ]]; then
		echo "FAIL: $o missing: build it on the host with 'make -C selftests/vm'"
		exit 1
	fi
	echo "$o"
}

# fair_load N: attach the prefix classifier with max_inflight N.
fair_load() { smb-classify load "$(fair_obj "$1")" >/dev/null; }

# fair_two_classes N: the prefix classifier with max_inflight N, and two
# clients with their own source addresses: 127.0.0.2 in class 1 and
# 127.0.0.3 in class 2 (routes through testlib-read.sh's read_route_src,
# removed by read_cleanup).
fair_two_classes() {
	read_route_src 127.0.0.2
	read_route_src 127.0.0.3
	fair_load "$1"
	smb-classify prefix add 127.0.0.2/32 1 >/dev/null
	smb-classify prefix add 127.0.0.3/32 2 >/dev/null
}

# fair_weighted N W1 W2: the prefix classifier with max_inflight N,
# 127.0.0.2 in class 1 of weight W1 and 127.0.0.3 in class 2 of weight
# W2 (fair_two_classes' addresses, for clients that bring their own
# source address, such as cifs mounts with srcaddr: no routes).
fair_weighted() {
	fair_load "$1"
	smb-classify prefix add 127.0.0.2/32 1 weight "$2" >/dev/null
	smb-classify prefix add 127.0.0.3/32 2 weight "$3" >/dev/null
}

# fair_class_field ID FIELD: a counter of class ID's "class:" line (0 if
# the class has not been seen yet).
fair_class_field() { sched_class_field "$@"; }

# fair_mount SRC MNT: a cifs mount from SRC (own TCP connection).
fair_mount() { sched_mount "$1" 127.0.0.1 "$2"; }

# fair_fio NAME FILE RUNTIME_S [IODEPTH] [BS]: a backlogged reader in the
# background (random reads, O_DIRECT, libaio), output in
# $sched_tmp/NAME.fio; its pid is appended to FAIR_PIDS and set in
# FAIR_LAST_PID.
fair_fio() {
	local name=$1 file=$2 runtime=$3 depth=${4:-16} bs=${5:-64k}
	fio --name="$name" --thread --invalidate=0 --filename="$file" \
		--rw=randread --bs="$bs" --iodepth="$depth" --ioengine=libaio \
		--direct=1 --time_based --runtime="$runtime" \
		--output="$sched_tmp/$name.fio" >/dev/null 2>&1 &
	FAIR_LAST_PID=$!
	FAIR_PIDS+=("$FAIR_LAST_PID")
}

# fair_fio_ok NAME: fio NAME reported no I/O error (err= 0) and read data.
fair_fio_ok() {
	local f=$sched_tmp/$1.fio
	grep -q 'err= 0' "$f" && grep -q 'read: IOPS=' "$f" && ! grep -q 'err= *[1-9]' "$f"
}

# fair_wait PID: wait for a background job, return its exit status.
fair_wait() {
	local rc=0
	wait "$1" || rc=$?
	return "$rc"
}

# fair_kill_all: stop every background fio still running.
fair_kill_all() {
	local p
	for p in "${FAIR_PIDS[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	for p in "${FAIR_PIDS[@]}"; do
		wait "$p" 2>/dev/null || true
	done
	FAIR_PIDS=()
}

# fair_at_least KEY N: /proc/net/ksmbd_sched KEY >= N.
fair_at_least() { (( $(sched_proc "$1") >= $2 )); }

# fair_idle: nothing in flight, nothing queued, no client, no payload
# page held.
fair_idle() { vm_sched_zero inflight queued clients payloads payload_pages; }

# fair_dispatched_sum ID...: sum of "dispatched" over classes.
fair_dispatched_sum() {
	local id s=0
	for id in "$@"; do
		s=$(( s + $(fair_class_field "$id" dispatched) ))
	done
	echo "$s"
}

# fair_sum_reached TARGET ID...: the classes dispatched TARGET in all.
fair_sum_reached() {
	local t=$1
	shift
	(( $(fair_dispatched_sum "$@") >= t ))
}

# fair_window CLIENTS N ID...: count dispatches of classes ID... over a
# window in which CLIENTS clients are backlogged: it starts once
# /proc shows CLIENTS clients with waiting requests and ends once the
# classes have dispatched N more requests.  Sets FAIR_DELTA[ID] (the
# classes' "dispatched" deltas) and FAIR_SAMPLES / FAIR_SHORT (samples of
# "clients" taken during the window, and how many of them had fewer than
# CLIENTS clients waiting).  Returns 1 if the window never started or
# never reached N, or if fewer than CLIENTS were waiting at its end.
declare -A FAIR_DELTA FAIR_START
fair_window() {
	local want=$1 n=$2 id start target deadline c
	shift 2
	if ! vm_poll 60 fair_at_least clients "$want"; then
		echo "window: never $want clients waiting: $(sched_proc_show clients queued inflight max_inflight)"
		return 1
	fi
	for id in "$@"; do
		FAIR_START[$id]=$(fair_class_field "$id" dispatched)
	done
	start=$(fair_dispatched_sum "$@")
	target=$(( start + n ))
	FAIR_SAMPLES=0
	FAIR_SHORT=0
	deadline=$(( ${EPOCHREALTIME/./} + 120 * 1000000 ))
	while ! fair_sum_reached "$target" "$@"; do
		if (( ${EPOCHREALTIME/./} > deadline )); then
			echo "window: $n dispatches not reached in 120 s"
			return 1
		fi
		c=$(sched_proc clients)
		FAIR_SAMPLES=$(( FAIR_SAMPLES + 1 ))
		(( c >= want )) || FAIR_SHORT=$(( FAIR_SHORT + 1 ))
		sleep 0.2
	done
	for id in "$@"; do
		FAIR_DELTA[$id]=$(( $(fair_class_field "$id" dispatched) - FAIR_START[$id] ))
	done
	c=$(sched_proc clients)
	if (( c < want )); then
		echo "window: only $c clients waiting at its end"
		return 1
	fi
}

# fair_share_ok DESC GOT_PERMILLE WANT_PERMILLE TOL_PERMILLE
fair_share_ok() {
	local desc=$1 got=$2 want=$3 tol=$4 d
	d=$(( got - want ))
	(( d < 0 )) && d=$(( -d ))
	vm_check "$desc: $(fair_pct "$got")% (want $(fair_pct "$want")% +-$(fair_pct "$tol")%)" \
		test "$d" -le "$tol"
}
# fair_pct PERMILLE: as a percentage with one decimal.
fair_pct() { printf '%d.%d' $(( $1 / 10 )) $(( $1 % 10 )); }

# fair_permille PART TOTAL
fair_permille() { echo $(( ($1 * 1000 + $2 / 2) / $2 )); }

# fair_trace_dispatch_on: the loader's tracer on, of the dispatch
# tracepoint only (sched_trace_only ksmbd_sched_dispatch); the events
# in SCHED_TRACE_JSON.  (fair_trace_window starts its own.)
fair_trace_dispatch_on() { sched_trace_only ksmbd_sched_dispatch; }

# fair_trace_overruns: events the tracer's ring buffer lost (after
# sched_trace_stop: all of them).
fair_trace_overruns() { sched_trace_lost; }

# fair_cleanup: the trap of these tests.
fair_cleanup() {
	fair_kill_all
	sched_cleanup
}

# Contested dispatches: ksmbd_sched_dispatch events of requests that
# waited and were picked while at least two clients had waiting requests
# (clients >= 2).  Only there does the round-robin order decide who is
# served; when one client's queue is empty the dispatcher is
# work-conserving and serves whoever is waiting, which says nothing about
# the policy.  Counting these makes the share independent of how fast the
# clients themselves can submit (CPU speed, vCPUs).  As a jq condition,
# and as the kernel's event filter (fair_trace_window).
FAIR_CONTESTED='.waited == 1 and .clients >= 2'
FAIR_CONTESTED_FILTER='waited == 1 && clients >= 2'

# fair_contested [JQ-CONDITION]: contested dispatches in SCHED_TRACE_JSON
# (matching JQ-CONDITION too, e.g. '.class == 1' or
# '.class == 1 and .peer == "::ffff:127.0.0.2"').
fair_contested() {
	sched_count ksmbd_sched_dispatch "$FAIR_CONTESTED and (${1:-true})"
}

# fair_trace_window N: with clients started, count from the moment two
# clients wait until N contested dispatches: the loader's tracer, started
# then, gets only those (the kernel filters them: FAIR_CONTESTED_FILTER)
# and stops by itself after N (trace -c N); then the file is complete.
# Bounded: 60 s to start, 120 s to count.  Returns 1 if the window never
# started or never reached N.
fair_trace_window() {
	local n=$1
	vm_poll 60 fair_at_least clients 2 || {
		echo "window: never 2 clients waiting"; return 1; }
	sched_trace_only -c "$n" ksmbd_sched_dispatch filter "$FAIR_CONTESTED_FILTER" ||
		return 1
	vm_poll 120 vm_settled "$SCHED_LTRACE_PID" || {
		sched_trace_stop
		echo "window: only $(fair_contested true) contested dispatches in 120 s"
		return 1; }
	sched_trace_stop
}

# ---- additions of stress/75-cost-fair ----------------------------------

# fair_fio_json NAME FILE RUNTIME_S DEPTH BS [RAMP_S]: as fair_fio, but
# fio's report is JSON ($sched_tmp/NAME.json) and the first RAMP_S
# seconds are not counted; in the background, pid in FAIR_LAST_PID and
# FAIR_PIDS.
fair_fio_json() {
	local name=$1 file=$2 runtime=$3 depth=$4 bs=$5 ramp=${6:-0}
	fio --name="$name" --thread --invalidate=0 --filename="$file" \
		--rw=randread --bs="$bs" --iodepth="$depth" --ioengine=libaio \
		--direct=1 --time_based --runtime="$runtime" --ramp_time="$ramp" \
		--output-format=json --output="$sched_tmp/$name.json" \
		>/dev/null 2>&1 &
	FAIR_LAST_PID=$!
	FAIR_PIDS+=("$FAIR_LAST_PID")
}
# fair_fio_report NAME: fio NAME's JSON report (from its first "{": a
# fio stopped by a signal writes "fio: terminating on signal N" first).
fair_fio_report() { sed -n '/^{/,$p' "$sched_tmp/$1.json"; }
# fair_fio_json_ok NAME: fio NAME's JSON report has no error and reads.
fair_fio_json_ok() {
	fair_fio_report "$1" |
		jq -e '.jobs[0].error == 0 and .jobs[0].read.total_ios > 0' >/dev/null 2>&1
}
# fair_fio_iops NAME: fio NAME's read IOPS (an integer).
fair_fio_iops() { fair_fio_report "$1" | jq '.jobs[0].read.iops | floor' 2>/dev/null || echo 0; }

# fair_fio_measure WHAT NAME FILE RUNTIME_S DEPTH BS RAMP_S: fair_fio_json
# run to its end; prints WHAT of its reads, iops (an integer) or bw
# (KiB/s), 0 if fio failed.
fair_fio_measure() {
	local what=$1 name=$2
	shift
	fair_fio_json "$@"
	fair_wait "$FAIR_LAST_PID" || true
	fair_fio_json_ok "$name" || { echo 0; return; }
	case $what in
	iops) fair_fio_iops "$name" ;;
	bw) fair_fio_report "$name" | jq '.jobs[0].read.bw' ;;
	esac
}

# fair_rounds K BIG SMALL: the contested READ dispatches in
# SCHED_TRACE_JSON (in time order) from the first contested READ of
# class BIG to the (K+1)-th, that one excluded: K whole rounds of the
# deficit round robin when BIG's requests cost more than a quantum (it
# is served once per round, every other class in between).  Counting
# whole rounds leaves out the phase at which a window starts and ends,
# which for 1 MiB requests is worth a whole request.  One JSON object:
#   rounds   contested READs of BIG seen (at least K+1 for a result)
#   big, small   bytes of BIG's and SMALL's READs in the rounds
#   nbig, nsmall how many READs
#   other    READs of other classes in the rounds
#   uncontested  dispatches in the same time span that were not
#            contested (a class had nothing waiting)
#   cost_ok  every READ in the rounds was charged its length, at least
#            4 KiB (cost == max(bytes, 4096))
#   nonread  the other dispatches in that span, "CLASS:CMD:COST xN"
#            (their cost, 4 KiB each, is charged to the class's deficit
#            too)
#   per_round    SMALL's READs in each round
#   seconds  the rounds' time span
fair_rounds() {
	jq -s -c --argjson k "$1" --argjson big "$2" --argjson small "$3" '
		[ .[] | select(.event == "ksmbd_sched_dispatch") ] | sort_by(.ts) as $all |
		[ $all[] | select(.cmd == "READ" and .waited == 1 and .clients >= 2) ] as $c |
		[ $c | to_entries[] | select(.value.class == $big) | .key ] as $b |
		if ($b | length) < $k + 1 then { rounds: ($b | length) } else
			$c[$b[0]:$b[$k]] as $w |
			($w[0].ts) as $t0 | ($c[$b[$k]].ts) as $t1 |
			{ rounds: ($b | length),
			  big: ([ $w[] | select(.class == $big) | .bytes ] | add // 0),
			  small: ([ $w[] | select(.class == $small) | .bytes ] | add // 0),
			  nbig: ([ $w[] | select(.class == $big) ] | length),
			  nsmall: ([ $w[] | select(.class == $small) ] | length),
			  other: ([ $w[] | select(.class != $big and .class != $small) ] | length),
			  uncontested: ([ $all[] | select(.ts >= $t0 and .ts < $t1 and
				(.waited != 1 or .clients < 2)) ] | length),
			  nonread: ([ $all[] | select(.ts >= $t0 and .ts < $t1 and
				.cmd != "READ") | "\(.class):\(.cmd):\(.cost)" ] |
				group_by(.) | map("\(.[0]) x\(length)") | join(" ")),
			  cost_ok: all($w[]; .cost == ([.bytes, 4096] | max)),
			  per_round: [ range(0; $k) as $i | [ $c[$b[$i]:$b[$i + 1]][] |
				select(.class == $small) ] | length ],
			  seconds: ((($t1 - $t0) / 1e9) * 10 | floor / 10) }
		end' "$SCHED_TRACE_JSON"
}
