#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/abi-compare.sh: user space's copy of ksmbd's scheduling
# constants (bpf/ksmbd_sched_abi.h, used by the reference program and
# smb-classify) against the kernel's (kernel/fs/smb/server/
# ksmbd_sched_abi.h, whose enums ksmbd's BTF carries).  There is no uapi
# header, so the values live in both; smb-classify checks the running
# kernel's BTF before it loads anything (tools/smb-classify/abi.c), and
# this script checks at build time that the two copies agree: every
# enumerator of either, in the same enum and with the same value, as the
# compiler computes it.  Prints the differences and fails if any.
# Run by make check.

set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
CC=${CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# dump HEADER: "ENUM NAME VALUE" for every enumerator of HEADER, sorted.
dump() {
	local hdr=$1 out=$tmp/$2
	# enum NAME { ... }: the enumerators, each with its enum's name.
	awk '/^enum [a-z0-9_]+ \{/ { e = $2; next }
		/^\};/ { e = "" }
		e != "" && match($0, /^[ \t]*KSMBD_SCHED_[A-Z0-9_]+[ \t]*=/) {
			n = substr($0, RSTART, RLENGTH); gsub(/[ \t=]/, "", n)
			print e, n }' "$hdr" >"$out.names"
	{
		echo '#include <stdio.h>'
		echo '#include <linux/types.h>'
		echo 'typedef __u8 u8; typedef __u16 u16; typedef __u32 u32; typedef __u64 u64;'
		echo "#include \"$hdr\""
		echo 'int main(void) {'
		while read -r e n; do
			echo "	printf(\"%s %s %llu\\n\", \"$e\", \"$n\", (unsigned long long)$n);"
		done <"$out.names"
		echo '	return 0; }'
	} >"$out.c"
	"$CC" -std=gnu11 -Wall -Werror -o "$out" "$out.c"
	"$out" | sort
}

k=$top/kernel/fs/smb/server/ksmbd_sched_abi.h
u=$top/bpf/ksmbd_sched_abi.h
dump "$k" kernel >"$tmp/kernel.txt"
dump "$u" user >"$tmp/user.txt"
if [[ ! -s $tmp/kernel.txt ]]; then
	echo "abi-compare: no enumerator found in $k" >&2
	exit 1
fi
if ! diff -u --label "kernel/fs/smb/server/ksmbd_sched_abi.h" \
	--label "bpf/ksmbd_sched_abi.h" "$tmp/kernel.txt" "$tmp/user.txt"; then
	echo "abi-compare: bpf/ksmbd_sched_abi.h disagrees with the kernel's (enum, name, value above)" >&2
	exit 1
fi
echo "abi-compare: bpf/ksmbd_sched_abi.h agrees with the kernel's: $(wc -l <"$tmp/kernel.txt") constants"
