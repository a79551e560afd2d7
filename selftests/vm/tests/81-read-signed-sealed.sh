#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# READs that must not be spliced, with splice forced by policy
# (splice-min 0 for class 0):
#   - a signed session (client requires signing) and a sealed session
#     (every request AES-128-CCM encrypted), SMB 3.0, with the raw client
#     smb2raw.py: READ 1, 4095, 65536, 65537,
#     1 MiB, a short 1 MiB READ at the end, READ at EOF and MinimumCount
#     past it (END_OF_FILE), Length 0.  Every reply's signature or AES-CCM
#     tag is verified by the client, data byte-exact, oracle path=copy
#     reason=signed (signed) or encrypted/no_verdict (sealed: the program
#     sees only the transform header), src=copy;
#   - the kernel cifs client (vers=3.1.1, cache=none) mounted with sign
#     and with seal: O_DIRECT reads of those sizes, compared with the
#     file; oracle copy with the same reasons;
#   - compounds on a plain session: related CREATE+READ+CLOSE (READ of
#     1 B .. 1 MiB; copy, reason compound or no_verdict: the verdict is the
#     CREATE's) and unrelated READ+READ (4 KiB .. 512 KiB each; copy,
#     reason compound): data exact; then a single READ on that connection
#     is spliced.
# vm-timeout: 300

set -euo pipefail
# shellcheck source=../lib.sh
source "${VM_DIR:?run me inside the VM: selftests/vm/run $0}/lib.sh"
# shellcheck source=../testlib-read.sh
source "$VM_DIR/testlib-read.sh"
trap read_cleanup EXIT

read_need_impacket

size=$(( 3 * 1048576 + 777 ))
head -c "$size" /dev/urandom >"$SMB_SHARE_DIR/data.bin"
src=$SMB_SHARE_DIR/data.bin

smb-classify load >/dev/null
smb-classify policy set 0 splice-min 0 >/dev/null

# SMB 3.0 only: impacket 0.10's SMB 3.1.1 signing keys are not ksmbd's
# (ksmbd: "bad smb2 signature"); the cifs mounts below cover 3.1.1.
for mode in signed sealed; do
	vm_check "$mode session, SMB 3.0: replies verify, data exact, copied" \
		read_raw secure --file data.bin --mode "$mode" --dialect 3.0
done

vm_check "compound READs on a plain session: data exact, copied (compound)" \
	read_raw compound --file data.bin

# cifs_reads MNT: O_DIRECT reads through MNT compared with the file.
cifs_reads() {
	local mnt=$1 spec len off bad=0
	for spec in 1:0 4095:1 65536:0 65537:4095 1048576:0 1048576:$(( size - 1000 )) 4096:$size; do
		len=${spec%%:*} off=${spec#*:}
		if ! cmp -s <(dd if="$mnt/data.bin" bs="$len" count=1 skip="$off" \
				iflag=direct,skip_bytes 2>/dev/null) \
			<(dd if="$src" bs="$len" count=1 skip="$off" iflag=skip_bytes 2>/dev/null); then
			echo "  read of $len at $off through $mnt differs"
			bad=1
		fi
	done
	return $bad
}

for opt in sign seal; do
	mnt=$read_tmp/$opt
	mkdir -p "$mnt"
	if ! mount -t cifs "//$SMB_SERVER/$SMB_SHARE" "$mnt" \
		-o "username=$SMB_USER,password=$SMB_PASS,vers=3.1.1,cache=none,nosharesock,$opt"; then
		vm_fail "cifs mount with $opt"
		continue
	fi
	read_trace_start
	vm_check "cifs $opt: O_DIRECT reads byte-exact" cifs_reads "$mnt"
	paths=$(read_trace_paths)
	echo "  cifs $opt: oracle $paths"
	if [[ $opt == sign ]]; then want='^(copy/signed/copy=[0-9]+)$'; else want='^(copy/(encrypted|no_verdict)/copy=[0-9]+ ?)+$'; fi
	vm_check "cifs $opt: every READ reply copied (${want//[\^\$()+?]/})" \
		grep -Eq "$want" <<<"$paths"
	umount "$mnt"
done

vm_finish
