#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Samba's smbtorture smb2.read against ksmbd twice: on the copy path
# (nothing attached), then with the classifier attached and splice forced
# for every READ (policy splice-min 0 for class 0).  Per test: nothing
# that succeeds on the copy path fails on the splice path; eof, position,
# dir and access succeed on both (shared/notes: stock 6.12 passes them);
# the oracle shows READ replies spliced from the page cache in the
# second run, and no payload or payload page is held afterwards.  Skipped
# without smbtorture (Debian samba-testsuite).
# vm-timeout: 600

set -euo pipefail
# shellcheck source=../lib.sh
source "${VM_DIR:?run me inside the VM: selftests/vm/run $0}/lib.sh"
# shellcheck source=../testlib-read.sh
source "$VM_DIR/testlib-read.sh"
trap read_cleanup EXIT

command -v smbtorture >/dev/null ||
	{ echo "FAIL: smbtorture missing (make deps installs samba-testsuite)"; exit 1; }
[[ -s /etc/samba/smb.conf ]] || { echo "FAIL: no /etc/samba/smb.conf (the harness writes one)"; exit 1; }

# torture RUN: smbtorture smb2.read from a writable cwd; "RESULT NAME"
# lines in $read_tmp/RUN.results, full output in $read_tmp/RUN.out.
torture() {
	local run=$1
	mkdir -p "$read_tmp/$run"
	(cd "$read_tmp/$run" && timeout 240 smbtorture "//$SMB_SERVER/$SMB_SHARE" \
		-U "$SMB_USER%$SMB_PASS" smb2.read) >"$read_tmp/$run.out" 2>&1 || true
	sed -nE 's/^(success|failure|error|skip|xfail|uxsuccess): ([^ []+).*/\1 \2/p' \
		"$read_tmp/$run.out" | sort -k2 -u >"$read_tmp/$run.results"
	cp "$read_tmp/$run.out" "$TEST_RESULTS/" 2>/dev/null || true
	echo "  $run: $(awk '{ print $2 "=" $1 }' "$read_tmp/$run.results" | tr '\n' ' ')"
}

# result RUN NAME: the result of test NAME in RUN (empty if it did not run).
result() { awk -v n="$2" '$2 == n { print $1 }' "$read_tmp/$1.results"; }

rm -rf "${SMB_SHARE_DIR:?}"/*
torture copy
rm -rf "${SMB_SHARE_DIR:?}"/*
smb-classify load >/dev/null
smb-classify policy set 0 splice-min 0 >/dev/null
read_trace_start
torture splice
paths=$(read_trace_paths)
echo "  splice run oracle: $paths"

vm_check "smbtorture ran tests on the copy path" test -s "$read_tmp/copy.results"
for t in eof position dir access; do
	vm_check "smb2.read.$t succeeds on the copy path" test "$(result copy "$t")" = success
	vm_check "smb2.read.$t succeeds on the splice path" test "$(result splice "$t")" = success
done
while read -r res name; do
	[[ $res == success ]] || continue
	vm_check "smb2.read.$name: success on copy, $(result splice "$name") on splice" \
		test "$(result splice "$name")" = success
done <"$read_tmp/copy.results"
vm_check "READ replies were spliced from the page cache in the splice run" \
	grep -q 'splice/-/pagecache=' <<<"$paths"
vm_check "payloads 0, payload_pages 0 after the splice run" vm_poll 10 vm_sched_held_zero
vm_finish
