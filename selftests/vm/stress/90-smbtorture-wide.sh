#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Samba's smbtorture, the wider peer suite, against ksmbd twice: nothing
# attached (ksmbd's own path), then with the reference classifier attached
# and splice forced for every READ (policy splice-min 0 for class 0).
# Compared by test name, never by count:
#   - no test that succeeds with nothing attached fails attached;
#   - every test the baseline (selftests/vm/smbtorture-baseline.txt,
#     "suite.test result" lines) lists as success succeeds in both runs.
# TEST_TORTURE_SUITES overrides the suite list.  Both runs' results are
# left in the test's results directory (flat.results, attached.results,
# the baseline's format) for a new baseline.
# vm-timeout: 5400

set -euo pipefail
# shellcheck source=../lib.sh
source "${VM_DIR:?run me inside the VM: selftests/vm/run $0}/lib.sh"
# shellcheck source=../testlib-read.sh
source "$VM_DIR/testlib-read.sh"
trap read_cleanup EXIT

command -v smbtorture >/dev/null ||
	{ echo "FAIL: smbtorture missing (make deps installs samba-testsuite)"; exit 1; }
[[ -s /etc/samba/smb.conf ]] || { echo "FAIL: no /etc/samba/smb.conf (the harness writes one)"; exit 1; }

# shellcheck disable=SC2206 # a word list
# smb2.lease needs leases on (ksmbd-tools' default is off).
vm_ksmbd_stop
vm_ksmbd_write_conf
sed -i '/^\[global\]/a\	smb2 leases = yes' "$KSMBD_CONF"
READ_CONF_CHANGED=1
vm_ksmbd_start

suites=(${TEST_TORTURE_SUITES:-smb2.connect smb2.rw smb2.compound smb2.credits smb2.getinfo smb2.lock smb2.oplock smb2.lease smb2.read})
baseline=$VM_DIR/smbtorture-baseline.txt
per_suite=${TEST_TORTURE_SUITE_TIMEOUT:-900}

# torture RUN SUITE: "RESULT suite.NAME" lines appended to $read_tmp/RUN.results.
torture() {
	local run=$1 suite=$2 t0 rc=0
	mkdir -p "$read_tmp/$run"
	rm -rf "${SMB_SHARE_DIR:?}"/*
	t0=$SECONDS
	(cd "$read_tmp/$run" && timeout "$per_suite" smbtorture "//$SMB_SERVER/$SMB_SHARE" \
		-U "$SMB_USER%$SMB_PASS" "$suite") >"$read_tmp/$run.$suite.out" 2>&1 || rc=$?
	sed -nE 's/^(success|failure|error|skip|xfail|uxsuccess): ([^ []+).*/\1 \2/p' \
		"$read_tmp/$run.$suite.out" | sort -k2 -u |
		awk -v s="$suite" '{ print $1, s "." $2 }' >>"$read_tmp/$run.results"
	cp "$read_tmp/$run.$suite.out" "$TEST_RESULTS/" 2>/dev/null || true
	echo "  $run $suite: $((SECONDS - t0)) s, exit $rc," \
		"$(grep -c "^success $suite\\." "$read_tmp/$run.results" || true) success," \
		"$(grep -Ec "^(failure|error) $suite\\." "$read_tmp/$run.results" || true) failure/error"
	(( rc != 124 )) || vm_fail "$run $suite: timed out after $per_suite s"
}

# result RUN NAME: the result of NAME in RUN (empty if it did not run).
result() { awk -v n="$2" '$2 == n { print $1 }' "$read_tmp/$1.results"; }

: >"$read_tmp/flat.results"
: >"$read_tmp/attached.results"
for s in "${suites[@]}"; do
	torture flat "$s"
done
smb-classify load >/dev/null
smb-classify policy set 0 splice-min 0 >/dev/null
for s in "${suites[@]}"; do
	torture attached "$s"
done
smb-classify unload >/dev/null

sort -k2 "$read_tmp/flat.results" >"$TEST_RESULTS/flat.results"
sort -k2 "$read_tmp/attached.results" >"$TEST_RESULTS/attached.results"

vm_check "smbtorture ran tests with nothing attached" test -s "$read_tmp/flat.results"
bad=0
while read -r res name; do
	[[ $res == success ]] || continue
	got=$(result attached "$name")
	if [[ $got != success ]]; then
		vm_fail "$name: success with nothing attached, ${got:-not run} attached"
		bad=$((bad + 1))
	fi
done <"$read_tmp/flat.results"
vm_check "no test that succeeds with nothing attached fails attached" test "$bad" = 0
if [[ -s $baseline ]]; then
	miss=0 n=0
	while read -r res name; do
		[[ $res == success ]] || continue
		suite=${name%.*}
		[[ " ${suites[*]} " == *" $suite "* ]] || continue
		n=$((n + 1))
		for run in flat attached; do
			got=$(result "$run" "$name")
			if [[ $got != success ]]; then
				vm_fail "$name: success in the baseline, ${got:-not run} $run"
				miss=$((miss + 1))
			fi
		done
	done <"$baseline"
	vm_check "all $n baseline successes succeed in both runs" test "$miss" = 0 -a "$n" -gt 0
else
	vm_fail "no baseline at $baseline"
fi
vm_finish
