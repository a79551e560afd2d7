#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Classification of real clients by the reference classifier:
# longest prefix wins, IPv4 peers arrive IPv4-mapped and match IPv4
# prefixes, no match is class 0 per peer (0x80010000), requests carry
# their connection's class
# word; data read and written through cifs is intact.
# vm-timeout: 600

set -euo pipefail
# shellcheck source=../lib.sh
source "${VM_DIR:?run me inside the VM: selftests/vm/run $0}/lib.sh"
# shellcheck source=../testlib-sched.sh
source "$VM_DIR/testlib-sched.sh"
trap sched_cleanup EXIT

tmp=$sched_tmp
P=smb_prefix

smb-classify load
sched_trace_start
conns0=$(sched_proc conns_classified)

# ---- The reference map: longest prefix wins -------------------------------
smb-classify prefix add 127.0.0.2/32 1
smb-classify prefix add 127.0.0.0/8 2 weight 3
smb-classify prefix add ::1/128 3
smb-classify prefix add ::/0 0 per-peer
smb-classify prefix list

head -c 3M /dev/urandom >"$SMB_SHARE_DIR/data.bin"
want=$(sched_sha "$SMB_SHARE_DIR/data.bin")

# Kernel client from each source: (source, destination, class word).
declare -A word=(
	[127.0.0.2]=0x00010001	# 127.0.0.2/32 -> 1
	[127.0.0.3]=0x00030002	# 127.0.0.0/8 -> 2 weight 3
	[127.0.0.1]=0x00030002	# 127.0.0.0/8 -> 2 weight 3
	[::1]=0x00010003	# ::1/128 -> 3
)
i=0
for src in 127.0.0.2 127.0.0.3 127.0.0.1 ::1; do
	i=$((i + 1))
	dest=127.0.0.1
	[[ $src == *:* ]] && dest=::1
	mnt=$tmp/m$i
	if ! sched_mount "$src" "$dest" "$mnt"; then
		vm_fail "mount.cifs from $src to $dest"
		continue
	fi
	port=$(sched_client_port "$src")
	peer=$(sched_peer "$src")
	vm_poll 10 sched_seen ksmbd_sched_conn ".peer == \"$peer\" and .peer_port == $port" || true
	sched_expect_conn "cifs from $src" "$peer" "$port" "${word[$src]}" "$P"
	vm_check "cifs from $src: 3 MiB read, sha256 equal" \
		test "$(sched_sha "$mnt/data.bin")" = "$want"
	sched_expect_reqs "cifs from $src" "$peer" "${word[$src]}" READ
	head -c 1M /dev/urandom >"$tmp/w$i.bin"
	cp "$tmp/w$i.bin" "$mnt/w$i.bin"
	vm_check "cifs from $src: 1 MiB written, server-side sha256 equal" \
		test "$(sched_sha "$tmp/w$i.bin")" = "$(sched_sha "$SMB_SHARE_DIR/w$i.bin")"
	sched_expect_reqs "cifs from $src" "$peer" "${word[$src]}" WRITE
	umount "$mnt"
done

# smbclient: source follows the destination with a local route.
sched_trace_clear
sched_route_src 127.0.0.2
sched_route_src 127.0.0.3
for dest in 127.0.0.2 127.0.0.3; do
	if sched_smbclient "$dest" "get data.bin $tmp/sc-$dest.bin" >"$tmp/sc.out" 2>&1; then
		vm_check "smbclient via $dest: sha256 equal" \
			test "$(sched_sha "$tmp/sc-$dest.bin")" = "$want"
	else
		vm_fail "smbclient via $dest"; cat "$tmp/sc.out"
	fi
	sched_expect_peer_conns "smbclient from $dest" "::ffff:$dest" "${word[$dest]}" "$P"
	sched_expect_reqs "smbclient from $dest" "::ffff:$dest" "${word[$dest]}" READ
done

# The IPv4-mapped form as the destination: still an IPv4 peer.
sched_trace_clear
if sched_smbclient "::ffff:127.0.0.1" "get data.bin $tmp/sc-mapped.bin" >"$tmp/sc.out" 2>&1; then
	vm_check "smbclient to //::ffff:127.0.0.1: sha256 equal" \
		test "$(sched_sha "$tmp/sc-mapped.bin")" = "$want"
	sched_expect_peer_conns "smbclient to ::ffff:127.0.0.1" ::ffff:127.0.0.1 0x00030002 "$P"
else
	vm_fail "smbclient to //::ffff:127.0.0.1"; cat "$tmp/sc.out"
fi
# And smbclient over ::1.
sched_trace_clear
if sched_smbclient "::1" "get data.bin $tmp/sc-v6.bin" >"$tmp/sc.out" 2>&1; then
	vm_check "smbclient over ::1: sha256 equal" \
		test "$(sched_sha "$tmp/sc-v6.bin")" = "$want"
	sched_expect_peer_conns "smbclient over ::1" ::1 0x00010003 "$P"
else
	vm_fail "smbclient over ::1"; cat "$tmp/sc.out"
fi

# ---- one_case DESC SRC WORD: a cifs mount from SRC gets WORD ---------------
one_case() {
	local desc=$1 src=$2 w=$3 mnt=$tmp/case port
	sched_trace_clear
	if ! sched_mount "$src" 127.0.0.1 "$mnt"; then
		vm_fail "$desc: mount.cifs from $src"
		return
	fi
	port=$(sched_client_port "$src")
	sched_expect_conn "$desc" "::ffff:$src" "$port" "$w" "$P"
	vm_check "$desc: read, sha256 equal" test "$(sched_sha "$mnt/data.bin")" = "$want"
	sched_expect_reqs "$desc" "::ffff:$src" "$w" READ
	umount "$mnt"
}

# Only 127.0.0.0/8 -> 5; 127.0.0.1 (arrives ::ffff:127.0.0.1) is 5.
sched_prefix_clear
smb-classify prefix add 127.0.0.0/8 5
one_case "v4 rule, mapped peer" 127.0.0.1 0x00010005

# Only 127.0.0.2/32 -> 7; 127.0.0.9 matches nothing: class 0 per peer.
sched_prefix_clear
smb-classify prefix add 127.0.0.2/32 7
one_case "no match" 127.0.0.9 0x80010000
one_case "the /32 itself" 127.0.0.2 0x00010007

# /31 covers exactly two addresses; 0.0.0.0/0 all IPv4 (not ::1);
# ::/0 per-peer prefix6 128 covers IPv4 peers too (a word unmatched
# peers do not get).
sched_prefix_clear
smb-classify prefix add 127.0.0.4/31 4
smb-classify prefix add 0.0.0.0/0 9 weight 2
one_case "/31 first" 127.0.0.4 0x00010004
one_case "/31 second" 127.0.0.5 0x00010004
one_case "outside /31 falls to 0.0.0.0/0" 127.0.0.6 0x00020009
sched_trace_clear
mnt=$tmp/v6
if sched_mount "" ::1 "$mnt"; then
	port=$(sched_client_port ::1)
	sched_expect_conn "0.0.0.0/0 does not match ::1" ::1 "$port" 0x80010000 "$P"
	umount "$mnt"
else
	vm_fail "mount.cifs over ::1"
fi
sched_prefix_clear
smb-classify prefix add ::/0 0 per-peer prefix6 128
one_case "::/0 per-peer matches an IPv4 peer" 127.0.0.7 0xa0010000

# The counter over this test's window equals the conn events it traced
# (every one with a program attached), and there were many.
conns=$(( $(sched_proc conns_classified) - conns0 ))
sched_trace_sync
seen=$(sched_conns_seen)
vm_check "conns_classified counted this test's connections ($conns = $seen traced)" \
	test "$conns" -eq "$seen" -a "$seen" -gt 10
vm_check "no class word was clamped" test "$(sched_proc class_clamped)" = 0

smb-classify unload
vm_finish
