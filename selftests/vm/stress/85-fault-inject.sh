#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fault injection during READs and dispatch.  Needs
# failslab, fail_page_alloc and fail_function: Debian's kernel and the
# plain tiny kernel have none of them, the KDEBUG kernel has all
# (kernel/config/debug.config), so run it as
#     KDEBUG=1 make stress STRESS=85-fault-inject
# (on another kernel it is skipped, saying why).  With the reference
# classifier (class 1: 127.0.0.2, class 2: 127.0.0.3, class 3:
# 127.0.0.4, splice-min 16K for each) and cifs mounts (cache=none, so
# every read goes to the server):
#   (a) fail_function on ksmbd_read_payload_new() (page-cache payloads):
#       every injected failure is one READ copied instead, reason nomem
#       (read_payload events = the injected count exactly), every read
#       byte-exact;
#   (b) the same for ksmbd_read_payload_fill() with -ENOMEM, private
#       pages (read_payload_pagecache=0);
#   (c) fail_function on ksmbd_disp_conn_bind() with -ENOMEM while new
#       connections read: their requests run outside the dispatcher
#       (alloc_fail grows), every read byte-exact;
#   (d) failslab and fail_page_alloc (sleeping allocations and order 0
#       included) for the ksmbd receiver threads of one client only
#       (task-filter, make-it-fail), marked again after each reconnect,
#       while that client and a second one read: the victim's
#       connections fail like a disconnect (its reads may fail, never
#       return wrong bytes), the other client's reads all succeed
#       byte-exact, and once injection stops the victim reads exactly
#       again;
# and after each case inflight, queued, clients, payloads and
# payload_pages are exactly 0.  The harness fails the test on any
# kernel report (WARNING, BUG, KASAN, lockdep, ...); the injected
# failures themselves log only "FAULT_INJECTION: forcing a failure"
# (verbose 1) and the page allocator's "page allocation failure".
# Runs on the KDEBUG kernel: selftests/bench/results/<date>/README.md,
# "The KASAN/lockdep runs".
# vm-timeout: 900

set -euo pipefail
# shellcheck source=../lib.sh
source "${VM_DIR:?run me inside the VM: selftests/vm/run $0}/lib.sh"
# shellcheck source=../testlib-sched.sh
source "$VM_DIR/testlib-sched.sh"

DBG=/sys/kernel/debug
FF=$DBG/fail_function
PARAM=/sys/module/ksmbd/parameters/read_payload_pagecache
for f in failslab fail_page_alloc fail_function; do
	[[ -d $DBG/$f ]] || vm_skip_test "no $DBG/$f: this kernel has no fault injection (KDEBUG=1 make stress STRESS=85-fault-inject)"
done

LOOP_PIDS=()
fi_off() {
	local f
	for f in failslab fail_page_alloc fail_function; do
		echo 0 >"$DBG/$f/probability" 2>/dev/null || true
		echo 0 >"$DBG/$f/times" 2>/dev/null || true
		echo N >"$DBG/$f/task-filter" 2>/dev/null || true
	done
	echo >"$FF/inject" 2>/dev/null || true
}
cleanup() {
	local p
	fi_off
	for p in "${LOOP_PIDS[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	for p in "${LOOP_PIDS[@]}"; do
		wait "$p" 2>/dev/null || true
	done
	echo Y >"$PARAM" 2>/dev/null || true
	sched_ltrace_stop
	sched_cleanup
}
trap cleanup EXIT
fi_off

tmp=$sched_tmp
SIZE=$((4 << 20))
head -c "$SIZE" /dev/urandom >"$SMB_SHARE_DIR/data.bin"
want=$(sched_sha "$SMB_SHARE_DIR/data.bin")

smb-classify load >/dev/null
for c in 1 2 3; do
	smb-classify prefix add "127.0.0.$((c + 1))/32" "$c" >/dev/null
	smb-classify policy set "$c" splice-min 16K >/dev/null
	sched_route_src "127.0.0.$((c + 1))"
done

# fi_arm NAME PROBABILITY TIMES: inject into NAME (failslab,
# fail_page_alloc, fail_function) at PROBABILITY percent, at most TIMES
# failures, one log line each.
fi_arm() {
	echo 1 >"$DBG/$1/interval"
	echo 1 >"$DBG/$1/verbose"
	echo "$3" >"$DBG/$1/times"
	echo "$2" >"$DBG/$1/probability"
}
# fi_injected NAME TIMES: failures injected since fi_arm NAME _ TIMES.
fi_injected() { echo $(( $2 - $(cat "$DBG/$1/times") )); }
fi_at_least() { (( $(fi_injected "$1" "$2") >= $3 )); }

# ff_target FUNC [ERRNO]: fail_function injects into FUNC only (retval
# -ERRNO, or NULL for a pointer).
ff_target() {
	echo >"$FF/inject"
	if ! grep -qw "^$1" "$FF/injectable"; then
		vm_fail "$1 is not in $FF/injectable"
		return 1
	fi
	echo "$1" >"$FF/inject"
	[[ -z ${2:-} ]] || printf %#x "-$2" >"$FF/$1/retval"
}

# read_loop MNT N NAME: read MNT/data.bin N times in 1 MiB reads (one
# READ each: cache=none), exactly SIZE bytes: no READ at the end of the
# file (an injected failure there leaves no trace, since an error reply
# has no read_payload event); count exact reads, failed reads and wrong
# bytes in $tmp/NAME.{ok,err,bad}.
read_loop() {
	local mnt=$1 n=$2 name=$3 i got ok=0 err=0 bad=0
	for (( i = 0; i < n; i++ )); do
		if got=$(dd if="$mnt/data.bin" bs=1M count=$((SIZE >> 20)) 2>/dev/null | sha256sum); then
			if [[ ${got%% *} == "$want" ]]; then ok=$((ok + 1)); else bad=$((bad + 1)); fi
		else
			err=$((err + 1))
		fi
		echo "$ok" >"$tmp/$name.ok"; echo "$err" >"$tmp/$name.err"; echo "$bad" >"$tmp/$name.bad"
		[[ -e $tmp/$name.stop ]] && break
	done
	return 0
}
counts() { echo "$(cat "$tmp/$1.ok") exact, $(cat "$tmp/$1.err") failed, $(cat "$tmp/$1.bad") wrong"; }

idle() { vm_sched_zero inflight queued clients payloads payload_pages; }
# READ replies copied because no payload could be had: path 9
# (KSMBD_READ_NOMEM of enum ksmbd_read_path; 0 is spliced).
nomem_events() {
	jq -r 'select(.event == "ksmbd_read_payload" and .path == 9) | .src' "$1" | wc -l
}

# ---- (a), (b): READ payload allocations fail: copy instead -------------------
sched_mount 127.0.0.2 127.0.0.1 "$tmp/a"
for case in a b; do
	if [[ $case == a ]]; then
		fn=ksmbd_read_payload_new errno=
	else
		fn=ksmbd_read_payload_fill errno=12
		echo N >"$PARAM"
	fi
	ff_target "$fn" $errno || continue
	sched_ltrace_start "$tmp/$case.json"
	fi_arm fail_function 50 40
	echo 2 >"$DBG/fail_function/verbose"	# a stack per failure: its caller
	read_loop "$tmp/a" 40 "$case"
	injected=$(fi_injected fail_function 40)
	fi_off
	vm_check "($case) idle: inflight, queued, clients, payloads, payload_pages 0" vm_poll 30 idle
	sched_ltrace_sync "$tmp/$case.json"
	nomem=$(nomem_events "$tmp/$case.json")
	spliced=$(jq -r 'select(.event == "ksmbd_read_payload" and .path == 0) | .src' "$tmp/$case.json" | sort | uniq -c | tr -s ' \n' ' ')
	echo "($case) $fn: $injected injected, $nomem READs copied (nomem), spliced: $spliced; reads: $(counts "$case")"
	# Where every READ went (path/src), and the READs seen by the
	# other tracepoints: an injection that left no nomem copy shows here.
	echo "($case) read_payload path/src: $(jq -r 'select(.event == "ksmbd_read_payload") | "\(.path)/\(.src)"' "$tmp/$case.json" | sort | uniq -c | tr -s ' \n' ' ')"
	echo "($case) READ requests (length: count): $(jq -r 'select(.event == "ksmbd_sched_req" and .cmd == "READ") | .length' "$tmp/$case.json" | sort | uniq -c | tr -s ' \n' ' '); READ dispatches: $(jq -r 'select(.event == "ksmbd_sched_dispatch" and .cmd == "READ") | .bytes' "$tmp/$case.json" | wc -l)"
	reqs=$(jq -r 'select(.event == "ksmbd_sched_req" and .cmd == "READ") | .length' "$tmp/$case.json" | wc -l)
	events=$(jq -r 'select(.event == "ksmbd_read_payload") | .path' "$tmp/$case.json" | wc -l)
	vm_check "($case) $fn failed $injected times (> 0)" test "$injected" -gt 0
	vm_check "($case) one read_payload event per READ request ($events of $reqs, > 0)" \
		test "$events" = "$reqs" -a "$reqs" -gt 0
	vm_check "($case) each failure is one READ copied instead (reason nomem): $nomem" \
		test "$nomem" = "$injected"
	vm_check "($case) the other READs were spliced" test -n "$spliced"
	vm_check "($case) every read succeeded byte-exact ($(counts "$case"))" \
		test "$(cat "$tmp/$case.err")/$(cat "$tmp/$case.bad")" = 0/0
	echo Y >"$PARAM"
done
umount "$tmp/a"

# ---- (c) a connection that cannot be bound runs outside the dispatcher -------
if ff_target ksmbd_disp_conn_bind 12; then
	af0=$(sched_proc alloc_fail)
	fi_arm fail_function 100 30
	ok=0
	for i in $(seq 1 6); do
		if out=$(sched_smbclient 127.0.0.4 "get data.bin $tmp/c$i.bin" 2>&1) &&
			[[ $(sched_sha "$tmp/c$i.bin") == "$want" ]]; then
			ok=$((ok + 1))
		else
			echo "(c) session $i: $out"
		fi
	done
	injected=$(fi_injected fail_function 30)
	fi_off
	af=$(( $(sched_proc alloc_fail) - af0 ))
	echo "(c) ksmbd_disp_conn_bind failed $injected times; alloc_fail +$af; $ok of 6 sessions exact"
	vm_check "(c) ksmbd_disp_conn_bind failed (injected $injected)" test "$injected" -gt 0
	vm_check "(c) their data requests ran outside the dispatcher: alloc_fail +$af" test "$af" -gt 0
	vm_check "(c) every session read byte-exact ($ok of 6)" test "$ok" = 6
	vm_check "(c) idle: inflight, queued, clients, payloads, payload_pages 0" vm_poll 30 idle
fi

# ---- (d) failslab + fail_page_alloc for one client's receiver threads --------
sched_mount 127.0.0.2 127.0.0.1 "$tmp/victim"
sched_mount 127.0.0.3 127.0.0.1 "$tmp/other"
echo N >"$DBG/failslab/ignore-gfp-wait"
echo N >"$DBG/fail_page_alloc/ignore-gfp-wait"
echo 0 >"$DBG/fail_page_alloc/min-order"
echo Y >"$DBG/failslab/task-filter"
echo Y >"$DBG/fail_page_alloc/task-filter"
# mark_victim: make-it-fail for the receiver thread ("ksmbd:PORT") of
# each connection from 127.0.0.2; counts the ports seen.
declare -A VICTIM_PORTS
mark_victim() {
	local port pid
	for port in $(sched_client_port 127.0.0.2); do
		for pid in $(pgrep -x "ksmbd:$port"); do
			echo 1 >"/proc/$pid/make-it-fail" 2>/dev/null || true
		done
		VICTIM_PORTS[$port]=1
	done
}
mark_victim
vm_check "(d) the victim's receiver thread is marked" test "${#VICTIM_PORTS[@]}" -ge 1
fi_arm failslab 20 200
fi_arm fail_page_alloc 20 200
read_loop "$tmp/victim" 100000 victim & LOOP_PIDS+=("$!")
read_loop "$tmp/other" 100000 other & LOOP_PIDS+=("$!")
# Until 20 failures were injected (bounded: 240 s; each may cost the
# victim a reconnect), re-marking the victim's threads after each one.
injected_both() {
	mark_victim
	(( $(fi_injected failslab 200) + $(fi_injected fail_page_alloc 200) >= 20 ))
}
vm_check "(d) 20 failures injected into the victim's receiver threads" vm_poll 240 injected_both
echo "(d) failslab $(fi_injected failslab 200), fail_page_alloc $(fi_injected fail_page_alloc 200) injected; victim connections (ports) seen: ${#VICTIM_PORTS[@]}"
fi_off
touch "$tmp/victim.stop" "$tmp/other.stop"
# A read of the victim may wait for its reconnect: bounded, then killed.
for p in "${LOOP_PIDS[@]}"; do
	vm_poll 120 eval "! kill -0 $p 2>/dev/null" || { echo "(d) reader $p still running: killed"; kill -9 "$p"; }
	wait "$p" 2>/dev/null || true
done
LOOP_PIDS=()
echo "(d) victim reads: $(counts victim); other client: $(counts other)"
vm_check "(d) the victim never got wrong bytes" test "$(cat "$tmp/victim.bad")" = 0
vm_check "(d) the other client's reads all exact ($(counts other))" \
	test "$(cat "$tmp/other.err")/$(cat "$tmp/other.bad")" = 0/0 -a "$(cat "$tmp/other.ok")" -gt 0
vm_check "(d) the victim reads exactly again once injection stops" \
	vm_poll 120 eval 'test "$(sched_sha "$tmp/victim/data.bin" 2>/dev/null)" = "$want"'
umount -f "$tmp/victim" 2>/dev/null || umount -l "$tmp/victim"
umount "$tmp/other"
vm_check "(d) idle: inflight, queued, clients, payloads, payload_pages 0" vm_poll 60 idle

smb-classify unload >/dev/null
vm_finish
