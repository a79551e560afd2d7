#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 900
#
# Fair by cost, not by request count (Documentation/
# dispatch.rst "Fair by cost: deficit round robin").  Two classes on the
# storage model (slowfs, testlib-slowfs.sh: 5 ms a request plus its
# length at 8 MiB/s, one in service at once, direct_io), so that the
# server, not the clients, limits both readers: class 1 (127.0.0.2)
# reads 1 MiB at queue depth 4, class 2 (127.0.0.3) 4 KiB at depth 32,
# fio on cifs mounts (cache=none, O_DIRECT, libaio).  The dispatcher's
# budget is 2; no SPLICE verdicts (a spliced READ would be served from
# FUSE's page cache around the model).
#
# Shares: counted at the server over the contested READ dispatches
# (ksmbd_sched_dispatch with waited=1 and clients>=2: both classes had
# requests waiting, so the deficit round robin alone decides), in whole
# rounds: from one contested 1 MiB READ to the ROUNDS-th next one (a
# 1 MiB READ costs 8 quanta of 128 KiB, so it is served once every 8
# turns, the small reader's turns between).  Over ROUNDS whole rounds:
#   equal weights:     class 1's share of the bytes 50% +-3% (8 rounds)
#   class 1 weight 3:  class 1's share of the bytes 75% +-3% (9 of its
#                      READs, 3 whole periods of 8 turns)
#   class 2 weight 3:  class 2's share of the bytes 75% +-3% (4 rounds)
# every READ was charged its length (cost 1048576 and 4096), and both
# were backlogged: at most 5% of the dispatches in the rounds' time span
# were uncontested.  The dispatcher must not leave the test: a watchdog
# bypass fails the window at once.  With class 2 at weight 3 a round is
# 768 4 KiB READs and the big reader's 4th queued READ waits about 4
# rounds: on a slow guest (a round over 7.5 s) that is past the
# watchdog's 30 s, which until 1 December took it for a broken
# dispatcher; the watchdog now also asks whether the request's client
# had a turn (88-watchdog-round tests that on purpose).
#
# Never worse off (same boot): the 4 KiB reader's IOPS (fio, 10 s after
# 2 s of ramp) alone with nothing attached, and beside the 1 MiB reader
# with nothing attached and with the classifier of the first share:
# attached >= 90% of unattached.  The data read through both mounts is
# sha256-equal to the file.

set -euo pipefail
# shellcheck source=../lib.sh
source "${VM_DIR:?run me inside the VM: selftests/vm/run $0}/lib.sh"
# shellcheck source=../testlib-sched.sh
source "$VM_DIR/testlib-sched.sh"
# shellcheck source=../testlib-fair.sh
source "$VM_DIR/testlib-fair.sh"
# shellcheck source=../testlib-slowfs.sh
source "$VM_DIR/testlib-slowfs.sh"

why=$(slowfs_available) || vm_skip_test "$why"
trap 'fair_cleanup; slowfs_share_stop' EXIT

SERVICE_MS=5
BW_MIBPS=8
BUDGET=2
ROUNDS1=${COST_ROUNDS1:-8}	# equal weights: 8 x 2 MiB
ROUNDS2=${COST_ROUNDS2:-4}	# weights 1:3: 4 x 4 MiB
ROUNDS3=${COST_ROUNDS3:-9}	# weights 3:1: 3 x (3 + 1) MiB
UNCONTESTED=50		# per mille of the dispatches, at most
TOL=30			# per mille
IOPS_TOL=100		# per mille: attached >= 90% of unattached
BIG=$sched_tmp/big SMALL=$sched_tmp/small

slowfs_share_start --service-ms "$SERVICE_MS" --jitter-pct 0 --parallel 1 \
	--bw-mibps "$BW_MIBPS" || { vm_fail "slowfs share started"; vm_finish; }
head -c 16M /dev/urandom >"$SLOWFS_BACKING/data.bin"
want_sha=$(sched_sha "$SLOWFS_BACKING/data.bin")
slowfs_mount 127.0.0.2 "$BIG"
slowfs_mount 127.0.0.3 "$SMALL"
echo "guest load before: $(cut -d' ' -f1-3 /proc/loadavg)"

# attach WEIGHT1 WEIGHT2: the prefix classifier with budget BUDGET, class
# 1 (weight WEIGHT1) for the big reader, class 2 (WEIGHT2) for the small
# one, no splice.
attach() {
	fair_weighted "$BUDGET" "$1" "$2"
	slowfs_no_splice 0 1 2
}

# big_start: the 1 MiB reader, until stopped; returns once it reads (the
# storage served 2 more MiB).
big_start() {
	local r0
	r0=$(slowfs_stat read_bytes)
	fair_fio_json big "$BIG/data.bin" 600 4 1m
	BIG_PID=$FAIR_LAST_PID
	vm_poll 30 big_read_since "$r0" || vm_fail "the 1 MiB reader did not start"
}
big_read_since() { (( $(slowfs_stat read_bytes) >= $1 + (2 << 20) )); }
big_stop() {
	kill "$BIG_PID" 2>/dev/null || true
	fair_wait "$BIG_PID" || true
	vm_check "$1: the 1 MiB reader saw no I/O error" fair_fio_json_ok big
}

# small_iops NAME: the 4 KiB reader for 2 + 10 s; prints its IOPS.
small_iops() { fair_fio_measure iops "$1" "$SMALL/data.bin" 10 32 4k 2; }

# ---- never worse off: small IOPS, nothing attached and attached ------------
smb-classify unload >/dev/null 2>&1 || true
alone=$(small_iops alone)
big_start
flat=$(small_iops flat)
big_stop "nothing attached"
attach 1 1
big_start
att=$(small_iops attached)
big_stop "attached"
echo "4 KiB reader IOPS: alone $alone; beside the 1 MiB reader: nothing attached $flat ($(fair_pct "$(fair_permille "$flat" "$((alone > 0 ? alone : 1))")")% of alone), attached $att ($(fair_pct "$(fair_permille "$att" "$((alone > 0 ? alone : 1))")")%)"
vm_check "never worse off: beside the 1 MiB reader, attached $att IOPS >= $(fair_pct $((1000 - IOPS_TOL)))% of nothing attached ($flat)" \
	test $(( att * 1000 )) -ge $(( flat * (1000 - IOPS_TOL) ))
smb-classify unload >/dev/null

# rounds_wait K BOUND_S: until K+1 contested 1 MiB READs are in the
# trace file (ROUNDS_OUT: fair_rounds' answer), at most BOUND_S seconds.
# The class counter is read each second (cheap); the trace file only once
# class 1 has had K+1 more READs dispatched, and again after each more.
rounds_wait() {
	local k=$1 deadline next tick=0
	deadline=$(( ${EPOCHREALTIME/./} + $2 * ${TEST_TIMEOUT_SCALE:-1} * 1000000 ))
	next=$(( $(fair_class_field 1 dispatched) + k + 1 ))
	while (( ${EPOCHREALTIME/./} < deadline )); do
		if [[ $(sched_proc bypass) == 1 ]]; then
			echo "  the watchdog bypassed the dispatcher: a request and its client waited $(( $(sched_proc bypass_wait_ns) / 1000000 )) ms (KSMBD_SCHED_WATCHDOG_MS)"
			return 1
		fi
		if (( $(fair_class_field 1 dispatched) >= next )); then
			sched_trace_sync || return 1
			ROUNDS_OUT=$(fair_rounds "$k" 1 2)
			(( $(jq .rounds <<<"$ROUNDS_OUT") >= k + 1 )) && return 0
			next=$(( next + 1 ))
		fi
		(( ++tick % 20 )) || disp_state
		sleep 1
	done
	return 1
}

# disp_state: the dispatcher's clients and classes now (for the log).
disp_state() {
	echo "  $(sched_proc_show inflight queued clients); $(tr '\n' ';' </proc/net/ksmbd_sched_clients 2>/dev/null)"
}

# trace_summary: the dispatch events in the trace file by class, waited
# and clients (for the log when a window fails).
trace_summary() {
	jq -s -c '[ .[] | select(.event == "ksmbd_sched_dispatch") |
		{class, cmd, waited, c2: (.clients >= 2)} ] | group_by(.) |
		map(.[0] + {n: length})' "$SCHED_TRACE_JSON"
}

# share DESC WEIGHT1 WEIGHT2 K CLASS WANT: the classes at these weights,
# K rounds (K contested 1 MiB READs); CLASS's share of the bytes, WANT
# per mille.
share() {
	local desc=$1 w1=$2 w=$3 k=$4 cls=$5 want=$6 a b r got n u
	attach "$w1" "$w"
	big_start
	fair_fio_json small "$SMALL/data.bin" 600 32 4k
	SMALL_PID=$FAIR_LAST_PID
	vm_poll 60 fair_at_least clients 2 || vm_fail "$desc: never 2 clients waiting"
	sched_trace_only ksmbd_sched_dispatch
	# A round is 256 or 768 4 KiB READs and one of 1 MiB: measured 4 s
	# (weight 1) on a host loaded 4-11; bounded at 20 s a quantum.
	disp_state
	if rounds_wait "$k" $(( (k + 1) * w * 20 )); then
		sched_trace_stop
		r=$ROUNDS_OUT
		a=$(jq .big <<<"$r") b=$(jq .small <<<"$r")
		echo "$desc: $k rounds in $(jq .seconds <<<"$r") s: class 1 $a bytes ($(jq .nbig <<<"$r") READs), class 2 $b bytes ($(jq .nsmall <<<"$r") READs), other classes $(jq .other <<<"$r"), uncontested dispatches meanwhile $(jq .uncontested <<<"$r"), class 2 READs per round $(jq -c .per_round <<<"$r"), other dispatches meanwhile [$(jq -r .nonread <<<"$r")]; lost events $(fair_trace_overruns); guest load $(cut -d' ' -f1 /proc/loadavg)"
		vm_check "$desc: no trace events lost" test "$(fair_trace_overruns)" = 0
		vm_check "$desc: every READ charged its length (cost 1 MiB, 4 KiB)" \
			test "$(jq .cost_ok <<<"$r")" = true
		vm_check "$desc: $k 1 MiB READs in the rounds" test "$(jq .nbig <<<"$r")" = "$k"
		n=$(( $(jq '.nbig + .nsmall + .other' <<<"$r") ))
		u=$(jq .uncontested <<<"$r")
		vm_check "$desc: both backlogged: $u uncontested dispatches against $n contested READs (at most $(fair_pct "$UNCONTESTED")%)" \
			test $(( u * 1000 )) -le $(( (n + u) * UNCONTESTED ))
		got=$(( cls == 1 ? a : b ))
		(( a + b > 0 )) &&
			fair_share_ok "$desc: class ${cls}'s share of the bytes" \
				"$(fair_permille "$got" $(( a + b )))" "$want" "$TOL"
	else
		sched_trace_sync || true
		disp_state
		echo "  dispatch events: $(trace_summary)"
		sched_trace_stop
		vm_fail "$desc: fewer than $((k + 1)) contested 1 MiB READs in time: $(fair_rounds "$k" 1 2)"
	fi
	# Still both backlogged: the dispatcher must not have given up.
	vm_check "$desc: no watchdog bypass while both read (bypass $(sched_proc bypass), waited $(( $(sched_proc bypass_wait_ns) / 1000000 )) ms)" \
		test "$(sched_proc bypass)" = 0
	kill "$SMALL_PID" 2>/dev/null || true
	fair_wait "$SMALL_PID" || true
	vm_check "$desc: the 4 KiB reader saw no I/O error" fair_fio_json_ok small
	big_stop "$desc"
	vm_check "$desc: back to 0: inflight, queued, clients, payloads" vm_poll 30 fair_idle
	smb-classify unload >/dev/null
}

share "1 MiB QD4 vs 4 KiB QD32, equal weights" 1 1 "$ROUNDS1" 1 500
# Big reader weight 3: it is served 3 times every 8 turns, so whole
# periods are multiples of 3 of its READs.
share "1 MiB QD4 weight 3 vs 4 KiB QD32" 3 1 "$ROUNDS3" 1 750
# Small reader weight 3: a round is 768 4 KiB READs, and the big reader's
# 4th queued READ waits about 4 rounds in the dispatcher.
share "1 MiB QD4 vs 4 KiB QD32 weight 3" 1 3 "$ROUNDS2" 2 750

vm_check "data.bin read through the class-1 mount, sha256 equal" \
	test "$(sched_sha "$BIG/data.bin")" = "$want_sha"
vm_check "data.bin read through the class-2 mount, sha256 equal" \
	test "$(sched_sha "$SMALL/data.bin")" = "$want_sha"
echo "guest load after: $(cut -d' ' -f1-3 /proc/loadavg)"
vm_finish
