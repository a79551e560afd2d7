#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# selftests/bench/read-splice.sh: the spliced READ (copy vs private pages
# vs page-cache pages) / unbound WRITE benchmark.  Boots the test VM once
# (selftests/vm/run) and runs selftests/bench/in-vm-splice.sh there;
# writes $OUT/bench-splice.md (and splice-raw.tsv) and prints it.  All
# parts about 17 minutes on a quiet host (2026-11-30); the read and
# default parts took 19 minutes on a loaded one (2026-12-01);
# BENCH_QUICK=1 about 4.
#
# The host's /proc/loadavg is sampled every 2 s while the VM runs; the
# guest records it before and after every run, and a run with the host
# busier than BENCH_QUIET_LOAD is marked disturbed in the tables.
#
# Environment: OUT (default $CACHE_DIR/bench/splice-DATE), BENCH_QUICK,
# BENCH_PARTS (any of: read default write order; default all), BENCH_RSIZES
# and BENCH_READ_QDS (the read part's sizes and depths), BENCH_RUNS
# (repeats, default 3), BENCH_QUIET_LOAD (default 3), KERNEL, CACHE_DIR,
# VM_TIMEOUT as for selftests/vm/run.

set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
CACHE_DIR=${CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ksmbd-bpf-sched}
OUT=${OUT:-$CACHE_DIR/bench/splice-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
export CACHE_DIR

cd "$top"
[[ -x tools/smb-classify/smb-classify ]] || make -s -C tools/smb-classify >/dev/null

timeout=${VM_TIMEOUT:-$( [[ ${BENCH_QUICK:-0} == 1 ]] && echo 600 || echo 1800 )}
# shellcheck source=lib.sh
source "$here/lib.sh"
bench_vm "$OUT" "$timeout" bench-splice.md \
	env BENCH_QUICK="${BENCH_QUICK:-0}" BENCH_PARTS="${BENCH_PARTS:-read default write order}" \
	BENCH_RSIZES="${BENCH_RSIZES:-}" BENCH_READ_QDS="${BENCH_READ_QDS:-1 8}" \
	BENCH_RUNS="${BENCH_RUNS:-3}" BENCH_QUIET_LOAD="${BENCH_QUIET_LOAD:-3}" \
	selftests/bench/in-vm-splice.sh
cat "$OUT/bench-splice.md"
