#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Where page-cache pages cannot be shared, a spliced READ falls back to
# private pages (Documentation/read-splice.rst), byte-exact.  Three shares of
# the same 4 MiB random file, read with smbclient (1 MiB READs: smb2 max
# read 1M) under the reference classifier, splice-min 64K for class 0:
#   tmpfs  the control: every READ spliced from the page cache
#          (path=splice src=pagecache);
#   dax    ext4 mounted -o dax=always on the legacy pmem device the harness
#          reserves (memmap=64M!1G, nd_e820 + nd_pmem): IS_DAX, no page
#          cache, so every READ is spliced from private pages
#          (src=pages), never pagecache;
#   copy   a cifs mount (cache=none, from 127.0.0.9) of the tmpfs share,
#          re-exported: its ->splice_read() is copy_splice_read(), so
#          private pages again.  The mount's own READs (class 5,
#          splice-min off) are copied, so the spliced ones are the share's.
# Counted at the server with the spliced (path=splice) 1 MiB READs of the
# ksmbd_read_payload tracepoint, data checked by sha256, and
# afterwards payloads and payload_pages are exactly 0.  O_DIRECT, the
# other gate, cannot be reached from a client: ksmbd opens no file
# O_DIRECT (FILE_NO_INTERMEDIATE_BUFFERING is not mapped to it).
# vm-timeout: 300

set -euo pipefail
# shellcheck source=../lib.sh
source "${VM_DIR:?run me inside the VM: selftests/vm/run $0}/lib.sh"
# shellcheck source=../testlib-sched.sh
source "$VM_DIR/testlib-sched.sh"
# shellcheck source=../testlib-read.sh
source "$VM_DIR/testlib-read.sh"

# shellcheck disable=SC2153 # VM_KERNEL is set by the harness
[[ $VM_KERNEL == stock ]] ||
	vm_skip_test "needs Debian's kernel (nd_pmem, ext4 DAX, cifs as modules); VM_KERNEL=$VM_KERNEL"

DAX_DIR=/srv/dax
# read_cleanup unmounts the cifs mount and gives ksmbd its own ksmbd.conf
# back (READ_CONF_CHANGED); then the DAX filesystem is no share.
cleanup() {
	read_cleanup
	sched_cleanup
	umount "$DAX_DIR" 2>/dev/null || true
}
trap cleanup EXIT

tmp=$sched_tmp
SIZE=$((4 << 20))
head -c "$SIZE" /dev/urandom >"$SMB_SHARE_DIR/data.bin"
want=$(sched_sha "$SMB_SHARE_DIR/data.bin")

# ---- the DAX filesystem ---------------------------------------------------------
modprobe nd_e820 || true
modprobe nd_pmem || true
if ! vm_poll 20 test -b /dev/pmem0; then
	vm_fail "no /dev/pmem0 (memmap=64M!1G on the kernel command line: $(cat /proc/cmdline))"
	vm_finish
fi
mkfs.ext4 -q -F -b 4096 /dev/pmem0
mkdir -p "$DAX_DIR"
vm_check "ext4 on /dev/pmem0 mounted with dax=always" \
	mount -t ext4 -o dax=always /dev/pmem0 "$DAX_DIR"
vm_check "the mount is DAX ($(grep " $DAX_DIR " /proc/mounts))" \
	grep -q " $DAX_DIR ext4 .*dax=always" /proc/mounts
cp "$SMB_SHARE_DIR/data.bin" "$DAX_DIR/data.bin"
chmod -R a+rwX "$DAX_DIR"


# ---- the shares ----------------------------------------------------------------
vm_ksmbd_stop
vm_ksmbd_write_conf
READ_CONF_CHANGED=1
sed -i "/^\[global\]/a\\	smb2 max read = 1M" "$KSMBD_CONF"
# share NAME PATH: a read-only share.
share() {
	printf '\n[%s]\n\tpath = %s\n\tread only = yes\n\tforce user = root\n\tforce group = root\n' \
		"$1" "$2" >>"$KSMBD_CONF"
}
COPY_DIR=$tmp/copy
share dax "$DAX_DIR"
share copy "$COPY_DIR"
vm_ksmbd_start

# ---- the copy_splice_read() filesystem: cifs, cache=none ----------------------
sched_route_src 127.0.0.9
sched_mount 127.0.0.9 127.0.0.1 "$COPY_DIR"
vm_check "the cifs mount is cache=none" grep -q " $COPY_DIR cifs .*cache=none" /proc/mounts

smb-classify load >/dev/null
smb-classify prefix add 127.0.0.9/32 5 >/dev/null
smb-classify policy set 0 splice-min 64K >/dev/null
smb-classify policy set 5 splice-min off >/dev/null

# read_share SHARE: get data.bin from SHARE; the read_payload events of
# its READs (src of each spliced READ of 1 MiB) in $tmp/SHARE.src.
read_share() {
	local share=$1 rc=0
	rm -f "$tmp/$share.bin"
	sched_trace_start
	smbclient "//127.0.0.1/$share" "${sched_auth[@]}" -m SMB3 \
		-c "get data.bin $tmp/$share.bin" >"$tmp/$share.out" 2>&1 || rc=$?
	sched_trace_sync
	sched_trace_stop
	vm_check "[$share] smbclient get (exit $rc), sha256 equal" \
		test "$rc" = 0 -a "$(sched_sha "$tmp/$share.bin")" = "$want"
	sched_format ksmbd_read_payload '.len == 1048576 and .path == 0' '"\(.path)/\(.src)"' |
		sort | uniq -c | tr -s ' \n' ' ' >"$tmp/$share.src"
	echo "  [$share] spliced READs of 1 MiB, path/src (src 2 = pages, 3 = pagecache): $(cat "$tmp/$share.src")"
	echo "  [$share] all READ payloads, path/src/len: $(sched_format ksmbd_read_payload true '"\(.path)/\(.src)/\(.len)"' | sort | uniq -c | tr -s ' \n' ' ')"
}
# want_only SHARE PATH/SRC: all 4 READs of 1 MiB had PATH/SRC.
want_only() {
	vm_check "[$1] all 4 READs of 1 MiB spliced with src $2 ($(cat "$tmp/$1.src"))" \
		test "$(cat "$tmp/$1.src")" = " 4 $2 "
}

read_share "$SMB_SHARE"
want_only "$SMB_SHARE" 0/3
read_share dax
want_only dax 0/2
read_share copy
want_only copy 0/2

smb-classify unload >/dev/null
vm_check "payloads 0, payload_pages 0" vm_poll 10 vm_sched_held_zero
vm_finish
