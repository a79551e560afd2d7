#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A connection storm while a program is attached: STORM_V4 (default
# 1000) connections from distinct addresses in 127.10.0.0/16 and
# STORM_V6 (default 200) from distinct addresses in fd00:5b::/64 (routed
# to lo as local), each connect, NEGOTIATE, close, 16 at a time
# (selftests/vm/storm.py).  With "::/0 -> 0 per-peer" every peer is its own
# client.  Asserts:
#   - every NEGOTIATE succeeded;
#   - conns_classified grew by exactly the number of connections, and
#     the ksmbd_sched_conn events of the storm name every source once;
#   - afterwards: inflight 0, queued 0, clients 0, payloads 0,
#     payload_pages 0, no established connection to port 445;
#   - ksmbd still serves (smbclient ls) with no kernel warning.
# vm-timeout: 600

set -euo pipefail
# shellcheck source=../lib.sh
source "${VM_DIR:?run me inside the VM: selftests/vm/run $0}/lib.sh"
# shellcheck source=../testlib-sched.sh
source "$VM_DIR/testlib-sched.sh"
# shellcheck source=../testlib-fair.sh
source "$VM_DIR/testlib-fair.sh"
trap 'ip -6 route del local fd00:5b::/64 dev lo 2>/dev/null; sched_cleanup' EXIT

v4=${TEST_STORM_V4:-1000}
v6=${TEST_STORM_V6:-200}
n=$((v4 + v6))

ip -6 route add local fd00:5b::/64 dev lo
smb-classify load >/dev/null
smb-classify prefix add ::/0 0 per-peer >/dev/null
sched_trace_start
c0=$(sched_proc conns_classified)

if out=$(python3 "$VM_DIR/storm.py" --v4 "$v4" --v6 "$v6" --seconds 600); then
	vm_pass "storm: $out"
else
	vm_fail "storm: $out"
fi
vm_check "conns_classified grew by exactly $n ($(( $(sched_proc conns_classified) - c0 )))" \
	test "$(( $(sched_proc conns_classified) - c0 ))" = "$n"
sched_trace_sync
peers=$(sched_events ksmbd_sched_conn '.peer | test("^::ffff:127\\.10\\.|^fd00:5b::")' |
	jq -r .peer | sort -u | wc -l)
vm_check "conn events name all $n sources ($peers)" test "$peers" = "$n"
vm_check "afterwards: inflight 0, queued 0, clients 0, nothing held" vm_poll 60 fair_idle
vm_check "no established connection to port 445 is left" \
	vm_poll 60 eval 'test "$(ss -Htn state established "( dport = :445 )" | wc -l)" = 0'
sched_route_src 127.0.0.2
vm_check "ksmbd still serves" eval 'smbclient "//127.0.0.2/$SMB_SHARE" "${sched_auth[@]}" -m SMB3 -c ls >/dev/null'
grep -Ev '^class' "$SCHED_PROC" | tr '\n' ' '; echo
smb-classify unload >/dev/null
vm_finish
