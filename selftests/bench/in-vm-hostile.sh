#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The hostile-client bench, run inside the test VM by
# selftests/bench/hostile.sh:
#   selftests/vm/run -t S selftests/bench/in-vm-hostile.sh
# For each hostile or unusual client of Documentation/dispatch.rst
# ("Hostile and unusual clients"), a victim's service is measured three
# ways in this boot: alone (nothing attached), beside the client with
# nothing attached, and beside it with the reference classifier attached
# as shipped (every peer its own client: class 0, PER_PEER).  RUNS rounds
# (BENCH_HOSTILE_RUNS, default 3), each measuring every scenario in the
# three ways; the table gives the median, min and max.
#
#   lie      two raw peers (127.0.0.3, .4; hostile.py unauth-read, at nice
#            19, 4 connections each) stream READs with Length 0xffffffff
#            and no session; the victim, a cifs mount from 127.0.0.2 on
#            the tmpfs share, reads 4 KiB at random at depth 8 for 6 s:
#            its IOPS
#   flood    a raw peer (127.0.0.6, hostile.py neg-flood) opens connection
#            after connection with NEGOTIATE and a failing SESSION_SETUP;
#            the victim mounts from 127.0.0.5 and reads 8 MiB, byte-exact:
#            milliseconds from mount to unmount (lower is better)
#   copies   on the storage model (slowfs: 5 ms + length at 16 MiB/s, one
#            in service), a host (127.0.0.2) runs 24 copy_file_range(2)
#            loops of 1 MiB (FSCTL_SRV_COPYCHUNK_WRITE); the victim
#            (127.0.0.3) reads 1 MiB at depth 4, 2 + 8 s: its KiB/s
#   fsync    the same, the host running 8 fio jobs of 4 KiB WRITE + fsync
#
# No SPLICE verdict on the slow share (a spliced READ goes through the
# page cache, around the model).  Raw rows in $SMB_RESULTS/hostile-raw.tsv:
#   SCENARIO RUN MODE VALUE HOST_LOAD_BEFORE HOST_LOAD_AFTER GUEST_LOAD
# (MODE alone|bare|attached; a value of 0 is a failed measurement); the
# table in $SMB_RESULTS/bench-hostile.md.

set -uo pipefail
# shellcheck source=../vm/lib.sh
source "${VM_DIR:?run me inside the VM: selftests/vm/run $0}/lib.sh"
# shellcheck source=../vm/testlib-sched.sh
source "$VM_DIR/testlib-sched.sh"
# shellcheck source=../vm/testlib-fair.sh
source "$VM_DIR/testlib-fair.sh"
# shellcheck source=../vm/testlib-slowfs.sh
source "$VM_DIR/testlib-slowfs.sh"
# shellcheck source=../vm/testlib-hostile.sh
source "$VM_DIR/testlib-hostile.sh"
# shellcheck source=lib.sh
source "$VM_CHECKOUT/selftests/bench/lib.sh"

RUNS=${BENCH_HOSTILE_RUNS:-3}
SCENARIOS=${BENCH_HOSTILE:-lie flood copies fsync}
QUIET_LOAD=${BENCH_QUIET_LOAD:-3}
OUT=$SMB_RESULTS
RAW=$OUT/hostile-raw.tsv
MD=$OUT/bench-hostile.md
COPIES=24
tmp=$sched_tmp

cleanup() {
	hostile_stop
	slowfs_copies_stop >/dev/null 2>&1
	slowfs_syncwrites_stop
	umount "$tmp/m" 2>/dev/null || true
	fair_cleanup
	slowfs_share_stop
}
trap cleanup EXIT

# attach: the reference classifier as shipped; no SPLICE for class 0 (the
# slow share).  detach: nothing attached.
attach() {
	smb-classify load >/dev/null && slowfs_no_splice 0
}
detach() { smb-classify unload >/dev/null 2>&1 || true; }

# measure SCENARIO RUN MODE CMD...: CMD prints the value; one raw row.
measure() {
	local scen=$1 run=$2 mode=$3 before v
	shift 3
	before=$(bench_load_host)
	v=$("$@") || v=0
	[[ $v =~ ^[0-9]+$ ]] || v=0
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$scen" "$run" "$mode" "$v" \
		"$before" "$(bench_load_host)" "$(bench_load_guest)" >>"$RAW"
	echo "  $scen run $run $mode: $v (host load $before)" >&2
}

# ---- lie: READ Length 0xffffffff, no session ---------------------------
lie_iops() { fair_fio_measure iops "$1" "$tmp/v/data.bin" 6 8 4k 1; }
peer_conns() { ss -Htn state established "( src 127.0.0.3 or src 127.0.0.4 )" | wc -l; }
peers_up() { (( $(peer_conns) >= 8 )); }
lie_beside() {
	local v
	hostile_lie_start 12 127.0.0.3 127.0.0.4
	vm_poll 10 peers_up || echo "lie: the peers were slow to start" >&2
	sleep 1		# their READs are streaming
	v=$(lie_iops "$1")
	hostile_wait
	echo "$v"
}
scen_lie() {
	measure lie "$1" alone lie_iops lie-alone
	measure lie "$1" bare lie_beside lie-bare
	attach
	measure lie "$1" attached lie_beside lie-att
	detach
}

# ---- flood: NEGOTIATE + failing SESSION_SETUP ---------------------------
mount_read() { hostile_mount_read 127.0.0.5 "$tmp/m" flood.bin "$want_sha"; }
flood_beside() { hostile_during_flood 127.0.0.6 mount_read; }
scen_flood() {
	measure flood "$1" alone mount_read
	measure flood "$1" bare flood_beside
	attach
	measure flood "$1" attached flood_beside
	detach
}

# ---- copies, fsync: server cost on the storage model --------------------
reader() { fair_fio_measure bw "$1" "$tmp/r/data.bin" 8 4 1m 2; }
copying() { [[ -s $SLOWFS_BACKING/copy0.bin ]]; }
scen_copies() {
	measure copies "$1" alone reader copies-alone
	slowfs_copies_start "$tmp/c" "$COPIES" "$tmp/stop"
	vm_poll 30 copying || echo "copies: slow to start" >&2
	measure copies "$1" bare reader copies-bare
	attach
	measure copies "$1" attached reader copies-att
	detach
	slowfs_copies_stop || echo "copies: a copy loop failed" >&2
	slowfs_copies_exact "$COPIES" || echo "copies: a copy differs" >&2
}
scen_fsync() {
	measure fsync "$1" alone reader fsync-alone
	slowfs_syncwrites_start "$tmp/c" "$tmp/sync.fio"
	sleep 2
	measure fsync "$1" bare reader fsync-bare
	attach
	measure fsync "$1" attached reader fsync-att
	detach
	slowfs_syncwrites_stop
}

# ---- the table ----------------------------------------------------------
# cell SCENARIO MODE: "median (min-max)" of the values, and "*" when a
# run of it was disturbed (host load above QUIET_LOAD before or after).
# values SCENARIO MODE: its measured values (0 is a failed one: left out).
values() { awk -v s="$1" -v m="$2" '$1 == s && $3 == m && $4 > 0 { print $4 }' "$RAW"; }
cell() {
	local s m lo hi d
	read -r m lo hi < <(values "$1" "$2" | bench_stats)
	d=$(awk -v s="$1" -v m="$2" -v q="$QUIET_LOAD" \
		'$1 == s && $3 == m && ($5 > q || $6 > q) { n++ } END { print n + 0 }' "$RAW")
	s="$m ($lo-$hi)"
	(( d )) && s="$s *"
	echo "$s"
}
median() { values "$1" "$2" | bench_stats | cut -d' ' -f1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0 && a != "-") printf "%.2f", a / b; else print "-" }'; }

report() {
	local s what att
	{
		echo "## Hostile and unusual clients ($RUNS runs, one boot)"
		echo
		echo "Medians (min-max) of the victim's service: alone, beside the client with"
		echo "nothing attached, and with the reference classifier attached (class 0,"
		echo "PER_PEER). For flood, lower is better."
		echo
		echo "| client | victim's measure | alone | nothing attached | attached | attached / alone | attached / nothing attached |"
		echo "|---|---|---|---|---|---|---|"
		for s in $SCENARIOS; do
			case $s in
			lie) what="2 peers, no session, READ Length 0xffffffff|IOPS, 4 KiB at depth 8" ;;
			flood) what="NEGOTIATE + failing SESSION_SETUP flood|ms, mount + 8 MiB read" ;;
			copies) what="24 server-side copies of 1 MiB (slowfs)|KiB/s, 1 MiB at depth 4" ;;
			fsync) what="8 jobs of 4 KiB WRITE + fsync (slowfs)|KiB/s, 1 MiB at depth 4" ;;
			esac
			att=$(median "$s" attached)
			printf '| %s | %s | %s | %s | %s | %s |\n' "$what" \
				"$(cell "$s" alone)" "$(cell "$s" bare)" "$(cell "$s" attached)" \
				"$(ratio "$att" "$(median "$s" alone)")" \
				"$(ratio "$att" "$(median "$s" bare)")"
		done
		echo
		echo "Host load (1 min) before/after each measurement: $(awk '{ printf "%s%s/%s", (NR > 1 ? ", " : ""), $5, $6 }' "$RAW")."
		echo "Guest load after each: $(awk '{ printf "%s%s", (NR > 1 ? ", " : ""), $7 }' "$RAW")."
		echo "\\* a run of this cell was disturbed: the host's load exceeded $QUIET_LOAD."
		echo "Kernel $(uname -r); $(nproc) vCPUs; $(date -u +%Y-%m-%dT%H:%MZ)."
	} >"$MD"
}

for s in $SCENARIOS; do
	case $s in
	lie|flood|copies|fsync) ;;
	*) echo "bench: unknown scenario '$s' (lie flood copies fsync)" >&2; exit 2 ;;
	esac
done
: >"$RAW"
for a in 127.0.0.3 127.0.0.4 127.0.0.5 127.0.0.6; do
	sched_route_src "$a"
done
head -c 16M /dev/urandom >"$SMB_SHARE_DIR/data.bin"
head -c 8M /dev/urandom >"$SMB_SHARE_DIR/flood.bin"
want_sha=$(sched_sha "$SMB_SHARE_DIR/flood.bin")
fair_mount 127.0.0.2 "$tmp/v"
slowfs_share_start --service-ms 5 --jitter-pct 0 --parallel 1 --bw-mibps 16 ||
	{ echo "bench: slowfs share did not start" >&2; exit 1; }
head -c 16M /dev/urandom >"$SLOWFS_BACKING/data.bin"
slowfs_mount 127.0.0.2 "$tmp/c"
slowfs_mount 127.0.0.3 "$tmp/r"
detach

for (( run = 1; run <= RUNS; run++ )); do
	for s in $SCENARIOS; do
		"scen_$s" "$run"
	done
done
report
cat "$MD"
