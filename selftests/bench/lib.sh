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
