# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers for code running inside the test VM: guest-init, guest-suite and
# the tests themselves (source "$VM_DIR/lib.sh"; VM_DIR is exported).
#
# Nothing here sleeps and hopes: every wait polls a condition with a bound.

# vm_log MSG...: a harness message on stderr.
vm_log() { echo "vm: $*" >&2; }

# vm_poll TIMEOUT_S CMD [ARGS...]: run CMD every 0.1 s until it succeeds or
# TIMEOUT_S (times TEST_TIMEOUT_SCALE) seconds have passed.  Returns 0 on
# success, 1 on timeout.
vm_poll() {
	local timeout=$1 deadline
	shift
	# Scaled like the test timeouts (TEST_TIMEOUT_SCALE: 4 on the KASAN
	# kernel), so a bound meant for the stock kernel holds there too.
	timeout=$(( timeout * ${TEST_TIMEOUT_SCALE:-1} ))
	# EPOCHREALTIME without the dot: microseconds, no fork.
	deadline=$(( ${EPOCHREALTIME/./} + timeout * 1000000 ))
	while :; do
		"$@" && return 0
		(( ${EPOCHREALTIME/./} < deadline )) || return 1
		sleep 0.1
	done
}

# vm_proc_state PID: the state letter of PID (R, S, D, T, Z, ...), empty
# when it is gone.  The field after the last ')' of /proc/PID/stat.
vm_proc_state() {
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
	s=${s##*) }
	echo "${s%% *}"
}
# vm_stopped PID: the process is stopped (SIGSTOP: state T).
vm_stopped() { [[ $(vm_proc_state "$1") == T ]]; }
# vm_settled PID: stopped, exited (zombie) or gone: no longer running.
vm_settled() { [[ $(vm_proc_state "$1") == [TZ] || ! -e /proc/$1 ]]; }

# vm_tcp_listening PORT: true if some socket listens on TCP PORT (v4 or v6).
# Reads /proc/net/tcp{,6} directly: no dependency on ss/netstat.
vm_tcp_listening() {
	local hexport f
	hexport=$(printf ':%04X' "$1")
	for f in /proc/net/tcp /proc/net/tcp6; do
		[[ -r $f ]] || continue
		# sl local_address rem_address st ...; st 0A = LISTEN
		awk -v p="$hexport" 'NR > 1 && substr($2, length($2) - 4) == p && $4 == "0A" { found = 1 }
			END { exit !found }' "$f" && return 0
	done
	return 1
}

vm_tcp_not_listening() { ! vm_tcp_listening "$1"; }

# The ksmbd instance the harness manages.  Paths are Debian ksmbd-tools'
# defaults, on tmpfs inside the VM.
KSMBD_CONF=/etc/ksmbd/ksmbd.conf
KSMBD_LOG=/var/log/ksmbd.mountd.log
KSMBD_START_TIMEOUT=${KSMBD_START_TIMEOUT:-60}

# vm_ksmbd_write_conf: write ksmbd.conf and the user database for
# $SMB_SHARE at $SMB_SHARE_DIR, user $SMB_USER / $SMB_PASS.
vm_ksmbd_write_conf() {
	mkdir -p "$SMB_SHARE_DIR"
	chmod 0777 "$SMB_SHARE_DIR"
	cat >"$KSMBD_CONF" <<EOF
[global]
	netbios name = KSMBD-VM
	workgroup = WORKGROUP
	server string = ksmbd test VM
	map to guest = never

[$SMB_SHARE]
	path = $SMB_SHARE_DIR
	read only = no
	browseable = yes
	force user = root
	force group = root
EOF
	rm -f /etc/ksmbd/ksmbdpwd.db
	ksmbd.adduser -a "$SMB_USER" -p "$SMB_PASS" -c "$KSMBD_CONF" >/dev/null
}

# vm_ksmbd_start: start ksmbd.mountd (foreground mode, in the background of
# this shell) and wait until the kernel server listens on port 445.
vm_ksmbd_start() {
	if vm_tcp_listening 445; then
		return 0
	fi
	[[ -s $KSMBD_CONF ]] || vm_ksmbd_write_conf
	ksmbd.mountd -n >>"$KSMBD_LOG" 2>&1 </dev/null &
	if ! vm_poll "$KSMBD_START_TIMEOUT" vm_tcp_listening 445; then
		vm_log "ksmbd not listening on port 445 after ${KSMBD_START_TIMEOUT} s; $KSMBD_LOG:"
		tail -n 20 "$KSMBD_LOG" >&2
		return 1
	fi
}

# vm_ksmbd_stop: shut the server down and wait until port 445 is closed.
vm_ksmbd_stop() {
	vm_tcp_listening 445 || return 0
	ksmbd.control -s >>"$KSMBD_LOG" 2>&1 || true
	if ! vm_poll "$KSMBD_START_TIMEOUT" vm_tcp_not_listening 445; then
		vm_log "ksmbd still listening on port 445 after ${KSMBD_START_TIMEOUT} s"
		return 1
	fi
}

# vm_sched_value KEY [NETNS]: the value of "KEY: V" in
# /proc/net/ksmbd_sched of this netns (or NETNS), empty when the line is
# absent, as smb-classify parses it: the one parser of the kernel's
# format ("status -o kernel" prints KEY VALUE lines and touches nothing).
vm_sched_value() {
	local k v
	while read -r k v; do
		[[ $k == "$1" ]] && { echo "$v"; return 0; }
	done < <(smb-classify ${2:+-n "$2"} -o kernel status)
}

# vm_sched_held_zero: the kernel holds no spliced READ payload and no
# payload page (exact counters, not MemFree: tmpfs, the page cache and
# socket buffers do not move them).  False when the lines are missing.
vm_sched_held_zero() { vm_sched_zero payloads payload_pages; }

# vm_sched_zero KEY...: every KEY of /proc/net/ksmbd_sched is 0 (one read
# through smb-classify); false when one is missing.
vm_sched_zero() {
	local -A v
	local k x
	while read -r k x; do v[$k]=$x; done < <(smb-classify -o kernel status)
	for k; do [[ ${v[$k]:-} == 0 ]] || return 1; done
}

# Result helpers for tests: one line per check, PASS/FAIL/SKIP.
# vm_check DESC CMD [ARGS...]: run CMD, print PASS or FAIL, count failures.
VM_FAILURES=0
vm_pass() { echo "PASS: $*"; }
vm_fail() { echo "FAIL: $*"; VM_FAILURES=$((VM_FAILURES + 1)); }
vm_check() {
	local desc=$1
	shift
	if "$@"; then vm_pass "$desc"; else vm_fail "$desc"; fi
}
# vm_skip_test REASON: end the test as skipped (exit status 4).
vm_skip_test() { echo "SKIP: $*"; exit 4; }
# vm_finish: end the test: status 1 if any check failed, else 0.
vm_finish() {
	if (( VM_FAILURES > 0 )); then
		echo "$VM_FAILURES check(s) failed"
		exit 1
	fi
	exit 0
}
