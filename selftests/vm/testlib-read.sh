# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers of the READ-path tests (tests/8x-read-*.sh), on top of lib.sh:
# the raw SMB2 client smb2raw.py, ksmbd.conf changes, the read_payload
# oracle (through testlib-sched.sh's tracer) and cleanup.  Source after
# lib.sh.

# The loader's tracer helpers (sched_trace_*), unless sourced already.
if ! declare -F sched_trace_start >/dev/null; then
	# shellcheck source=testlib-sched.sh
	source "$VM_DIR/testlib-sched.sh"
fi

READ_RAW=$VM_CHECKOUT/selftests/vm/smb2raw.py
read_tmp=${TEST_TMPDIR:-$(mktemp -d)}
mkdir -p "$read_tmp"
READ_CONF_CHANGED=
READ_PIDS=()

# read_need_impacket: fail the test without Debian's python3-impacket
# (make deps installs it: its absence is a broken setup, not a skip).
read_need_impacket() {
	if ! /usr/bin/python3 -c 'import impacket.smb3, Cryptodome' 2>/dev/null; then
		echo "FAIL: python3-impacket is not installed (make deps installs it)"
		exit 1
	fi
}

# read_raw ARGS...: run smb2raw.py.
read_raw() { PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 "$READ_RAW" "$@"; }

# read_conf_max_io SIZE: restart ksmbd with smb2 max read/write SIZE.
read_conf_max_io() {
	vm_ksmbd_stop
	vm_ksmbd_write_conf
	sed -i "/^\[global\]/a\\	smb2 max read = $1\\n\\	smb2 max write = $1\\n\\	smb2 max trans = $1" "$KSMBD_CONF"
	READ_CONF_CHANGED=1
	vm_ksmbd_start
}

# read_trace_start: the loader's tracer on (testlib-sched.sh), of
# ksmbd_read_payload only, the file emptied.
read_trace_start() { sched_trace_only ksmbd_read_payload; }

# read_trace_paths: "path/reason/src" counts of the read_payload events
# so far, e.g. "copy/signed/copy=3 splice/-/pagecache=12", as the
# tracepoint prints path=, reason= and src= (sched_format's read_path,
# the loader's path_sym and src_sym).
read_trace_paths() {
	sched_trace_sync
	sched_format ksmbd_read_payload true '"\(read_path)/\(.path_sym)/\(.src_sym)"' |
		jq -Rrs 'split("\n") | map(select(. != "")) | group_by(.) |
			map("\(.[0])=\(length)") | join(" ")'
}

read_cleanup() {
	local m p r
	for p in "${READ_PIDS[@]}"; do
		kill -CONT "$p" 2>/dev/null || true
		kill -KILL "$p" 2>/dev/null || true
	done
	while read -r _ m _; do
		if [[ $m == "$read_tmp"* ]]; then umount -l "$m" 2>/dev/null || true; fi
	done < <(tac /proc/mounts)
	for r in "${READ_ROUTES[@]}"; do
		ip route del local "$r/32" table local 2>/dev/null || true
	done
	READ_ROUTES=()
	smb-classify unload >/dev/null 2>&1 || true
	sched_trace_stop
	if [[ -n $READ_CONF_CHANGED ]]; then
		{ vm_ksmbd_stop && vm_ksmbd_write_conf && vm_ksmbd_start; } || true
	fi
	return 0
}

# read_route_src ADDR: connections to ADDR (127.x) leave from ADDR.
READ_ROUTES=()
read_route_src() {
	ip route replace local "$1/32" dev lo src "$1" table local
	READ_ROUTES+=("$1")
}

# read_stopped PID: the process is stopped (state T).
read_stopped() { vm_stopped "$1"; }

# read_recvq ADDR: bytes queued unread in the socket from ADDR to :445.
read_recvq() {
	ss -Htn state established '( dport = :445 )' |
		awk -v p="$1:" 'index($3, p) == 1 { n += $1 } END { print n + 0 }'
}
# read_backlog ADDR: bytes of replies to ADDR not yet read: its socket's
# receive queue plus the server socket's send queue (the server's side is
# dual-stack: [::ffff:ADDR]:445).
read_backlog() {
	ss -Htn state established '( dport = :445 or sport = :445 )' |
		awk -v p="$1:" '{ gsub(/\[|\]|::ffff:|%lo/, "", $3); gsub(/\[|\]|::ffff:|%lo/, "", $4) }
			index($3, p) == 1 { n += $1 } index($4, p) == 1 { n += $2 }
			END { print n + 0 }'
}
read_backlog_at_least() { (( $(read_backlog "$1") >= $2 )); }

# read_no_conn ADDR: no TCP connection between ADDR and :445, either
# side, in any state but TIME-WAIT.
read_no_conn() {
	! ss -Htan '( dport = :445 or sport = :445 )' |
		awk -v p="$1:" '$1 != "TIME-WAIT" && $1 != "LISTEN" {
			gsub(/\[|\]|::ffff:|%lo/, "", $4); gsub(/\[|\]|::ffff:|%lo/, "", $5)
			if (index($4, p) == 1 || index($5, p) == 1) found = 1 }
			END { exit !found }'
}

# read_disp_idle: the dispatcher has nothing in flight or queued, and the
# kernel holds no payload page.
read_disp_idle() { vm_sched_zero inflight queued payloads payload_pages; }
