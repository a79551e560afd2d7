#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The loader against the live kernel: C11 (load killed with SIGKILL at
# points spread over its run: afterwards one program attached with a
# matching pin, or none and no pin; then load, unload, load cycles), bad
# prefixes (C5, C6, bad class/weight) leave a live map unchanged with one
# Error: line, prefix del of a missing prefix fails, edge prefixes (C4)
# are stored as written, and every JSON output parses.
# vm-timeout: 480

set -euo pipefail
# shellcheck source=../lib.sh
source "${VM_DIR:?run me inside the VM: selftests/vm/run $0}/lib.sh"
# shellcheck source=../testlib-sched.sh
source "$VM_DIR/testlib-sched.sh"
trap sched_cleanup EXIT

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

# ---- C11: SIGKILL during load ---------------------------------------------
# How long a load takes here, to spread the kill points over it.
t0=${EPOCHREALTIME/./}
smb-classify load >/dev/null
t1=${EPOCHREALTIME/./}
smb-classify unload >/dev/null
span=$(( t1 - t0 ))
(( span < 50000 )) && span=50000
echo "load takes $(( (t1 - t0) / 1000 )) ms; kill points 0..$(( span / 1000 )) ms"

iters=20 killed=0 pinned=0 bad=0
for ((i = 0; i < iters; i++)); do
	d=$(( i * span / (iters - 1) ))
	smb-classify load >/dev/null 2>&1 &
	pid=$!
	sleep "$(printf '%d.%06d' $((d / 1000000)) $((d % 1000000)))"
	kill -KILL "$pid" 2>/dev/null || true
	rc=0
	wait "$pid" || rc=$?
	(( rc == 137 )) && killed=$((killed + 1))
	if ! vm_poll 10 consistent; then
		vm_fail "C11 kill $i after $((d / 1000)) ms (status $rc): inconsistent"
		state
		bad=$((bad + 1))
	fi
	if [[ -e $pin ]]; then
		pinned=$((pinned + 1))
		if out=$(smb-classify load 2>&1); then
			vm_fail "C11 kill $i: load over a pinned link succeeded: $out"
			bad=$((bad + 1))
		fi
	else
		if ! out=$(smb-classify load 2>&1); then
			vm_fail "C11 kill $i: load after the kill failed: $out"
			bad=$((bad + 1))
		fi
	fi
	if ! consistent || [[ $(sched_proc attached) != 1 ]]; then
		vm_fail "C11 kill $i: not exactly one program after the next load"
		state
		bad=$((bad + 1))
	fi
	if ! smb-classify unload >/dev/null || ! vm_poll 10 consistent ||
		[[ -e $SCHED_PINS/$ino || $(sched_proc attached) != 0 ]]; then
		vm_fail "C11 kill $i: unload did not leave a clean state"
		state
		bad=$((bad + 1))
	fi
done
echo "C11: $iters loads, $killed killed, $pinned left a pinned link"
vm_check "C11: $iters loads killed at 0..$((span / 1000)) ms: state always consistent" test "$bad" = 0

for c in 1 2 3; do
	smb-classify load >/dev/null
	vm_check "load/unload cycle $c: loaded, pin matches" \
		test "$(sched_proc attached)" = 1
	vm_check "load/unload cycle $c: consistent after load" consistent
	smb-classify unload >/dev/null
	vm_check "load/unload cycle $c: consistent after unload, nothing attached" \
		test "$(sched_proc attached)" = 0 -a ! -e "$pin"
done

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

# C4 edges: stored exactly as written.
sched_prefix_clear
edges=(0.0.0.0/0 ::/0 128.0.0.0/1 127.0.0.4/31 127.0.0.9/32 ::/127 ::1/128 8000::/1)
for p in "${edges[@]}"; do smb-classify prefix add "$p" 1 >/dev/null; done
got=$(smb-classify -j prefix list | jq -r '.[].prefix' | sort | tr '\n' ' ')
want=$(printf '%s\n' "${edges[@]}" | sort | tr '\n' ' ')
vm_check "C4 edges stored as written ($got)" test "$got" = "$want"

# ---- JSON outputs parse -----------------------------------------------------
out=$(smb-classify -j status)
vm_check "status -j parses" sched_jq '.attached == true and .pinned == true and .serves == true and (.progs | length) == 2 and .prefixes == 8' "$out"
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
