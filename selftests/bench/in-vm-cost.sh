#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The per-dispatch cost bench, run inside the test VM
# by selftests/bench/cost-clients.sh:
#   selftests/vm/run -t S selftests/bench/in-vm-cost.sh
# N raw SMB2 clients (selftests/bench/smb2load.py), each from its own IPv6
# address in fd00:5c::/64 (routed to lo as local, IPV6_FREEBIND), each
# keeping one 4 KiB READ in flight; the reference classifier attached
# with "::/0 -> 0 per-peer", so every client is its own dispatcher client,
# and a budget of BENCH_COST_INFLIGHT (default 2) requests in flight, so
# that requests beyond it wait in the round.  Measured on 1 December: even
# so, the one Python process driving the clients (about 1,000 requests/s
# under TCG) is slower than the server, so only 0-2 clients had requests
# waiting at a time, whatever N ("waiting clients" in the table): the
# cost measured is that of N bound, intermittently active clients (each
# request finds its client idle: the sparse path), not of N backlogged
# ones.  For each N (BENCH_CLIENTS, default 10 100 1000
# 2000 5000 10000; quick: 10 100 1000), once every client is answered:
# RUNS windows of T s in which the time of every call of the dispatch
# entry points is measured in the guest (progs/disp_cost.bpf.c through
# selftests/vm/dispcost: fentry/fexit, bpf_ktime_get_ns; attached once,
# before any traffic), plus the dispatches per second and the clients
# with waiting requests ("clients:" of /proc/net/ksmbd_sched, sampled
# every second).  Raw rows in $SMB_RESULTS/cost-raw.tsv:
#   k N RUN FUNC CALLS MEAN_NS P50_NS P99_NS ACTIVE DISPATCH_PER_S HOST_LOAD_BEFORE HOST_LOAD_AFTER
#   kn N CONNECTED SETUP_S MEMAVAIL_KB_BEFORE MEMAVAIL_KB_AFTER CLIENTS_KNOWN
# (SETUP_S: from starting the clients until every one was answered;
# MEMAVAIL after: with the N clients connected, after the windows)
# the table in $SMB_RESULTS/bench-cost.md.  ksmbd's "max connections" is
# raised to 65536 for the run (ksmbd-tools' default is 128).

set -uo pipefail
[[ ${1:-} == report ]] && : "${SMB_USER:=-}" "${SMB_PASS:=-}"
# shellcheck source=../vm/lib.sh
source "${VM_DIR:?run me inside the VM: selftests/vm/run $0}/lib.sh"
# shellcheck source=../vm/testlib-sched.sh
source "$VM_DIR/testlib-sched.sh"
# shellcheck source=lib.sh
source "$VM_CHECKOUT/selftests/bench/lib.sh"

QUICK=${BENCH_QUICK:-0}
OUT=$SMB_RESULTS
RAW=$OUT/cost-raw.tsv
MD=$OUT/bench-cost.md
PREFIX=fd00:5c::
PIN=/sys/fs/bpf/dispcost
DISPCOST=$VM_CHECKOUT/selftests/vm/dispcost
LOAD=$VM_CHECKOUT/selftests/bench/smb2load.py
QUIET_LOAD=${BENCH_QUIET_LOAD:-3}
INFLIGHT=${BENCH_COST_INFLIGHT:-2}
DEPTH=${BENCH_COST_DEPTH:-1}
# The entry points of dispatch: ksmbd_sched.c's hooks behind the static key
# (receive, completion) and ksmbd_sched_disp.c's queue and completion.
# Functions that do not exist (another version of the dispatcher) are
# skipped.
FUNCS=${BENCH_COST_FUNCS:-__ksmbd_sched_queue_work __ksmbd_sched_work_done ksmbd_disp_queue ksmbd_disp_work_done}
if (( QUICK )); then
	NS=${BENCH_CLIENTS:-10 100 1000} RUNS=1 T=4
else
	NS=${BENCH_CLIENTS:-10 100 1000 2000 5000 10000} RUNS=3 T=8
fi
LOADPID=

log() { echo "bench: $* ($((SECONDS - t0)) s)" >&2; }

cleanup() {
	[[ -n $LOADPID ]] && kill -TERM "$LOADPID" 2>/dev/null && wait "$LOADPID"
	"$DISPCOST" detach "$PIN" 2>/dev/null
	smb-classify unload >/dev/null 2>&1
	ip -6 route del local "$PREFIX/64" dev lo 2>/dev/null
	return 0
}
# "report" only reads cost-raw.tsv (it also runs on the host: VM_DIR=...
# VM_CHECKOUT=... SMB_RESULTS=DIR BENCH_CLIENTS=... in-vm-cost.sh report)
[[ ${1:-} == report ]] || trap cleanup EXIT

memavail() { awk '$1 == "MemAvailable:" { print $2 }' /proc/meminfo; }
conns_445() { ss -Htn state established '( sport = :445 )' | wc -l; }
no_conns() { (( $(conns_445) == 0 )); }

# window N RUN: one measurement window with the load in place.
window() {
	local n=$1 r=$2 hb d0 d1 t1 t2 act=0 samples=0 c j f
	hb=$(bench_load_host)
	"$DISPCOST" reset "$PIN" || return 1
	d0=$(sched_class_field 0 dispatched)
	t1=${EPOCHREALTIME/./}
	for (( j = 0; j < T; j++ )); do
		sleep 1
		# read directly: a loader run per sample costs seconds of CPU
		# under TCG with thousands of connections
		c=$(awk '$1 == "clients:" { print $2 }' "$SCHED_PROC")
		act=$(( act + ${c:-0} )) samples=$(( samples + 1 ))
	done
	j=$("$DISPCOST" read "$PIN")
	t2=${EPOCHREALTIME/./}
	d1=$(sched_class_field 0 dispatched)
	for f in $FUNCS; do
		jq -r --arg f "$f" --arg n "$n" --arg r "$r" \
			--arg a "$(( act / samples ))" \
			--arg rate "$(( (d1 - d0) * 1000000 / (t2 - t1) ))" \
			'select(has($f)) | .[$f] | "k \($n) \($r) \($f) \(.calls) \(.mean_ns) \(.p50_ns) \(.p99_ns) \($a) \($rate)"' \
			<<<"$j" | while read -r row; do
			printf '%s %s %s\n' "$row" "$hb" "$(bench_load_host)" >>"$RAW"
		done
	done
	log "  N=$n run $r: $(tr -d '\n' <<<"$j" | head -c 300), $(( act / samples )) clients waiting"
}

# one_n N: the load of N clients, RUNS windows, the load stopped.
one_n() {
	local n=$1 r m0 ts setup ready known res
	m0=$(memavail)
	rm -f "$sched_tmp/ready"
	ts=$SECONDS
	python3 "$LOAD" --clients "$n" --prefix "$PREFIX" --depth "$DEPTH" --ready-file "$sched_tmp/ready" \
		>"$sched_tmp/load.json" 2>"$sched_tmp/load.err" &
	LOADPID=$!
	if ! vm_poll 1200 test -e "$sched_tmp/ready"; then
		log "N=$n: the clients were not all answered in 1200 s"
		kill -TERM "$LOADPID"; wait "$LOADPID"; LOADPID=
		return 1
	fi
	setup=$((SECONDS - ts))
	read -r ready <"$sched_tmp/ready"
	known=$(sched_proc clients_known)
	log "N=$n: $ready clients answered after $setup s, $known dispatcher clients"
	for (( r = 1; r <= RUNS; r++ )); do
		window "$n" "$r"
	done
	printf 'kn %s %s %s %s %s %s\n' "$n" "$ready" "$setup" "$m0" "$(memavail)" "$known" >>"$RAW"
	kill -TERM "$LOADPID"
	wait "$LOADPID"
	LOADPID=
	res=$(cat "$sched_tmp/load.json")
	log "N=$n: load $res"
	# the server's side of N connections closes in its own time
	vm_poll 600 no_conns || log "N=$n: $(conns_445) connections still open"
}

# ---- report --------------------------------------------------------------------
vals() { awk -v n="$1" -v f="$2" -v c="$3" '$1 == "k" && $2 == n && $4 == f { print $c }' "$RAW"; }
cell() {
	local s d
	s=$(vals "$1" "$2" "$3" | bench_stats)
	d=$(awk -v n="$1" -v f="$2" -v q="$QUIET_LOAD" '$1 == "k" && $2 == n && $4 == f &&
		(($(NF - 1) != "-" && $(NF - 1) > q) || ($NF != "-" && $NF > q)) { d = 1 } END { if (d) printf "*" }' "$RAW")
	# shellcheck disable=SC2086
	set -- $s
	[[ $1 == - ]] && { echo -; return; }
	echo "$1 ($2-$3)$d"
}
med() { vals "$1" "$2" "$3" | bench_stats | cut -d' ' -f1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || a == "-" || b == "-" || b == 0) print "-"; else printf "%.2f", a / b }'; }

report() {
	local n f first hdr sep row
	first=$(awk '$1 == "k" { print $2; exit }' "$RAW")
	{
	echo "# ksmbd BPF scheduling: per-dispatch cost against the number of clients"
	echo
	echo "Kernel $(uname -r), $(nproc) vCPU(s) (QEMU TCG), $(awk '$1 == "MemTotal:" { printf "%d MiB", $2 / 1024 }' /proc/meminfo), $(date -u +%F)."
	echo "Mode: $( ((QUICK)) && echo "BENCH_QUICK" || echo full); $RUNS window(s) of $T s per N; cells median (min-max) over windows."
	echo
	echo "N raw SMB2 clients (selftests/bench/smb2load.py), one TCP connection each from its own"
	echo "address in $PREFIX/64, each with one 4 KiB READ in flight at all times (SessionId 0:"
	echo "dispatched as data, answered STATUS_USER_SESSION_DELETED by the worker, no storage);"
	echo "reference classifier, ::/0 -> 0 per-peer: every client its own dispatcher client;"
	echo "max_inflight $INFLIGHT: requests beyond it wait in the round (how many clients had"
	echo "requests waiting, sampled every second: the waiting clients column)."
	echo "Per call of each entry point, ns measured in the guest with fentry/fexit"
	echo "(bpf_ktime_get_ns; the probes' own time, the same for every call, included)."
	echo "* = a window with the host's 1-minute load above $QUIET_LOAD (disturbed)."
	echo
	hdr="| N | connected | setup s | waiting clients | dispatches/s |" sep="|---|---|---|---|---|"
	for f in $FUNCS; do
		[[ -n $(vals "$first" "$f" 6) ]] || continue
		hdr+=" $f p50 ns | mean ns |"; sep+="---|---|"
	done
	echo "$hdr"
	echo "$sep"
	for n in $NS; do
		row="| $n | $(awk -v n="$n" '$1 == "kn" && $2 == n { print $3 }' "$RAW") | $(awk -v n="$n" '$1 == "kn" && $2 == n { print $4 }' "$RAW") |"
		f=${FUNCS%% *}
		row+=" $(vals "$n" "$f" 9 | bench_stats | cut -d' ' -f1) | $(cell "$n" "$f" 10) |"
		for f in $FUNCS; do
			[[ -n $(vals "$first" "$f" 6) ]] || continue
			row+=" $(cell "$n" "$f" 7) | $(cell "$n" "$f" 6) |"
		done
		echo "$row"
	done
	echo
	echo "Flatness: p50 at each N / p50 at N=$first:"
	for f in $FUNCS; do
		[[ -n $(vals "$first" "$f" 6) ]] || continue
		echo "- $f: $(for n in $NS; do printf '%s %s; ' "$n" "$(ratio "$(med "$n" "$f" 7)" "$(med "$first" "$f" 7)")"; done)"
	done
	echo
	echo "Memory (MemAvailable, MiB, before the clients / with them): $(awk '$1 == "kn" { printf "%sN=%s: %d / %d", s, $2, $5 / 1024, $6 / 1024; s = ", " }' "$RAW")."
	} >"$MD"
}

t0=$SECONDS
if [[ ${1:-} == report ]]; then report; cat "$MD"; exit 0; fi
: >"$RAW"
[[ -x $DISPCOST ]] || { echo "$DISPCOST missing: make -C selftests/vm" >&2; exit 1; }
ulimit -Hn 1048576 2>/dev/null
ulimit -n 1048576 2>/dev/null || ulimit -n 65536 || exit 1
# connections beyond ksmbd-tools' default of 128
vm_ksmbd_stop
vm_ksmbd_write_conf
sed -i '/^\[global\]/a\	max connections = 65536' "$KSMBD_CONF"
vm_ksmbd_start || exit 1
ip -6 route add local "$PREFIX/64" dev lo || exit 1
smb-classify load max-inflight "$INFLIGHT" >/dev/null || exit 1
smb-classify prefix add ::/0 0 per-peer >/dev/null || exit 1
# shellcheck disable=SC2086 # the list
"$DISPCOST" attach "$PIN" $FUNCS >&2 || exit 1
for n in $NS; do
	one_n "$n" || break
done
report
cat "$MD"
