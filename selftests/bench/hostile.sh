#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# selftests/bench/hostile.sh: a victim's service beside hostile and
# unusual clients (Documentation/dispatch.rst, "Hostile and unusual
# clients"): alone, beside the client with nothing attached, and with the
# reference classifier attached, medians of repeated runs in one boot of
# the test VM (selftests/vm/run, Debian's kernel: FUSE for the storage
# model) running selftests/bench/in-vm-hostile.sh.  Writes
# $OUT/bench-hostile.md (and hostile-raw.tsv) and prints it.  The host's
# /proc/loadavg is sampled while the VM runs (lib.sh) and recorded around
# every run; disturbed cells are marked.
#
# Environment: OUT (default $CACHE_DIR/bench/hostile-DATE),
# BENCH_HOSTILE_RUNS (3), BENCH_HOSTILE (the scenarios: lie flood copies
# fsync), BENCH_QUIET_LOAD (3), VM_KERNEL, VM_TCG_THREAD (single), KERNEL,
# CACHE_DIR, VM_TIMEOUT as for selftests/vm/run.

set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
CACHE_DIR=${CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ksmbd-bpf-sched}
OUT=${OUT:-$CACHE_DIR/bench/hostile-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
export CACHE_DIR
export VM_KERNEL=${VM_KERNEL:-stock}
# One host thread for both vCPUs: the bench attaches and detaches 9 times
# a run, and each toggles a static key; with one thread per vCPU, QEMU's
# TCG can run a vCPU through code another is patching (the "Oops: int3"
# of selftests/vm/README.md).  Ratios are of one boot either way.
export VM_TCG_THREAD=${VM_TCG_THREAD:-single}

cd "$top"
make -s -C selftests/vm >/dev/null
[[ -x tools/smb-classify/smb-classify ]] || make -s -C tools/smb-classify >/dev/null

# shellcheck source=lib.sh
source "$here/lib.sh"
bench_vm "$OUT" "${VM_TIMEOUT:-2400}" bench-hostile.md \
	env BENCH_HOSTILE_RUNS="${BENCH_HOSTILE_RUNS:-3}" \
	BENCH_QUIET_LOAD="${BENCH_QUIET_LOAD:-3}" \
	${BENCH_HOSTILE:+BENCH_HOSTILE="$BENCH_HOSTILE"} \
	selftests/bench/in-vm-hostile.sh
cat "$OUT/bench-hostile.md"
