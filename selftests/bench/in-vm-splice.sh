#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The spliced READ and unbound WRITE benchmark, run inside the test VM
# by selftests/bench/read-splice.sh:
#   selftests/vm/run -t S selftests/bench/in-vm-splice.sh
# One cifs mount (vers=3.1.1, cache=none) of the share from 127.0.0.1, the
# reference classifier attached, class 0's policy and the ksmbd module
# parameters switched between runs.  Parts (BENCH_PARTS, default all):
#   read     READ sequential, 1 job, direct, 4 KiB .. 1 MiB (BENCH_RSIZES),
#            at QD1 (psync) and QD8 (libaio; BENCH_READ_QDS), three
#            paths: copy (splice-min off) vs private pages (splice-min 0,
#            read_payload_pagecache=N) vs page-cache pages (splice-min 0,
#            the default: zero-copy); the kernel floor is lifted
#            (read_splice_floor=0) so that small sizes splice too
#   default  READ 4 KiB: copy vs the default policy (no entry: splice-min
#            64K), and copy vs splice-min 0 with the floor in place
#   write    WRITE sequential, libaio, direct, 4 KiB / 64 KiB / 1 MiB at QD1
#            and QD32: per-CPU (unbound-min off) vs unbound (unbound-min 0)
#   order    READ into private pages, 64 KiB / 256 KiB / 1 MiB: payload
#            pages of order 0 vs 2 vs 4 (read_payload_order)
# The paths of a cell take turns within each repeat (the first rotates);
# medians of RUNS repeats with min/max, and the min/max of the per-repeat
# ratios.  Before and after every run the host's 1-minute load average
# (the file read-splice.sh refreshes every 2 s in the output share) and
# the guest's are recorded; a cell whose host load exceeded
# BENCH_QUIET_LOAD (default 3: the VM's own two vCPU threads are about 2)
# is marked disturbed.  A path check first: a 1 MiB READ shows the path
# and src each policy should give.
# Raw numbers: $SMB_RESULTS/splice-raw.tsv (group rw bs qd path run bw_KiB
# mean_us p99_us host_load_before host_load_after guest_load_before
# guest_load_after); tables: $SMB_RESULTS/bench-splice.md.
# BENCH_QUICK=1: a short smoke version.

set -uo pipefail
# shellcheck source=../vm/lib.sh
source "${VM_DIR:?run me inside the VM: selftests/vm/run $0}/lib.sh"
# The read_payload events through the loader's tracer (sched_trace_*).
# shellcheck source=../vm/testlib-sched.sh
source "$VM_DIR/testlib-sched.sh"

QUICK=${BENCH_QUICK:-0}
OUT=$SMB_RESULTS
RAW=$OUT/splice-raw.tsv
MD=$OUT/bench-splice.md
M=/tmp/bench-splice-mnt
: >"$RAW"

if (( QUICK )); then
	RUNS=1 T=3 RSIZES=${BENCH_RSIZES:-"4k 64k 1m"} WSIZES="4k 1m" OSIZES="1m" ORDERS="0 4"
else
	RUNS=${BENCH_RUNS:-3} T=5 RSIZES=${BENCH_RSIZES:-"4k 16k 32k 64k 128k 256k 1m"} WSIZES="4k 64k 1m"
	OSIZES="64k 256k 1m" ORDERS="0 2 4"
fi
PARTS=" ${BENCH_PARTS:-read default write order} "
READ_QDS=${BENCH_READ_QDS:-"1 8"}
QUIET_LOAD=${BENCH_QUIET_LOAD:-3}
PARAMS=/sys/module/ksmbd/parameters
ORDER_PARAM=$PARAMS/read_payload_order
PC_PARAM=$PARAMS/read_payload_pagecache
FLOOR_PARAM=$PARAMS/read_splice_floor
FLOOR=$(cat "$FLOOR_PARAM" 2>/dev/null || echo -)
HOST_LOAD=$OUT/host-loadavg
part() { [[ $PARTS == *" $1 "* ]]; }
# load_host, load_guest: the 1-minute load average, "-" when unknown.
load_host() { awk '{ print $1 }' "$HOST_LOAD" 2>/dev/null | grep . || echo -; }
load_guest() { awk '{ print $1 }' /proc/loadavg; }

log() { echo "bench: $*" >&2; }
cleanup() {
	mountpoint -q "$M" && umount "$M"
	smb-classify unload >/dev/null 2>&1
	sched_trace_stop
	[[ -w $ORDER_PARAM ]] && echo 0 >"$ORDER_PARAM"
	[[ -w $PC_PARAM ]] && echo Y >"$PC_PARAM"
	[[ -w $FLOOR_PARAM && $FLOOR != - ]] && echo "$FLOOR" >"$FLOOR_PARAM"
	return 0
}
trap cleanup EXIT

# policy NAME: class 0's policy and the page-cache switch for path NAME.
policy() {
	local pc=Y
	case $1 in
	copy)    smb-classify policy set 0 splice-min off unbound-min off ;;
	pages)   smb-classify policy set 0 splice-min 0 unbound-min off; pc=N ;;
	pagecache|splice)
		 smb-classify policy set 0 splice-min 0 unbound-min off ;;
	default) smb-classify policy del 0 2>/dev/null || true ;;
	percpu)  smb-classify policy set 0 splice-min off unbound-min off ;;
	unbound) smb-classify policy set 0 splice-min off unbound-min 0 ;;
	esac >/dev/null
	[[ -w $PC_PARAM ]] && echo "$pc" >"$PC_PARAM"
	return 0
}

# fio_run RW BS QD: one time-based fio run on $M; prints "BW_KiBs MEAN_us P99_us".
fio_run() {
	local rw=$1 bs=$2 qd=$3 engine=psync k=read out=/tmp/bench-splice-fio.json
	(( qd > 1 )) && engine=libaio
	[[ $rw == write ]] && k=write
	rm -f "$out"
	fio --name=b --filename="$M/bench.bin" --rw="$rw" --bs="$bs" \
		--ioengine="$engine" --iodepth="$qd" --direct=1 --size=192m \
		--time_based --runtime="$T" --ramp_time=1 --numjobs=1 \
		--output-format=json --output="$out" >/dev/null 2>&1
	jq -r --arg k "$k" '.jobs[0][$k] | "\(.bw) \(.clat_ns.mean / 1000) \((.clat_ns.percentile["99.000000"] // 0) / 1000)"' \
		"$out" 2>/dev/null || echo "- - -"
}

# cell GROUP RW BS QD P...: RUNS repeats of a run of each policy P, the
# first policy of a repeat rotating; raw rows with the loads around each.
cell() {
	local group=$1 rw=$2 bs=$3 qd=$4 r i n p res hb gb
	shift 4
	n=$#
	for (( r = 1; r <= RUNS; r++ )); do
		for (( i = 0; i < n; i++ )); do
			p=${*:$(( (i + r - 1) % n + 1 )):1}
			policy "$p"
			hb=$(load_host) gb=$(load_guest)
			res=$(fio_run "$rw" "$bs" "$qd")
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$group" "$rw" "$bs" "$qd" "$p" "$r" \
				"${res// /$'\t'}" "$hb" "$(load_host)" "$gb" "$(load_guest)" >>"$RAW"
			log "$group $rw bs=$bs qd=$qd $p run $r: $res (host load $hb)"
		done
	done
}

# path_check POLICY WANT: a 1 MiB O_DIRECT read shows path/src WANT.
path_check() {
	local got
	policy "$1"
	sched_trace_only ksmbd_read_payload >&2
	dd if="$M/bench.bin" of=/dev/null bs=1M count=1 iflag=direct 2>/dev/null
	sched_trace_stop
	got=$(sched_format ksmbd_read_payload true '"\(read_path)/\(.src_sym)"' | sort -u | tr '\n' ' ')
	echo "| $1 | $2 | ${got:-none} |"
}

mkdir -p "$M"
head -c 192M /dev/urandom >"$SMB_SHARE_DIR/bench.bin"
mount -t cifs "//$SMB_SERVER/$SMB_SHARE" "$M" \
	-o "username=$SMB_USER,password=$SMB_PASS,vers=3.1.1,cache=none" || exit 1
smb-classify load >/dev/null || exit 1
paths=$( { path_check copy copy/copy; path_check pages splice/pages; path_check pagecache splice/pagecache; } )
policy copy

if part read; then
	[[ -w $FLOOR_PARAM ]] && echo 0 >"$FLOOR_PARAM"
	for qd in $READ_QDS; do
		for bs in $RSIZES; do cell read read "$bs" "$qd" copy pages pagecache; done
	done
	[[ -w $FLOOR_PARAM ]] && echo "$FLOOR" >"$FLOOR_PARAM"
fi
if part default; then
	cell default read 4k 1 copy default
	cell floor read 4k 1 copy pagecache
fi
if part write; then
	for bs in $WSIZES; do
		for qd in 1 32; do cell write write "$bs" "$qd" percpu unbound; done
	done
fi

# order_cell BS: spliced READs, RUNS repeats of every order (rotated per
# repeat); raw rows "order read BS 1 oN RUN BW MEAN P99".
order_cell() {
	local bs=$1 r o os res hb gb
	policy pages
	for (( r = 1; r <= RUNS; r++ )); do
		os=$(awk -v r="$r" '{ for (i = 0; i < NF; i++) printf "%s ", $((i + r - 1) % NF + 1) }' <<<"$ORDERS")
		for o in $os; do
			echo "$o" >"$ORDER_PARAM"
			hb=$(load_host) gb=$(load_guest)
			res=$(fio_run read "$bs" 1)
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' order read "$bs" 1 "o$o" "$r" \
				"${res// /$'\t'}" "$hb" "$(load_host)" "$gb" "$(load_guest)" >>"$RAW"
			log "order read bs=$bs order $o run $r: $res"
		done
	done
	echo 0 >"$ORDER_PARAM"
}
if ! part order; then
	:
elif [[ -w $ORDER_PARAM ]]; then
	for bs in $OSIZES; do order_cell "$bs"; done
else
	log "no $ORDER_PARAM: order comparison skipped"
fi

# ---- tables ----------------------------------------------------------------
# summary GROUP RW BS QD A B: one table row.
summary() {
	awk -F'\t' -v g="$1" -v rw="$2" -v bs="$3" -v qd="$4" -v a="$5" -v b="$6" -v ql="$QUIET_LOAD" '
	function med(arr, n,   i, j, t) {
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
			if (arr[j] < arr[i]) { t = arr[i]; arr[i] = arr[j]; arr[j] = t }
		return n % 2 ? arr[(n + 1) / 2] : (arr[n / 2] + arr[n / 2 + 1]) / 2
	}
	$1 == g && $2 == rw && $3 == bs && $4 == qd && $7 != "-" {
		if ($5 == a) { ab[$6] = $7; am[$6] = $8; ap[$6] = $9 }
		if ($5 == b) { bb[$6] = $7; bm[$6] = $8; bp[$6] = $9 }
		if ($5 == a || $5 == b) for (k = 10; k <= 11; k++)
			if ($k != "-") { if (lmin == "" || $k < lmin) lmin = $k; if ($k > lmax) lmax = $k }
	}
	END {
		load = lmin == "" ? "-" : sprintf("%.1f-%.1f%s", lmin, lmax, lmax > ql ? " disturbed" : "")
		n = 0; rmin = 1e9; rmax = 0
		for (r in ab) if (r in bb) {
			n++; x1[n] = ab[r]; x2[n] = bb[r]; y1[n] = am[r]; y2[n] = bm[r]; z1[n] = ap[r]; z2[n] = bp[r]
			q = ab[r] ? bb[r] / ab[r] : 0
			if (q < rmin) rmin = q; if (q > rmax) rmax = q
		}
		if (!n) { printf "| %s | %s | - | - | - | - | - | - | - |\n", bs, (qd > 1 ? "QD" qd : "QD1"); exit }
		A = med(x1, n); B = med(x2, n); MA = med(y1, n); MB = med(y2, n); PA = med(z1, n); PB = med(z2, n)
		printf "| %s | %s | %.1f | %.1f | %.3f [%.3f, %.3f] | %.3f | %.3f | %d | %s |\n",
			bs, "QD" qd, A / 1024, B / 1024, A ? B / A : 0, rmin, rmax,
			MA ? MB / MA : 0, PA ? PB / PA : 0, n, load
	}' "$RAW"
}

# ostat BS POLICY COL bw|lat|med: the order rows' column COL as
# "med (min-max)" in MiB/s (bw), the median in us (lat), or the raw median.
ostat() {
	awk -F'\t' -v bs="$1" -v p="$2" -v c="$3" '$1 == "order" && $3 == bs && $5 == p && $c != "-" { print $c }' "$RAW" |
		sort -g | awk -v f="$4" '{ v[NR] = $1 } END {
			if (!NR) { print "-"; exit }
			m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			if (f == "bw") printf "%.1f (%.1f-%.1f)", m / 1024, v[1] / 1024, v[NR] / 1024
			else if (f == "lat") printf "%.0f", m
			else print m }'
}

# read_rows BS QD: one row per path (copy, pages, pagecache) of the READ
# table: MiB/s, mean and p99 completion latency (us), each median (min-max)
# over the runs; the ratio of the medians to copy's with [min, max] of the
# per-run ratios; the host's load over the cell's runs.
read_rows() {
	awk -F'\t' -v bs="$1" -v qd="$2" -v ql="$QUIET_LOAD" '
	function sortv(a, n,   i, j, t) {
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
			if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	}
	function stat(p, c, scale,   n, r, v, m) {
		n = 0
		for (r = 1; r <= runs; r++) if ((p, r) in val && val[p, r, c] != "-") v[++n] = val[p, r, c] / scale
		if (!n) return "-"
		sortv(v, n)
		m = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
		med[p, c] = m
		return sprintf("%.1f (%.1f-%.1f)", m, v[1], v[n])
	}
	$1 == "read" && $3 == bs && $4 == qd && $7 != "-" {
		val[$5, $6] = 1; val[$5, $6, 7] = $7; val[$5, $6, 8] = $8; val[$5, $6, 9] = $9
		if ($6 > runs) runs = $6
		for (k = 10; k <= 11; k++) if ($k != "-") {
			if (lmin == "" || $k < lmin) lmin = $k
			if ($k > lmax) lmax = $k
		}
	}
	END {
		load = lmin == "" ? "-" : sprintf("%.1f-%.1f%s", lmin, lmax, lmax > ql ? " disturbed" : "")
		np = split("copy pages pagecache", ps, " ")
		for (i = 1; i <= np; i++) {
			p = ps[i]
			b = stat(p, 7, 1024); m = stat(p, 8, 1); q = stat(p, 9, 1)
			n = 0; rmin = 1e9; rmax = 0
			for (r = 1; r <= runs; r++) if ((p, r) in val && ("copy", r) in val && val["copy", r, 7] > 0) {
				n++; x = val[p, r, 7] / val["copy", r, 7]
				if (x < rmin) rmin = x; if (x > rmax) rmax = x
			}
			ratio = (n && med["copy", 7] > 0) ? sprintf("%.3f [%.3f, %.3f]", med[p, 7] / med["copy", 7], rmin, rmax) : "-"
			printf "| %s | %s | %s | %s | %s | %s | %s | %d | %s |\n", bs, "QD" qd, p, b, m, q, ratio, n, load
		}
	}' "$RAW"
}

hdr() {
	echo
	echo "### $1"
	echo
	echo "| size | depth | $2 MiB/s (median) | $3 MiB/s (median) | BW ratio [min, max] | mean clat ratio | p99 clat ratio | runs | host load (1 min) |"
	echo "|---|---|---|---|---|---|---|---|---|"
}

hmax=$(awk -F'\t' '{ for (k = 10; k <= 11; k++) if ($k != "-" && $k > m) m = $k } END { print m + 0 }' "$RAW")
hmin=$(awk -F'\t' '{ for (k = 10; k <= 11; k++) if ($k != "-" && (m == "" || $k < m)) m = $k } END { print m == "" ? "-" : m }' "$RAW")
{
	echo "## ksmbd spliced READ and unbound WRITE (TCG VM, loopback cifs, vers=3.1.1, cache=none)"
	echo
	echo "$(date -u +%Y-%m-%dT%H:%MZ), kernel $(uname -r), ${RUNS} run(s) x ${T} s per cell (+1 s ramp), fio sequential, 1 job, 192 MiB file on tmpfs; parts:${PARTS% }."
	echo "Ratios are of medians (bandwidth: > 1 better; latency: < 1 better); [min, max] of the per-run ratios."
	echo
	if [[ $hmin == - ]]; then
		echo "Host load: not recorded (no $HOST_LOAD: run through selftests/bench/read-splice.sh)."
	elif awk -v m="$hmax" -v q="$QUIET_LOAD" 'BEGIN { exit !(m > q) }'; then
		echo "**DISTURBED RUN**: the host's 1-minute load average was $hmin to $hmax before/after the runs (quiet: <= $QUIET_LOAD, the VM's own vCPUs); other work shared the host CPUs.  No target may be claimed from these numbers."
	else
		echo "Host load: 1-minute load average $hmin to $hmax before/after the runs (quiet: <= $QUIET_LOAD)."
	fi
	echo
	echo "Path check (1 MiB O_DIRECT read, ksmbd_read_payload oracle, path/src):"
	echo
	echo "| policy | want | oracle |"
	echo "|---|---|---|"
	echo "$paths"
	if part read; then
		echo
		echo "### READ: copy (splice-min off) vs private pages (splice-min 0, read_payload_pagecache=N) vs page-cache pages (splice-min 0); read_splice_floor=0; targets: pagecache >= 1.5x copy at 1 MiB, >= 1.3x at 64 KiB"
		echo
		echo "| size | depth | path | MiB/s median (min-max) | mean clat us median (min-max) | p99 clat us median (min-max) | BW / copy [min, max] | runs | host load (1 min) |"
		echo "|---|---|---|---|---|---|---|---|---|"
		for qd in $READ_QDS; do
			for bs in $RSIZES; do read_rows "$bs" "$qd"; done
		done
	fi
	if part default; then
		hdr "READ 4 KiB: copy = A vs default policy (splice-min 64K) = B; target >= 0.99x" copy default
		summary default read 4k 1 copy default
		hdr "READ 4 KiB: copy = A vs splice-min 0 with the kernel floor (read_splice_floor $FLOOR: copied, below_floor) = B" copy "splice-min 0"
		summary floor read 4k 1 copy pagecache
	fi
	if part write; then
		hdr "WRITE: per-CPU (unbound-min off) = A vs unbound (unbound-min 0) = B; targets >= 1.5x at 1 MiB QD32, >= 0.98x at 4 KiB and QD1" per-CPU unbound
		for bs in $WSIZES; do
			for qd in 1 32; do summary write write "$bs" "$qd" percpu unbound; done
		done
	fi
	if part order; then
		echo
		echo "### READ into private pages (splice-min 0, read_payload_pagecache=N): payload pages of order 0 vs 2 vs 4 (read_payload_order)"
		echo
		echo "MiB/s, median (min-max) over $RUNS runs (order rotated per run); ratios of medians to order 0;"
		echo "mean completion latency in us (median)."
		echo
		hd="| size |" sp="|---|"
		for o in $ORDERS; do hd+=" order $o MiB/s |"; sp+="---|"; done
		for o in $ORDERS; do [[ $o == 0 ]] || { hd+=" order $o / order 0 |"; sp+="---|"; }; done
		for o in $ORDERS; do hd+=" order $o mean clat us |"; sp+="---|"; done
		echo "$hd"
		echo "$sp"
		for bs in $OSIZES; do
			row="| $bs |"
			for o in $ORDERS; do row+=" $(ostat "$bs" "o$o" 7 bw) |"; done
			for o in $ORDERS; do
				[[ $o == 0 ]] && continue
				row+=" $(awk -v a="$(ostat "$bs" "o$o" 7 med)" -v b="$(ostat "$bs" o0 7 med)" 'BEGIN { if (a == "-" || b == "-" || !b) print "-"; else printf "%.3f", a / b }') |"
			done
			for o in $ORDERS; do row+=" $(ostat "$bs" "o$o" 8 lat) |"; done
			echo "$row"
		done
	fi
} >"$MD"
cat "$MD"
