#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# selftests/bench/read-splice.sh: the zero-copy READ / unbound WRITE
# benchmark.  Boots the test VM once (selftests/vm/run) and runs
# selftests/bench/in-vm-splice.sh there; writes $OUT/bench-splice.md (and
# splice-raw.tsv) and prints it.  About 17 minutes; BENCH_QUICK=1 about 4.
#
# Environment: OUT (default $CACHE_DIR/bench/splice-DATE), BENCH_QUICK,
# KERNEL, CACHE_DIR, VM_TIMEOUT as for selftests/vm/run.

set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
CACHE_DIR=${CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ksmbd-bpf-sched}
OUT=${OUT:-$CACHE_DIR/bench/splice-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
export CACHE_DIR

cd "$top"
[[ -x tools/smb-classify/smb-classify ]] || make -s -C tools/smb-classify >/dev/null

timeout=${VM_TIMEOUT:-$( [[ ${BENCH_QUICK:-0} == 1 ]] && echo 600 || echo 1500 )}
echo "bench: one VM boot, output in $OUT (timeout ${timeout} s)" >&2
rc=0
VM_TIMEOUT=$timeout selftests/vm/run -t "$timeout" -o "$OUT/vm" \
	env BENCH_QUICK="${BENCH_QUICK:-0}" selftests/bench/in-vm-splice.sh >"$OUT/stdout" || rc=$?
cp "$OUT/vm/results/"* "$OUT/" 2>/dev/null || true
if [[ $rc != 0 || ! -s $OUT/bench-splice.md ]]; then
	echo "bench: the VM run failed (status $rc); see $OUT/vm" >&2
	tail -n 20 "$OUT/stdout" >&2 || true
	exit 1
fi
cat "$OUT/bench-splice.md"
