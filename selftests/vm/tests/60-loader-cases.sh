#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The loader against the live kernel: load, unload and apply killed
# with SIGKILL at each named step (SMB_CLASSIFY_STOP_AT): afterwards the
# kernel runs the old policy or the new one, whole, as the step says, and
# the pins name it; then load, unload, load cycles.  Bad prefixes (bad
# lengths, non-decimal octets) and a bad class or weight leave a live map
# unchanged with one Error: line, prefix del of a missing prefix fails,
# edge prefixes (/31, /127, /0) are stored as written, and every JSON
# output parses.
# vm-timeout: 480

set -euo pipefail
# shellcheck source=../lib.sh
source "${VM_DIR:?run me inside the VM: selftests/vm/run $0}/lib.sh"
# shellcheck source=../testlib-sched.sh
source "$VM_DIR/testlib-sched.sh"
trap 'sched_ltrace_stop; sched_cleanup' EXIT

tmp=$sched_tmp
ino=$(sched_netns_ino)
pin=$SCHED_PINS/$ino/link

struct_ops_links() {
	bpftool link show -j 2>/dev/null | jq '[.[] | select(.type == "struct_ops")] | length'
}
# One program attached with a matching pin (and one struct_ops link in
# the system), or none, no pin, no link.
consistent() {
	local att id pinned_id
	att=$(sched_proc attached)
	id=$(sched_proc link_id)
	if [[ -e $pin ]]; then
		# bpftool 7.5 prints the link but exits 255 for a pinned
		# struct_ops link: judge by the JSON.
		pinned_id=$({ bpftool link show pinned "$pin" -j 2>/dev/null || true; } | jq .id) || return 1
		[[ $pinned_id =~ ^[0-9]+$ ]] || return 1
		[[ $att == 1 && $id == "$pinned_id" && $(struct_ops_links) == 1 ]]
	else
		[[ $att == 0 && $(struct_ops_links) == 0 ]]
	fi
}
state() {
	echo "  attached=$(sched_proc attached) link_id=$(sched_proc link_id) pin=$(test -e "$pin" && echo yes || echo no) struct_ops_links=$(struct_ops_links)"
	ls -l "$SCHED_PINS/$ino" 2>/dev/null | sed 's/^/  /' || true
}

vm_check "clean start" consistent

# ---- SIGKILL at each step of load, unload and apply ------------------------
# SMB_CLASSIFY_STOP_AT=POINT makes the loader stop itself (SIGSTOP) at
# that step; it is killed there, never by timing.  Then the kernel state
# must be the old one or the new one exactly, as the step says.
killed=0
# kill_at POINT CMD...: run CMD stopping at POINT, SIGKILL it there.
kill_at() {
	local point=$1 pid rc=0
	shift
	SMB_CLASSIFY_STOP_AT=$point "$@" >/dev/null 2>"$tmp/stop.err" &
	pid=$!
	vm_poll 30 vm_settled "$pid" || true
	if ! vm_stopped "$pid"; then
		wait "$pid" || rc=$?
		vm_fail "killed: $* never stopped at $point (status $rc): $(cat "$tmp/stop.err")"
		return 1
	fi
	kill -KILL "$pid"
	wait "$pid" || rc=$?
	(( rc == 137 )) && killed=$((killed + 1))
	[[ $(cat "$tmp/stop.err") == "stopped at $point" ]] ||
		vm_fail "killed: $* at $point: stderr '$(cat "$tmp/stop.err")'"
}
# The attached programs use the maps the pins name: what the loader
# shows (prefix list, dump) is what the kernel runs.
pins_in_force() {
	local ids m id
	ids=$(smb-classify -j status | jq -r '.progs[].id' | while read -r p; do
		bpftool prog show id "$p" -j | jq -r '.map_ids[]'; done | sort -u)
	for m in prefixes policy; do
		[[ -e $SCHED_PINS/$ino/$m ]] || continue
		id=$(bpftool map show pinned "$SCHED_PINS/$ino/$m" -j | jq .id)
		grep -qx "$id" <<<"$ids" || return 1
	done
}
no_new_pins() { ! compgen -G "$SCHED_PINS/$ino/*_new" >/dev/null; }
pins_ok() { pins_in_force && no_new_pins && consistent; }
a_in_force() {
	cmp -s <(smb-classify dump) "$tmp/ka.dump" && [[ $(sched_proc max_inflight) == 4 ]]
}

# load from nothing: before the link is pinned nothing is attached and a
# new load succeeds; from then on one program is attached and a new
# load is refused.
for point in locked loaded maps-pinned attached pinned renamed; do
	kill_at "$point" smb-classify load || continue
	want=1
	[[ $point == locked || $point == loaded || $point == maps-pinned ||
		$point == attached ]] && want=0
	vm_poll 10 consistent || { state; }
	vm_check "load killed at $point: attached=$want, pin matches" \
		test "$(sched_proc attached)" = "$want" -a "$(consistent && echo ok)" = ok
	if (( want )); then
		out=$(smb-classify load 2>&1) && vm_fail "killed: $point: load over the pinned link succeeded: $out"
	else
		vm_check "load killed at $point: the next load succeeds" smb-classify load
	fi
	smb-classify unload >/dev/null
	vm_check "after a kill at $point: unload leaves nothing" \
		test "$(sched_proc attached)" = 0 -a ! -e "$SCHED_PINS/$ino"
done

# unload killed after the detach: nothing attached; the pins left are
# stale, and the next load removes them and attaches.
smb-classify load >/dev/null
if kill_at detached smb-classify unload; then
	# The detached link lives on in its pin until the next command.
	vm_check "unload killed at detached: nothing attached" \
		test "$(sched_proc attached)" = 0
	vm_check "unload killed at detached: the next load succeeds" smb-classify load
	vm_check "unload killed at detached: consistent after the load" consistent
	smb-classify unload >/dev/null
fi

# apply A -> B killed at each step: the kernel's max_inflight (the ops
# value in force) and the policy the pins show are A's or B's, whole.
printf '[global]\nmax inflight = 4\n[class 1]\nprefix = 10.1.0.0/24\nsplice min = 16K\n' >"$tmp/ka.conf"
printf '[global]\nmax inflight = 6\n[class 2]\nweight = 2\nunbound min = 256K\nprefix = 10.2.0.0/16\nprefix = ::1/128\n' >"$tmp/kb.conf"
smb-classify apply "$tmp/kb.conf" >/dev/null && smb-classify dump >"$tmp/kb.dump"
smb-classify apply "$tmp/ka.conf" >/dev/null && smb-classify dump >"$tmp/ka.dump"
for point in locked loaded maps-pinned attached pinned renamed; do
	kill_at "$point" smb-classify apply "$tmp/kb.conf" || continue
	w=b max=6
	[[ $point == locked || $point == loaded || $point == maps-pinned ]] && w=a max=4
	smb-classify dump >"$tmp/k.dump"
	vm_check "apply killed at $point: the kernel runs ${w^^} (max_inflight $max)" \
		test "$(sched_proc max_inflight)" = "$max"
	vm_check "apply killed at $point: dump is ${w^^} exactly" cmp -s "$tmp/k.dump" "$tmp/k$w.dump"
	vm_check "apply killed at $point: the pins name the maps in force, no _new pin left" \
		pins_ok
	smb-classify apply "$tmp/ka.conf" >/dev/null
	vm_check "apply killed at $point: apply A again, A in force" a_in_force
done
smb-classify unload >/dev/null
echo "killed: $killed runs killed at their stop point"
vm_check "13 runs killed, each at its point" test "$killed" = 13

for c in 1 2 3; do
	smb-classify load >/dev/null
	vm_check "load/unload cycle $c: loaded, pin matches" \
		test "$(sched_proc attached)" = 1
	vm_check "load/unload cycle $c: consistent after load" consistent
	smb-classify unload >/dev/null
	vm_check "load/unload cycle $c: consistent after unload, nothing attached" \
		test "$(sched_proc attached)" = 0 -a ! -e "$pin"
done

# ---- effects in the kernel: max-inflight, policy del, trace -c ---------------
head -c 64K /dev/urandom >"$SMB_SHARE_DIR/k.bin"
smb-classify load >/dev/null
default=$(sched_proc max_inflight)
smb-classify unload >/dev/null
smb-classify load max-inflight 3 >/dev/null
vm_check "load max-inflight 3: the kernel's budget is 3 (default $default)" \
	test "$(sched_proc max_inflight)" = 3 -a "$default" != 3
smb-classify replace max-inflight 5 >/dev/null
vm_check "replace max-inflight 5: the kernel's budget is 5" test "$(sched_proc max_inflight)" = 5

# queue of each READ of 4 KiB or more (ksmbd_sched_req verdicts, decoded
# by the loader), of one smbclient get of k.bin: "percpu", "unbound".
read_queues() {
	sched_ltrace_start "$tmp/q.json" || return 1
	sched_smbclient 127.0.0.1 "get k.bin $tmp/k.out" >/dev/null 2>&1 ||
		echo "smbclient get failed" >&2
	sched_ltrace_sync "$tmp/q.json"
	jq -r 'select(.event == "ksmbd_sched_req" and .cmd == "READ" and .length >= 4096) | .queue' \
		"$tmp/q.json" | sort -u | tr '\n' ' '
}
smb-classify policy set 0 unbound-min 4K >/dev/null
got=$(read_queues)
vm_check "policy set 0 unbound-min 4K: class 0's READs run unbound ($got)" test "$got" = "unbound "
smb-classify policy del 0 >/dev/null
got=$(read_queues)
vm_check "policy del 0: class 0's READs are back on the per-CPU queue ($got)" test "$got" = "percpu "

# trace -c 5 stops by itself after 5 events of this netns, and removes
# its trace instance.
smb-classify -j trace -c 5 >"$tmp/tc.json" 2>"$tmp/tc.err" &
tpid=$!
vm_poll 30 grep -q '^tracing ksmbd events' "$tmp/tc.err" || true
sched_smbclient 127.0.0.1 "get k.bin $tmp/k.out" >/dev/null 2>&1 || true
vm_poll 30 vm_settled "$tpid" || kill -TERM "$tpid" 2>/dev/null || true
rc=0
wait "$tpid" || rc=$?
vm_check "trace -c 5: exits 0 by itself with 5 events (status $rc)" \
	test "$rc" = 0 -a "$(jq -s length "$tmp/tc.json")" = 5
vm_check "trace -c 5: every event of this netns" \
	test "$(jq -s "all(.[]; .netns_ino == $ino)" "$tmp/tc.json")" = true
vm_check "trace -c 5: its trace instance is removed" \
	test -z "$(compgen -G "$SCHED_TRACE/instances/smb-classify-*" || true)"
smb-classify unload >/dev/null

# ---- bad prefixes against a live map ---------------------------------------
out=$(smb-classify -j load)
vm_check "load -j parses: result loaded, link id" \
	sched_jq '.result == "loaded" and .link_id > 0 and .name == "smb_prefix"' "$out"
smb-classify prefix add 127.0.0.0/8 2 weight 3 >/dev/null
smb-classify prefix add ::1/128 3 per-peer >/dev/null
before=$(smb-classify -j prefix list)

bad_prefix() {
	local desc=$1 err outp now
	shift
	if outp=$(smb-classify prefix add "$@" 2>"$tmp/err"); then
		vm_fail "prefix add $desc succeeded"
		return
	fi
	err=$(cat "$tmp/err")
	now=$(smb-classify -j prefix list)
	if [[ -z $outp && $(wc -l <<<"$err") == 1 && $err == Error:* && $now == "$before" ]]; then
		vm_pass "prefix add $desc: refused, map unchanged ($err)"
	else
		vm_fail "prefix add $desc: stdout '$outp', stderr '$err', map now $now"
	fi
}
for p in 1.2.3.4/33 ::/129 1.2.3.4/ 1.2.3.4/-1 "1.2.3.4/ 24" " 1.2.3.4/24" \
	1.2.3.4/24x 1.2.3.4/4294967328 "" 010.0.0.1/32 127.1/32 0x7f.0.0.1/32 \
	127.0.0.1/8 127.0.0.1 ::1/129 "::1/128 " 1.2.3.4/032; do
	bad_prefix "'$p' 9" "$p" 9
done
bad_prefix "existing 127.0.0.0/8 with class 65536" 127.0.0.0/8 65536
bad_prefix "existing 127.0.0.0/8 with class -1" 127.0.0.0/8 -1
bad_prefix "existing 127.0.0.0/8 with weight 0" 127.0.0.0/8 2 weight 0
bad_prefix "existing 127.0.0.0/8 with weight 256" 127.0.0.0/8 2 weight 256
bad_prefix "existing 127.0.0.0/8 with a stray word" 127.0.0.0/8 2 bogus
bad_prefix "existing ::1/128 without class" ::1/128

if out=$(smb-classify -j prefix add 1.2.3.4/33 1); then
	vm_fail "prefix add -j 1.2.3.4/33 succeeded: $out"
else
	vm_check "prefix add -j 1.2.3.4/33: JSON error object" sched_jq '.error | type == "string"' "$out"
fi

# prefix del of a missing prefix fails and changes nothing.
if out=$(smb-classify prefix del 10.0.0.0/8 2>&1); then
	vm_fail "prefix del of a missing prefix succeeded: $out"
else
	vm_check "prefix del of a missing prefix: Error: ($out)" grep -q '^Error: ' <<<"$out"
fi
vm_check "after failed del: map unchanged" test "$(smb-classify -j prefix list)" = "$before"
smb-classify prefix add 10.0.0.0/8 1 >/dev/null
smb-classify prefix del 10.0.0.0/8 >/dev/null
if out=$(smb-classify prefix del 10.0.0.0/8 2>&1); then
	vm_fail "second del of 10.0.0.0/8 succeeded: $out"
else
	vm_pass "second del of 10.0.0.0/8 fails ($out)"
fi
vm_check "after add+del: map as before" test "$(smb-classify -j prefix list)" = "$before"

# Edge prefixes: stored exactly as written.
sched_prefix_clear
edges=(0.0.0.0/0 ::/0 128.0.0.0/1 127.0.0.4/31 127.0.0.9/32 ::/127 ::1/128 8000::/1)
for p in "${edges[@]}"; do smb-classify prefix add "$p" 1 >/dev/null; done
got=$(smb-classify -j prefix list | jq -r '.[].prefix' | sort | tr '\n' ' ')
want=$(printf '%s\n' "${edges[@]}" | sort | tr '\n' ' ')
vm_check "edge prefixes stored as written ($got)" test "$got" = "$want"

# ---- JSON outputs parse -----------------------------------------------------
out=$(smb-classify -j status)
vm_check "status -j parses" sched_jq '.attached == true and .pinned == true and .serves == true and (.progs | length) == 5 and .prefixes == 8' "$out"
out=$(smb-classify -p status)
vm_check "status -p parses" sched_jq '.netns_ino > 0' "$out"
out=$(smb-classify -p prefix list)
vm_check "prefix list -p parses" sched_jq 'length == 8 and all(.[]; has("class_word"))' "$out"
out=$(smb-classify -j prefix add 127.0.0.0/8 2 weight 3 per-peer)
vm_check "prefix add -j parses ($out)" sched_jq 'type == "object"' "$out"
out=$(smb-classify -j replace "$SCHED_CONST_OBJ")
vm_check "replace -j parses" sched_jq '.result == "replaced" and .name == "const_class"' "$out"
out=$(smb-classify -j load 2>/dev/null) && vm_fail "load -j over a loaded program succeeded"
vm_check "load -j error parses ($out)" sched_jq '.error | test("already loaded")' "$out"
out=$(smb-classify -j unload)
vm_check "unload -j parses" sched_jq '.result == "unloaded" and .link_id > 0' "$out"
out=$(smb-classify -j status)
vm_check "status -j after unload" sched_jq '.attached == false' "$out"
out=$(smb-classify -j bogus 2>/dev/null) && vm_fail "unknown command succeeded"
vm_check "unknown command -j: JSON error" sched_jq '.error | type == "string"' "$out"
vm_check "consistent at the end" consistent
vm_finish
