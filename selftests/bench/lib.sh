# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers shared by the benches (source it).
#
# Host side (selftests/bench/run, read-splice.sh, cost-clients.sh):
#   bench_load_sampler_start OUT  record /proc/loadavg in OUT/host-loadavg.start
#                                 and refresh OUT/vm/results/host-loadavg every
#                                 2 s while the VM runs (the guest reads it
#                                 over 9p, uncached: $SMB_RESULTS/host-loadavg)
#   bench_load_sampler_stop OUT   stop it, record OUT/host-loadavg.end
#   bench_vm OUT TIMEOUT REPORT CMD...
#                                 one VM boot (selftests/vm/run, from the
#                                 checkout's top) running CMD with the
#                                 sampler around it, CMD's stdout in
#                                 OUT/stdout, the guest's results copied to
#                                 OUT; fails (exit 1, the output's tail) when
#                                 the run failed or OUT/REPORT is empty
# Guest side (in-vm*.sh):
#   bench_load_host               the host's 1-minute load now, "-" if unknown
#   bench_load_guest              the guest's
#   bench_stats                   "MEDIAN MIN MAX" of the numbers on stdin
#
# A run is *disturbed* when the host's load before or after it exceeded
# BENCH_QUIET_LOAD (default 3: the VM's own two vCPU threads are about 2,
# so more means another process took CPU from the guest).

BENCH_SAMPLER=

bench_load_sampler_start() {
	local out=$1
	mkdir -p "$out/vm/results"
	cat /proc/loadavg >"$out/host-loadavg.start"
	( while :; do
		cat /proc/loadavg >"$out/vm/results/.host-loadavg.tmp" &&
			mv -f "$out/vm/results/.host-loadavg.tmp" "$out/vm/results/host-loadavg"
		sleep 2
	done ) &
	BENCH_SAMPLER=$!
	# shellcheck disable=SC2064 # the pid now
	trap "kill $BENCH_SAMPLER 2>/dev/null || true" EXIT
}

bench_load_sampler_stop() {
	[[ -n $BENCH_SAMPLER ]] && kill "$BENCH_SAMPLER" 2>/dev/null
	BENCH_SAMPLER=
	cat /proc/loadavg >"$1/host-loadavg.end"
}

bench_vm() {
	local out=$1 timeout=$2 report=$3 rc=0
	shift 3
	echo "bench: one VM boot, output in $out (timeout ${timeout} s)" >&2
	bench_load_sampler_start "$out"
	VM_TIMEOUT=$timeout selftests/vm/run -t "$timeout" -o "$out/vm" \
		"$@" >"$out/stdout" || rc=$?
	bench_load_sampler_stop "$out"
	cp "$out/vm/results/"* "$out/" 2>/dev/null || true
	if [[ $rc != 0 || ! -s $out/$report ]]; then
		echo "bench: the VM run failed (status $rc); see $out/vm" >&2
		tail -n 20 "$out/stdout" >&2 || true
		exit 1
	fi
}

bench_load_host() {
	awk '{ print $1 }' "${SMB_RESULTS:-.}/host-loadavg" 2>/dev/null | grep . || echo -
}
bench_load_guest() { awk '{ print $1 }' /proc/loadavg; }

bench_stats() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (!NR) { print "- - -"; exit }
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		print m, v[1], v[NR] }'
}
