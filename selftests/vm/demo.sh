#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The demonstration behind `make demo` (selftests/vm/run selftests/vm/demo.sh):
# inside the test VM, load the reference classifier, give it a prefix map,
# connect real SMB clients (smbclient and mount.cifs) from 127.0.0.2,
# 127.0.0.3, ::1 and fd5b::2 (all on lo), read a file through each and
# check its sha256, and show what ksmbd did: the ksmbd_sched_conn
# tracepoint per connection, the prefix list, the status, and the dispatch
# and read-payload events of one 1 MiB READ sent spliced.  Then unload.
#
# Exit status 0 only if every check passed: data intact, every connection
# of every client in the class the map gives, the 1 MiB READ spliced, and
# nothing attached after unload.

set -uo pipefail
# shellcheck source=lib.sh
source "${VM_DIR:?run me inside the VM: selftests/vm/run $0}/lib.sh"
# The tracepoints through "smb-classify -j trace" (sched_trace_*).
# shellcheck source=testlib-sched.sh
source "$VM_DIR/testlib-sched.sh"

PROG=smb_prefix
V6_OTHER=fd5b::2		# on lo too; covered only by ::/0
tmp=$(mktemp -d)
auth=(-U "$SMB_USER%$SMB_PASS")
failures=0
mounts=()
routes=()

section() { printf '\n==== %s ====\n' "$*"; }
ok() { printf '  ok    %s\n' "$*"; }
bad() { printf '  FAIL  %s\n' "$*"; failures=$((failures + 1)); }
# check DESC CMD...: run CMD quietly, one ok/FAIL line (vm_check's
# form for the demo: it goes on and counts).
check() {
	local desc=$1
	shift
	if "$@" >"$tmp/check.out" 2>&1; then
		ok "$desc"
	else
		bad "$desc"
		sed 's/^/        /' "$tmp/check.out"
	fi
}
# fatal DESC CMD...: as check, but stop the demo on failure.
fatal() {
	check "$@"
	if ((failures)); then
		echo "demo: cannot continue" >&2
		exit 1
	fi
}
sha() { sha256sum "$1" | cut -d' ' -f1; }

cleanup() {
	local m r
	for m in "${mounts[@]}"; do umount -l "$m" 2>/dev/null; done
	for r in "${routes[@]}"; do
		ip route del local "$r/32" table local 2>/dev/null
	done
	ip -6 addr del "$V6_OTHER/128" dev lo 2>/dev/null
	smb-classify unload >/dev/null 2>&1
	sched_trace_stop
	rm -rf "$tmp"
}
trap cleanup EXIT

# ---- 1. the classifier and its map -----------------------------------------
section "1. Load the reference classifier and its prefix map"
fatal "smb-classify load" smb-classify load
fatal "prefix 127.0.0.2/32 -> class 1" smb-classify prefix add 127.0.0.2/32 1
fatal "prefix 127.0.0.0/8  -> class 2 weight 3" \
	smb-classify prefix add 127.0.0.0/8 2 weight 3
fatal "prefix ::1/128      -> class 3" smb-classify prefix add ::1/128 3
fatal "prefix ::/0         -> class 0 per-peer" \
	smb-classify prefix add ::/0 0 per-peer

# The class word each peer must get (as ksmbd_sched_conn prints the peer:
# IPv4 IPv4-mapped).  Weight 1 is stored explicitly by the loader.
declare -A want=(
	[::ffff:127.0.0.2]=0x00010001	# 127.0.0.2/32: id 1
	[::ffff:127.0.0.3]=0x00030002	# 127.0.0.0/8:  id 2, weight 3
	[::1]=0x00010003		# ::1/128:      id 3
	[$V6_OTHER]=0x80010000		# ::/0:         id 0, per-peer
)

# ---- 2. tracepoints --------------------------------------------------------
section "2. Trace the ksmbd tracepoints: smb-classify -j trace"
fatal "smb-classify -j trace, in the background" sched_trace_start
printf '  events:'
for d in "$SCHED_TRACE"/events/ksmbd/ksmbd_*/; do printf ' %s' "$(basename "$d")"; done
echo

# ---- 3. clients ------------------------------------------------------------
section "3. Clients: mount.cifs and smbclient from each source address"
head -c 4M /dev/urandom >"$SMB_SHARE_DIR/data.bin"
sum=$(sha "$SMB_SHARE_DIR/data.bin")
printf '  share file data.bin: 4 MiB, sha256 %s\n' "${sum:0:16}..."

# smbclient cannot pick its source: a local route to 127.0.0.N with
# "src 127.0.0.N" makes connections to that address leave from it.
for a in 127.0.0.2 127.0.0.3; do
	ip route replace local "$a/32" dev lo src "$a" table local && routes+=("$a")
done

# cifs SRC DEST: mount from SRC (own connection: nosharesock), read
# data.bin uncached, compare.
cifs() {
	local src=$1 dest=$2 mnt opts
	mnt=$tmp/mnt-${src//:/_}
	mkdir -p "$mnt"
	opts="username=$SMB_USER,password=$SMB_PASS,vers=3.1.1,cache=none"
	opts+=",nosharesock,srcaddr=$src"
	if ! mount -t cifs "//$dest/$SMB_SHARE" "$mnt" -o "$opts" >"$tmp/m.out" 2>&1; then
		bad "mount.cifs from $src to $dest"
		sed 's/^/        /' "$tmp/m.out"
		return
	fi
	mounts+=("$mnt")
	check "mount.cifs from $src: read data.bin, sha256 matches" \
		test "$(sha "$mnt/data.bin")" = "$sum"
}

# smbc DEST: smbclient session to DEST (the source follows the route).
smbc() {
	local dest=$1 out=$tmp/sc-${1//:/_}.bin
	if ! smbclient "//$dest/$SMB_SHARE" "${auth[@]}" -m SMB3 \
			-c "get data.bin $out" >"$tmp/sc.out" 2>&1; then
		bad "smbclient //$dest/$SMB_SHARE"
		sed 's/^/        /' "$tmp/sc.out"
		return
	fi
	check "smbclient to $dest: get data.bin, sha256 matches" \
		test "$(sha "$out")" = "$sum"
}

cifs 127.0.0.2 127.0.0.1
smbc 127.0.0.2
cifs 127.0.0.3 127.0.0.1
smbc 127.0.0.3
cifs ::1 ::1
smbc ::1
# An address that only ::/0 covers, so the per-peer entry is seen too.
# Added after the IPv4 mounts: with a global IPv6 address on lo, mount.cifs
# hands the kernel an IPv6 server address, and srcaddr=127.0.0.N then fails
# to bind (EAFNOSUPPORT).
ip -6 addr add "$V6_OTHER/128" dev lo nodad
cifs "$V6_OTHER" ::1
smbc "$V6_OTHER"

# ---- 4. classification -----------------------------------------------------
section "4. ksmbd_sched_conn: one event per accepted connection"
sched_trace_sync
sched_format ksmbd_sched_conn true \
	'"  peer=\(.peer) port=\(.peer_port) class_word=\(.class_word | hex8) class=\(.class) weight=\(.weight) per_peer=\(.per_peer) prog=\(.prog)"'
echo
for peer in ::ffff:127.0.0.2 ::ffff:127.0.0.3 ::1 "$V6_OTHER"; do
	got=$(sched_format ksmbd_sched_conn ".peer == \"$peer\"" '"\(.class_word | hex8) \(.prog)"' | sort -u)
	n=$(sched_count ksmbd_sched_conn ".peer == \"$peer\"")
	if [[ $got == "${want[$peer]} $PROG" ]] && ((n >= 2)); then
		ok "$peer: $n connections, all class ${want[$peer]}"
	else
		bad "$peer: want >= 2 connections of class ${want[$peer]} prog $PROG, got $n: ${got//$'\n'/; }"
	fi
done
others=$(sched_count ksmbd_sched_conn \
	'.peer | test("^(::ffff:127\\.0\\.0\\.[23]|::1|fd5b::2)$") | not')
check "no connection from an unexpected peer ($others)" test "$others" = 0

section "5. smb-classify prefix list"
smb-classify prefix list | sed 's/^/  /'

# ---- 6. one 1 MiB READ, spliced --------------------------------------------
section "6. One 1 MiB READ from 127.0.0.2 (policy: splice-min 64K by default)"
mnt=$tmp/mnt-127.0.0.2
sched_trace_clear
if [[ -d $mnt ]] && dd if="$mnt/data.bin" of="$tmp/one.bin" bs=1M count=1 \
		iflag=direct status=none; then
	check "1 MiB read, sha256 equals the file's first MiB" \
		test "$(sha "$tmp/one.bin")" = \
		"$(head -c 1M "$SMB_SHARE_DIR/data.bin" | sha256sum | cut -d' ' -f1)"
else
	bad "dd of 1 MiB from the 127.0.0.2 mount"
fi
sched_trace_sync
jq -c 'select((.event == "ksmbd_sched_req" or .event == "ksmbd_sched_dispatch") and .cmd == "READ"
		or .event == "ksmbd_read_payload") | del(.time, .ts, .cpu, .pid, .task)' \
	"$SCHED_TRACE_JSON" | sed 's/^/  /'
echo
check "ksmbd_read_payload: the splice path (path 0, reason -), len 1048576" \
	test "$(sched_count ksmbd_read_payload '.path == 0 and .path_sym == "-" and .len == 1048576')" -ge 1
check "ksmbd_sched_dispatch: the READ of client 1 on the per-CPU queue" \
	test "$(sched_count ksmbd_sched_dispatch '.class == 1 and .cmd == "READ" and .queue == "percpu" and .bytes == 1048576')" -ge 1

section "7. smb-classify status"
smb-classify status | sed 's/^/  /'

# ---- 8. unload -------------------------------------------------------------
section "8. smb-classify unload"
for m in "${mounts[@]}"; do umount "$m"; done
mounts=()
check "smb-classify unload" smb-classify unload
check "/proc/net/ksmbd_sched: attached: 0" test "$(sched_proc attached)" = 0
sched_trace_clear
if smbclient "//127.0.0.2/$SMB_SHARE" "${auth[@]}" -m SMB3 -c "get data.bin $tmp/after.bin" \
		>"$tmp/sc.out" 2>&1; then
	check "after unload: smbclient read, sha256 matches" test "$(sha "$tmp/after.bin")" = "$sum"
else
	bad "after unload: smbclient //127.0.0.2/$SMB_SHARE"
	sed 's/^/        /' "$tmp/sc.out"
fi
sched_trace_sync
check "after unload: no ksmbd_sched_conn event (static key off)" \
	test "$(sched_conn_count)" = 0

section "Result"
if ((failures)); then
	echo "  $failures check(s) failed"
	exit 1
fi
echo "  all checks passed"
