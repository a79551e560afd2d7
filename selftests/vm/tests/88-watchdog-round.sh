#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-timeout: 240
#
# A long fair round is no reason to give up fair dispatch
# (Documentation/dispatch.rst, "Stuck clients").  The dispatcher's
# watchdog (timeout_ms) deals with slots held that long; a request that
# waits longer than that in a correct round is no sign of a broken
# dispatcher, and the bypass (kept only for a dispatcher bug: a client
# the round no longer reaches) must not fire.  Here a correct round
# makes a request wait many times timeout_ms: the storage model
# (slowfs: 5 ms a request, one in service), a program with a budget of 1
# slot and timeout_ms 1000 (progs/prefix_inflight1t), class 1
# (127.0.0.2, weight 1) reading 1 MiB at depth 4 and class 2 (127.0.0.3,
# weight 8) reading 4 KiB at depth 32, fio on cifs mounts, no SPLICE
# verdicts.  A 1 MiB READ costs 8 quanta of 128 KiB, so class 1 is
# served once every 8 rounds, each of them 8 quanta of small READs (256
# of 4 KiB, charged their bytes: about 1.3 s at 5 ms each).
# Asserted:
#   - a contested 1 MiB READ of class 1 waited 1.5 s or more in the
#     dispatcher (ksmbd_sched_dispatch wait_ns, waited=1, clients >= 2),
#     past the program's timeout_ms;
#   - no bypass: bypass 0, no kernel log line of the bypass;
#   - both readers saw no I/O error, counters back to 0.

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

LONG_MS=1500		# the wait to see: past the program's timeout_ms
BOUND_S=120		# at most this long for it (x TEST_TIMEOUT_SCALE)
BIG=$sched_tmp/big SMALL=$sched_tmp/small

slowfs_share_start --service-ms 5 --jitter-pct 0 --parallel 1 ||
	{ vm_fail "slowfs share started"; vm_finish; }
head -c 16M /dev/urandom >"$SLOWFS_BACKING/data.bin"
slowfs_mount 127.0.0.2 "$BIG"
slowfs_mount 127.0.0.3 "$SMALL"

smb-classify load "$FAIR_PROGS/prefix_inflight1t.bpf.o" >/dev/null
smb-classify prefix add 127.0.0.2/32 1 weight 1 >/dev/null
smb-classify prefix add 127.0.0.3/32 2 weight 8 >/dev/null
slowfs_no_splice 0 1 2
wd_ms=$(sched_proc watchdog_ms)
vm_check "the program's watchdog: watchdog_ms $wd_ms" test "$wd_ms" = 1000
seq0=$("$VM_DIR/kmsg-since" -1 | sed -n 's/^seq //p')
# Only the 1 MiB READs: the 4 KiB ones would be thousands of events.
sched_trace_only ksmbd_sched_dispatch filter 'bytes == 1048576'

fair_fio_json big "$BIG/data.bin" 600 4 1m
fair_fio_json small "$SMALL/data.bin" 600 32 4k

# longest: the longest contested wait of a 1 MiB READ so far, ms.
longest() {
	sched_events ksmbd_sched_dispatch '(.waited == 1 or .waited == true) and .clients >= 2' |
		jq -s 'map(.wait_ns) | max // 0 | . / 1000000 | floor'
}
deadline=$(( SECONDS + BOUND_S * ${TEST_TIMEOUT_SCALE:-1} ))
# contested: contested 1 MiB READs dispatched so far.
contested() {
	sched_count ksmbd_sched_dispatch '(.waited == 1 or .waited == true) and .clients >= 2'
}
# Until one waited LONG_MS and its client was served again: the first
# READ may be the one that waited.
long=0 n=0 tick=0
while (( SECONDS < deadline )); do
	[[ $(sched_proc bypass) == 1 ]] && break
	sched_trace_sync
	long=$(longest) n=$(contested)
	(( long >= LONG_MS && n >= 2 )) && break
	(( ++tick % 10 )) || echo "  $(( SECONDS )) s: longest 1 MiB READ wait $long ms; $(sched_proc_show inflight queued clients); $(tr '\n' ';' </proc/net/ksmbd_sched_clients 2>/dev/null)"
	sleep 2
done
sched_trace_sync
long=$(longest) n=$(contested)
echo "class 1: $n contested 1 MiB READs dispatched, the longest waited $long ms; watchdog_ms $wd_ms; guest load $(cut -d' ' -f1 /proc/loadavg)"
vm_check "no watchdog bypass (bypass $(sched_proc bypass), its wait $(( $(sched_proc bypass_wait_ns) / 1000000 )) ms)" \
	test "$(sched_proc bypass)" = 0
vm_check "a contested 1 MiB READ waited >= $LONG_MS ms in the dispatcher ($long ms), its client served meanwhile ($n READs)" \
	test "$long" -ge "$LONG_MS" -a "$n" -ge 2
n=$("$VM_DIR/kmsg-since" "$seq0" | grep -c "$SCHED_WATCHDOG_LOG" || true)
vm_check "no kernel log line '$SCHED_WATCHDOG_LOG ...' ($n)" test "$n" = 0
sched_trace_stop

fair_kill_all
vm_check "the 1 MiB reader saw no I/O error" fair_fio_json_ok big
vm_check "the 4 KiB reader saw no I/O error" fair_fio_json_ok small
vm_check "back to 0: inflight, queued, clients, payloads" vm_poll 30 fair_idle
vm_finish
