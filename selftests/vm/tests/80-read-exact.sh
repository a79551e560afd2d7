#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# READ replies are byte-exact on the copy and both splice paths.
# vm-timeout: 900
# A raw SMB2 client (smb2raw.py: impacket session setup, READs built and
# checked by hand) sends each READ with exactly the Length, Offset and
# MinimumCount given, on a plain SMB 3.0 session, in five phases:
#   none     nothing attached (the old path; never spliced)
#   off      classifier attached, policy splice-min off: all copied
#   default  no policy entry: splice-min 64K
#   forced   policy splice-min 0: every READ may be spliced; the kernel
#            copies those below read_splice_floor (16 KiB), the rest go
#            out as page-cache pages (src=pagecache)
#   pages    as forced, read_payload_pagecache=N: private pages
#            (src=pages), the fallback path
# Lengths 0, 1, 100, 4000, 4095, 4096, 4097, 8192, 12345, 16383, 16384,
# 65535, 65536, 65537, 100000, 1 MiB and 8 MiB (smb2 max read raised to
# 8 MiB) at offsets 0, 1, 4095 and size-1 of a 9 MiB+12345 and a
# 70001-byte random file (so reads near EOF are short), plus: Length 1
# at EOF and Length 2 MinimumCount 2 at size-1 -> STATUS_END_OF_FILE in a
# 73-byte error reply, Length 0 -> success with no data, MinimumCount met
# at size-2 -> success.  Every reply: status, data against the file,
# frame length = 80 + DataLength; the ksmbd_read_payload oracle: one
# event per successful reply, copy/no_verdict below splice-min,
# copy/below_floor below the floor, splice at and above both (by
# requested Length) with src pagecache or pages as the phase says, a
# zero-length READ copy with src=none (never splice), none for error
# replies; and status, frame length and data identical in all five
# phases.  Afterwards payloads and payload_pages are 0.

set -euo pipefail
# shellcheck source=../lib.sh
source "${VM_DIR:?run me inside the VM: selftests/vm/run $0}/lib.sh"
# shellcheck source=../testlib-read.sh
source "$VM_DIR/testlib-read.sh"
trap read_cleanup EXIT

read_need_impacket
read_conf_max_io 8M

head -c $(( 9 * 1048576 + 12345 )) /dev/urandom >"$SMB_SHARE_DIR/big.bin"
head -c 70001 /dev/urandom >"$SMB_SHARE_DIR/small.bin"

smb-classify load >/dev/null
vm_check "lengths x offsets x 5 phases, edge READs: byte-exact, oracle as policy says" \
	read_raw exact --files big.bin small.bin \
		--lengths 0,1,100,4000,4095,4096,4097,8192,12345,16383,16384,65535,65536,65537,100000,1048576,8388608 \
		--phases none,off,default,forced,pages
vm_check "read_payload_pagecache is back to Y" \
	test "$(cat /sys/module/ksmbd/parameters/read_payload_pagecache)" = Y
vm_check "payloads 0, payload_pages 0 after the matrix" vm_poll 10 vm_sched_held_zero
vm_finish
