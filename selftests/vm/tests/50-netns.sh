#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Per-netns loading: a named netns loads independently of the initial
# one (own link, own prefixes, not served by ksmbd); deleting the netns
# first leaves pins that unload and status clean up from the stored
# identity, with exit 0, no stale pins and no kernel warning; a new netns
# attaches afterwards.  The initial netns' program is untouched throughout.
# vm-timeout: 240

set -euo pipefail
# shellcheck source=../lib.sh
source "${VM_DIR:?run me inside the VM: selftests/vm/run $0}/lib.sh"
# shellcheck source=../testlib-sched.sh
source "$VM_DIR/testlib-sched.sh"
cleanup() {
	local n
	for n in t1 t2 t3; do
		smb-classify -n "$n" unload >/dev/null 2>&1 || true
		ip netns del "$n" 2>/dev/null || true
	done
	sched_cleanup
}
trap cleanup EXIT

tmp=$sched_tmp
init_ino=$(sched_netns_ino)
ns_ino() { stat -L -c %i "/run/netns/$1"; }
link_gone() { ! bpftool link show id "$1" >/dev/null 2>&1; }

smb-classify load >/dev/null
smb-classify prefix add 127.0.0.0/8 2
init_link=$(sched_proc link_id)

# ---- t1: load beside the initial netns ------------------------------------
ip netns add t1
t1_ino=$(ns_ino t1)
if out=$(smb-classify -n t1 load 2>&1); then
	vm_pass "load in t1 while the initial netns has a program: $out"
else
	vm_fail "load in t1: $out"
fi
t1_link=$(sched_proc link_id t1)
vm_check "t1: attached with its own link ($t1_link, initial $init_link)" \
	test "$(sched_proc attached t1)" = 1 -a "$t1_link" != "$init_link" -a "$t1_link" != 0
vm_check "t1: serves 0" test "$(sched_proc serves t1)" = 0
vm_check "t1: pinned under $SCHED_PINS/$t1_ino" test -e "$SCHED_PINS/$t1_ino/link"
vm_check "t1: name recorded" test "$(readlink "$SCHED_PINS/names/t1")" = "../$t1_ino"
vm_check "initial netns: same link" test "$(sched_proc link_id)" = "$init_link"
out=$(smb-classify -n t1 status 2>&1) || vm_fail "status -n t1: exit status"
vm_check "status -n t1 says ksmbd does not serve it" grep -q "ksmbd serves: *no" <<<"$out"
out=$(smb-classify -j -n t1 status)
vm_check "status -j -n t1: serves false, attached, link $t1_link" \
	sched_jq ".serves == false and .attached == true and .pinned == true and .link_id == $t1_link and .netns_ino == $t1_ino" "$out"
if out=$(smb-classify -n t1 load 2>&1); then
	vm_fail "second load in t1 succeeded: $out"
else
	vm_check "second load in t1: already loaded ($out)" grep -q '^Error: .*already loaded' <<<"$out"
fi
smb-classify -n t1 prefix add 10.0.0.0/8 5 >/dev/null
vm_check "prefixes are per netns: t1 has 10.0.0.0/8" \
	test "$(smb-classify -j -n t1 prefix list | jq -r '[.[].prefix] | join(",")')" = "10.0.0.0/8"
vm_check "prefixes are per netns: initial has 127.0.0.0/8 only" \
	test "$(smb-classify -j prefix list | jq -r '[.[].prefix] | join(",")')" = "127.0.0.0/8"

# The initial netns still classifies with its own program.
sched_trace_start
sched_mount 127.0.0.2 127.0.0.1 "$tmp/a"
port=$(sched_client_port 127.0.0.2)
sched_expect_conn "initial netns while t1 is loaded" ::ffff:127.0.0.2 "$port" 0x00010002 smb_prefix
vm_check "conn event names the initial netns" \
	test "$(sched_events ksmbd_sched_conn ".peer_port == $port" | jq -r .netns_ino)" = "$init_ino"
umount "$tmp/a"

# ---- delete t1 first, then unload and status -----------------------------
ip netns del t1
if out=$(smb-classify -n t1 unload 2>&1); then
	vm_pass "unload -n t1 after ip netns del: $out"
else
	vm_fail "unload -n t1 after ip netns del: $out"
fi
vm_check "t1: no pins left ($SCHED_PINS/$t1_ino)" test ! -e "$SCHED_PINS/$t1_ino"
vm_check "t1: name record removed" test ! -L "$SCHED_PINS/names/t1"
vm_check "t1: link $t1_link freed" vm_poll 20 link_gone "$t1_link"
if out=$(smb-classify -n t1 status 2>&1); then
	vm_check "status -n t1 after delete: not attached ($out)" grep -q "attached: *no" <<<"$out"
else
	vm_fail "status -n t1 after delete: exit status non-zero: $out"
fi
if out=$(smb-classify -n t1 unload 2>&1); then
	vm_pass "unload -n t1 again: exit 0 ($out)"
else
	vm_fail "unload -n t1 again: $out"
fi
vm_check "initial netns: same link after t1's end" test "$(sched_proc link_id)" = "$init_link"

# ---- t3: delete first, then status (status cleans the stale pins) ---------
ip netns add t3
t3_ino=$(ns_ino t3)
smb-classify -n t3 load >/dev/null
t3_link=$(sched_proc link_id t3)
ip netns del t3
sched_check_netns_gone t3 "$t3_ino" "$t3_link"
if out=$(smb-classify -n t3 unload 2>&1); then
	vm_pass "unload -n t3 after status: exit 0 ($out)"
else
	vm_fail "unload -n t3 after status: $out"
fi

# ---- t2: a new netns attaches afterwards -----------------------------------
ip netns add t2
if out=$(smb-classify -n t2 load 2>&1); then
	vm_pass "load in a new netns t2: $out"
else
	vm_fail "load in a new netns t2: $out"
fi
vm_check "t2: attached" test "$(sched_proc attached t2)" = 1
smb-classify -n t2 unload >/dev/null
vm_check "t2: detached after unload" test "$(sched_proc attached t2)" = 0
ip netns del t2

vm_check "initial netns: same link at the end" test "$(sched_proc link_id)" = "$init_link"
smb-classify unload >/dev/null
vm_check "no pins left at all" sh -c "! ls -A $SCHED_PINS 2>/dev/null | grep -q ."
vm_finish
