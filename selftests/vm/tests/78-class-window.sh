#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Per-class counters match the tracepoints over one window.
# Three clients (127.0.0.2 -> class 1, 127.0.0.3 -> class 2
# weight 2, 127.0.0.4 -> class 3) read and write at the same time through
# the reference classifier with max-inflight 2, so data requests wait in
# the dispatcher.  The window: from an idle dispatcher (inflight 0,
# queued 0) with "smb-classify -j trace" running, a snapshot of
# "status -o kernel" (JSON) and of "status -o openmetrics", the clients'
# sessions, idle again with their connections closed on the server
# ("smb-classify clients"), the second snapshots, then the trace is
# flushed.
# For each class, over the window:
#   - "dispatched" grew by exactly the ksmbd_sched_dispatch events of the
#     class that took a slot (waited=1), "bytes" by exactly the sum of
#     their bytes, "bypassed" by exactly the control requests (waited=0,
#     not dropped);
#   - the OpenMetrics counters ksmbd_sched_dispatched_requests_total and
#     ksmbd_sched_bytes_total (parsed by prometheus_client) grew by the
#     same numbers;
#   - every request has one ksmbd_sched_req and one ksmbd_sched_dispatch
#     event of its class, and their count is the growth of
#     reqs_classified (so the trace lost nothing);
#   - the bytes cover what the clients moved (>= read + written), and
#     every file read is byte-exact.
# vm-timeout: 300

set -euo pipefail
# shellcheck source=../lib.sh
source "${VM_DIR:?run me inside the VM: selftests/vm/run $0}/lib.sh"
# shellcheck source=../testlib-sched.sh
source "$VM_DIR/testlib-sched.sh"
trap 'sched_ltrace_stop; sched_cleanup' EXIT

tmp=$sched_tmp
CLASSES=(1 2 3)
SIZE=$((3 << 20))

smb-classify load max-inflight 2 >/dev/null
smb-classify prefix add 127.0.0.2/32 1 >/dev/null
smb-classify prefix add 127.0.0.3/32 2 weight 2 >/dev/null
smb-classify prefix add 127.0.0.4/32 3 >/dev/null
vm_check "max_inflight 2 in the kernel" test "$(sched_proc max_inflight)" = 2
for c in "${CLASSES[@]}"; do
	sched_route_src "127.0.0.$((c + 1))"
	head -c "$SIZE" /dev/urandom >"$SMB_SHARE_DIR/r$c.bin"
	head -c "$SIZE" /dev/urandom >"$tmp/w$c.bin"
done

idle() { vm_sched_zero inflight queued; }
# closed: idle, and no connection of the three classes left bound (a
# client may close its socket before the server has read its last
# requests, e.g. LOGOFF: the window ends once the server is done).
closed() {
	idle && (( $(smb-classify -j clients |
		jq '[.[] | select(.class >= 1 and .class <= 3) | .conns] | add // 0') == 0 ))
}
snapshot() {
	smb-classify -j -o kernel status >"$tmp/k$1.json"
	smb-classify status -o openmetrics >"$tmp/om$1.txt"
}

sched_ltrace_start "$tmp/t.json"
vm_check "idle before the window" vm_poll 30 idle
snapshot 1
pids=()
for c in "${CLASSES[@]}"; do
	sched_smbclient "127.0.0.$((c + 1))" \
		"get r$c.bin $tmp/g$c.bin; put $tmp/w$c.bin p$c.bin; get r$c.bin $tmp/h$c.bin" \
		>"$tmp/c$c.out" 2>&1 &
	pids+=("$!")
done
for i in "${!pids[@]}"; do
	c=${CLASSES[$i]}
	if wait "${pids[$i]}"; then
		vm_pass "client of class $c: get, put, get"
	else
		vm_fail "client of class $c: $(cat "$tmp/c$c.out")"
	fi
done
vm_check "idle after the window, the clients' connections closed" vm_poll 60 closed
snapshot 2
sched_ltrace_sync "$tmp/t.json"

for c in "${CLASSES[@]}"; do
	w=$(sched_sha "$SMB_SHARE_DIR/r$c.bin")
	vm_check "class $c: both reads byte-exact, the write too" \
		test "$(sched_sha "$tmp/g$c.bin")/$(sched_sha "$tmp/h$c.bin")/$(sched_sha "$SMB_SHARE_DIR/p$c.bin")" = \
			"$w/$w/$(sched_sha "$tmp/w$c.bin")"
done

# kdelta ID FIELD: growth of a class counter between the snapshots.
kdelta() {
	local a b
	a=$(jq --argjson id "$1" --arg f "$2" '[.classes[] | select(.class == $id) | .[$f]] | first // 0' "$tmp/k1.json")
	b=$(jq --argjson id "$1" --arg f "$2" '[.classes[] | select(.class == $id) | .[$f]] | first // 0' "$tmp/k2.json")
	echo $(( b - a ))
}
# tcount FILTER: events of the window matching the jq FILTER.
tcount() { jq -s "[.[] | select($1)] | length" "$tmp/t.json"; }
tsum() { jq -s "[.[] | select($1) | .bytes] | add // 0" "$tmp/t.json"; }
waited='(.waited == 1 or .waited == true)'
notdropped='(.dropped == 0 or .dropped == false)'

# OpenMetrics deltas, one "CLASS DISPATCHED BYTES" line per class.
if ! om=$(python3 - "$tmp/om1.txt" "$tmp/om2.txt" <<'PY' 2>&1
import sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families

def load(path):
    v = {}
    for fam in text_string_to_metric_families(open(path).read()):
        for s in fam.samples:
            if s.name in ("ksmbd_sched_dispatched_requests_total",
                          "ksmbd_sched_bytes_total") and "class" in s.labels:
                v[(s.name, s.labels["class"])] = int(s.value)
    return v

a, b = load(sys.argv[1]), load(sys.argv[2])
for c in sorted({k[1] for k in b}, key=int):
    d = [b.get((n, c), 0) - a.get((n, c), 0)
         for n in ("ksmbd_sched_dispatched_requests_total",
                   "ksmbd_sched_bytes_total")]
    print(c, d[0], d[1])
PY
); then
	vm_fail "openmetrics snapshots do not parse: $om"
	om=
fi
echo "openmetrics deltas (class dispatched bytes): ${om//$'\n'/; }"

total_req=0
for c in "${CLASSES[@]}"; do
	ev_disp=$(tcount ".event == \"ksmbd_sched_dispatch\" and .class == $c and $waited")
	ev_bytes=$(tsum ".event == \"ksmbd_sched_dispatch\" and .class == $c and $waited")
	ev_ctl=$(tcount ".event == \"ksmbd_sched_dispatch\" and .class == $c and ($waited | not) and $notdropped")
	ev_all=$(tcount ".event == \"ksmbd_sched_dispatch\" and .class == $c")
	ev_req=$(tcount ".event == \"ksmbd_sched_req\" and .class == $c")
	kd=$(kdelta "$c" dispatched) kb=$(kdelta "$c" bytes) kp=$(kdelta "$c" bypassed)
	echo "class $c: trace dispatched=$ev_disp bytes=$ev_bytes control=$ev_ctl all=$ev_all req=$ev_req; counters +$kd +$kb bytes +$kp bypassed"
	vm_check "class $c: dispatched +$kd = $ev_disp slot-taking dispatch events" \
		test "$kd" = "$ev_disp" -a "$kd" -gt 0
	vm_check "class $c: bytes +$kb = $ev_bytes, their bytes summed" test "$kb" = "$ev_bytes"
	vm_check "class $c: bytes cover the 2 reads and the write (>= $((3 * SIZE)))" \
		test "$kb" -ge $((3 * SIZE))
	vm_check "class $c: bypassed +$kp = $ev_ctl control dispatch events" \
		test "$kp" = "$ev_ctl" -a "$kp" -gt 0
	vm_check "class $c: one req and one dispatch event per request ($ev_req, $ev_all)" \
		test "$ev_req" = "$ev_all"
	vm_check "class $c: openmetrics dispatched and bytes grew by $kd and $kb" \
		grep -qx "$c $kd $kb" <<<"$om"
	total_req=$(( total_req + ev_req ))
done
kreq=$(( $(jq .reqs_classified "$tmp/k2.json") - $(jq .reqs_classified "$tmp/k1.json") ))
vm_check "reqs_classified +$kreq = $total_req req events of the three classes (nothing lost)" \
	test "$kreq" = "$total_req"
vm_check "no request dropped in the window" \
	test "$(tcount ".event == \"ksmbd_sched_dispatch\" and ($notdropped | not)")" = 0

smb-classify unload >/dev/null
vm_finish
