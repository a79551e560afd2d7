#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# selftests/bench/cost-clients.sh: the per-dispatch cost against the
# number of clients.  Boots the test VM once
# (selftests/vm/run, Debian's kernel by default, VM_MEM 4096 MiB for up
# to 10,000 connections) and runs selftests/bench/in-vm-cost.sh there;
# writes $OUT/bench-cost.md (and cost-raw.tsv) and prints it.  The host's
# /proc/loadavg is sampled while the VM runs (lib.sh) and recorded around
# every window; disturbed windows are marked.
#
# Environment: OUT (default $CACHE_DIR/bench/cost-DATE), BENCH_QUICK=1
# (N = 10, 100, 1000, one window each: 7 minutes on a host loaded 14), BENCH_CLIENTS
# (the list of N), BENCH_COST_FUNCS (the functions timed, at most 4),
# BENCH_QUIET_LOAD (3), VM_MEM, VM_KERNEL, KERNEL, CACHE_DIR, VM_TIMEOUT,
# VM_ICOUNT as for selftests/vm/run.

set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
CACHE_DIR=${CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ksmbd-bpf-sched}
OUT=${OUT:-$CACHE_DIR/bench/cost-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
export CACHE_DIR
export VM_MEM=${VM_MEM:-4096}

cd "$top"
make -s -C selftests/vm >/dev/null
[[ -x tools/smb-classify/smb-classify ]] || make -s -C tools/smb-classify >/dev/null

timeout=${VM_TIMEOUT:-$( [[ ${BENCH_QUICK:-0} == 1 ]] && echo 1200 || echo 5400 )}
# shellcheck source=lib.sh
source "$here/lib.sh"
bench_vm "$OUT" "$timeout" bench-cost.md \
	env BENCH_QUICK="${BENCH_QUICK:-0}" BENCH_QUIET_LOAD="${BENCH_QUIET_LOAD:-3}" \
	${BENCH_CLIENTS:+BENCH_CLIENTS="$BENCH_CLIENTS"} \
	${BENCH_COST_FUNCS:+BENCH_COST_FUNCS="$BENCH_COST_FUNCS"} \
	${BENCH_COST_INFLIGHT:+BENCH_COST_INFLIGHT="$BENCH_COST_INFLIGHT"} \
	${BENCH_COST_DEPTH:+BENCH_COST_DEPTH="$BENCH_COST_DEPTH"} \
	selftests/bench/in-vm-cost.sh
cat "$OUT/bench-cost.md"
