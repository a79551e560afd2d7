#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Smoke test of the VM harness: ksmbd serves the share to smbclient over
# 127.0.0.1 and ::1 and to the kernel cifs client, with data intact.
# vm-timeout: 300

set -euo pipefail
# shellcheck source=../lib.sh
source "${VM_DIR:?run me inside the VM: selftests/vm/run $0}/lib.sh"

tmp=${TEST_TMPDIR:-$(mktemp -d)}
mkdir -p "$tmp"
mnt=$tmp/mnt
cleanup() { mountpoint -q "$mnt" && umount "$mnt"; return 0; }
trap cleanup EXIT

auth=("-U" "$SMB_USER%$SMB_PASS")
sha() { sha256sum "$1" | cut -d' ' -f1; }

# Listing the share over IPv4 and IPv6 loopback.  Over IPv6, smbclient -L
# exits 1 after the listing because the NetBIOS workgroup browse needs IPv4:
# the listing is what counts.
for addr in 127.0.0.1 ::1; do
	out=$(smbclient -L "$addr" "${auth[@]}" -m SMB3 -g 2>&1) || true
	if grep -q "^Disk|$SMB_SHARE|" <<<"$out"; then
		vm_pass "smbclient lists share '$SMB_SHARE' at $addr"
	else
		vm_fail "smbclient lists share '$SMB_SHARE' at $addr"
		echo "$out"
	fi
done

# Put and get 1 MiB of random data, compare checksums (also on the server).
head -c 1M /dev/urandom >"$tmp/put.bin"
if smbclient "//$SMB_SERVER/$SMB_SHARE" "${auth[@]}" -m SMB3 \
	-c "put $tmp/put.bin smoke.bin; get smoke.bin $tmp/get.bin" >"$tmp/smbclient.out" 2>&1; then
	vm_check "smbclient put/get 1 MiB, sha256 equal" \
		test "$(sha "$tmp/put.bin")" = "$(sha "$tmp/get.bin")"
	vm_check "server-side copy has the same sha256" \
		test "$(sha "$tmp/put.bin")" = "$(sha "$SMB_SHARE_DIR/smoke.bin")"
else
	vm_fail "smbclient put/get 1 MiB"
	cat "$tmp/smbclient.out"
fi

# The same over IPv6.
if smbclient "//::1/$SMB_SHARE" "${auth[@]}" -m SMB3 \
	-c "get smoke.bin $tmp/get6.bin" >"$tmp/smbclient6.out" 2>&1; then
	vm_check "smbclient get over ::1, sha256 equal" \
		test "$(sha "$tmp/put.bin")" = "$(sha "$tmp/get6.bin")"
else
	vm_fail "smbclient get over ::1"
	cat "$tmp/smbclient6.out"
fi

# Kernel client: mount.cifs, SMB 3.1.1, no caching, read and write.
mkdir -p "$mnt"
if mount -t cifs "//$SMB_SERVER/$SMB_SHARE" "$mnt" \
	-o "username=$SMB_USER,password=$SMB_PASS,vers=3.1.1,cache=none"; then
	vm_pass "mount.cifs //$SMB_SERVER/$SMB_SHARE vers=3.1.1 cache=none"
	vm_check "cifs read 1 MiB, sha256 equal" \
		test "$(sha "$tmp/put.bin")" = "$(sha "$mnt/smoke.bin")"
	head -c 3M /dev/urandom >"$tmp/cifs-put.bin"
	cp "$tmp/cifs-put.bin" "$mnt/cifs.bin"
	vm_check "cifs write 3 MiB, server-side sha256 equal" \
		test "$(sha "$tmp/cifs-put.bin")" = "$(sha "$SMB_SHARE_DIR/cifs.bin")"
	umount "$mnt"
else
	vm_fail "mount.cifs //$SMB_SERVER/$SMB_SHARE"
fi

vm_finish
