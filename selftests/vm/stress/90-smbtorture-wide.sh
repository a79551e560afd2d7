#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Samba's smbtorture, the wider peer suite, against ksmbd three times:
# "stock", Debian's own ksmbd.ko of the running kernel (kernel/fs/smb/
# server, not our updates/ksmbd.ko; on the tiny kernel, where ksmbd is
# built in, this run is skipped and "flat" stands for it); "flat", our
# ksmbd with nothing attached; "attached", our ksmbd with the reference
# classifier attached and splice forced for every READ (policy
# splice-min 0 for class 0).  Leases on (smb2 leases = yes).  Compared by
# test name, never by count:
#   - no test that succeeds on stock fails flat or attached;
#   - every test the baseline (selftests/vm/smbtorture-baseline.txt,
#     "suite.test result" lines) lists as success succeeds in all runs.
# TEST_TORTURE_SUITES overrides the suite list.  Both runs' results are
# left in the test's results directory (stock.results, flat.results,
# attached.results, the baseline's format) for a new baseline.
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

# smb2.lease needs leases on (ksmbd-tools' default is off).
vm_ksmbd_stop
vm_ksmbd_write_conf
sed -i '/^\[global\]/a\	smb2 leases = yes' "$KSMBD_CONF"
READ_CONF_CHANGED=1
vm_ksmbd_start

# shellcheck disable=SC2206 # a word list
# smb2.lease runs on its own (stress/92-smbtorture-lease.sh): after the
# other suites, Debian's own 6.12.117 ksmbd WARNs in drop_nlink() and
# oopses in __fput() when the lease suite's session is torn down
# (__ksmbd_close_fd -> ksmbd_vfs_unlink of an unlinked file), so the
# guest dies (seen twice, on ours and on Debian's module; lease alone
# did not crash).
suites=(${TEST_TORTURE_SUITES:-smb2.connect smb2.rw smb2.compound smb2.credits smb2.getinfo smb2.lock smb2.oplock smb2.read})
baseline=$VM_DIR/smbtorture-baseline.txt
per_suite=${TEST_TORTURE_SUITE_TIMEOUT:-900}

# torture RUN SUITE: "RESULT suite.NAME" lines appended to $read_tmp/RUN.results.
# smbtorture 4.17 itself sometimes dies of a signal under load (a
# segfault in a break timer of smb2.oplock.levelii502, "PANIC (pid"):
# the suite is then run once more, said in the output, and the second
# run counts; a crash of the server is never retried (the harness fails
# on its kernel report).
torture() {
	local run=$1 suite=$2 t0 rc=0 try
	mkdir -p "$read_tmp/$run"
	t0=$SECONDS
	for try in 1 2; do
		rc=0
		rm -rf "${SMB_SHARE_DIR:?}"/*
		(cd "$read_tmp/$run" && timeout "$per_suite" smbtorture "//$SMB_SERVER/$SMB_SHARE" \
			-U "$SMB_USER%$SMB_PASS" "$suite") >"$read_tmp/$run.$suite.out" 2>&1 || rc=$?
		grep -q '^PANIC (pid' "$read_tmp/$run.$suite.out" || break
		cp "$read_tmp/$run.$suite.out" "$TEST_RESULTS/$run.$suite.panic$try.out" 2>/dev/null || true
		echo "  $run $suite: smbtorture itself crashed (exit $rc, $(grep -m1 '^PANIC' "$read_tmp/$run.$suite.out")); try $try of 2"
	done
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

# swap_ksmbd FILE|"": ksmbd stopped and unloaded, then FILE (a ksmbd.ko)
# inserted, or ours loaded by modprobe (updates/ksmbd.ko), and started.
# The dependencies stay loaded from the first ksmbd: both are built from
# the same 6.12 sources.
swap_ksmbd() {
	vm_ksmbd_stop
	vm_poll 30 rmmod ksmbd || { vm_fail "cannot rmmod ksmbd"; return 1; }
	if [[ -n $1 ]]; then insmod "$1"; else modprobe ksmbd; fi
	vm_ksmbd_start
}
stock_ko=
if [[ -e /sys/module/ksmbd/refcnt && -n ${VM_MODULES_ROOT:-} ]]; then
	stock_ko=$(find "$VM_MODULES_ROOT/lib/modules/$(uname -r)/kernel/fs/smb/server" \
		-name 'ksmbd.ko*' | head -n 1)
	[[ -n $stock_ko ]] || vm_fail "no Debian ksmbd.ko under $VM_MODULES_ROOT"
fi

runs=(flat attached)
: >"$read_tmp/flat.results"
: >"$read_tmp/attached.results"
if [[ -n $stock_ko ]]; then
	runs=(stock flat attached)
	: >"$read_tmp/stock.results"
	if swap_ksmbd "$stock_ko"; then
		vm_check "stock: Debian's ksmbd.ko is loaded (no scheduling hook)" \
			test ! -e /proc/net/ksmbd_sched
		for s in "${suites[@]}"; do
			torture stock "$s"
		done
	fi
	swap_ksmbd "" || vm_finish
	vm_check "flat: our ksmbd.ko is loaded" test -e /proc/net/ksmbd_sched
fi
for s in "${suites[@]}"; do
	torture flat "$s"
done
smb-classify load >/dev/null
smb-classify policy set 0 splice-min 0 >/dev/null
for s in "${suites[@]}"; do
	torture attached "$s"
done
smb-classify unload >/dev/null

for run in "${runs[@]}"; do
	sort -k2 "$read_tmp/$run.results" >"$TEST_RESULTS/$run.results"
done
ref=${runs[0]}
vm_check "smbtorture ran tests on $ref" test -s "$read_tmp/$ref.results"
bad=0
while read -r res name; do
	[[ $res == success ]] || continue
	for run in "${runs[@]:1}"; do
		got=$(result "$run" "$name")
		if [[ $got != success ]]; then
			vm_fail "$name: success on $ref, ${got:-not run} $run"
			bad=$((bad + 1))
		fi
	done
done <"$read_tmp/$ref.results"
vm_check "no test that succeeds on $ref fails in ${runs[*]:1}" test "$bad" = 0
if [[ -s $baseline ]]; then
	miss=0 n=0
	while read -r res name; do
		[[ $res == success ]] || continue
		suite=${name%.*}
		[[ " ${suites[*]} " == *" $suite "* ]] || continue
		n=$((n + 1))
		for run in "${runs[@]}"; do
			got=$(result "$run" "$name")
			if [[ $got != success ]]; then
				vm_fail "$name: success in the baseline, ${got:-not run} $run"
				miss=$((miss + 1))
			fi
		done
	done <"$baseline"
	vm_check "all $n baseline successes succeed in every run (${runs[*]})" test "$miss" = 0 -a "$n" -gt 0
else
	vm_fail "no baseline at $baseline"
fi
vm_finish
