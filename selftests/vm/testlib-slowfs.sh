# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The FUSE storage model (selftests/vm/slowfs.c) as a second ksmbd share,
# for the benches and the tests that need a server whose storage has a
# service time and limited parallelism (the fairness bench, the stall
# guard).  Source after lib.sh and testlib-sched.sh.
#
#   slowfs_share_start [SLOWFS_OPTION...]  mount slowfs over a backing
#       directory and export it as the share $SLOWFS_SHARE ("slow");
#       options as for slowfs (--service-ms, --jitter-pct, --parallel,
#       --bw-mibps, --threads, --cache, -o ...).  The hold file, ready
#       file and statistics are the helper's (below).
#   slowfs_share_stop                      stop it (unmount first what uses it)
#   slowfs_mount SRC MNT [OPTS]            a cifs mount of the share from SRC
#   slowfs_hold / slowfs_release           every READ blocks / runs again
#   slowfs_stat KEY                        a current counter of slowfs
#   slowfs_held_at_least N                 N reads are held (for vm_poll)
#   slowfs_none_held                       no read is held (for vm_poll)
#
# Files placed in $SLOWFS_BACKING directly are served through the model
# (create bench files there: writing them through the share would pay the
# service time).  Needs FUSE in the guest kernel (Debian's kernel,
# VM_KERNEL=stock, has it built in; the tiny kernel has none):
# slowfs_available says whether it can run.

SLOWFS_BIN=$VM_CHECKOUT/selftests/vm/slowfs
SLOWFS_SHARE=${SLOWFS_SHARE:-slow}
SLOWFS_BACKING=/srv/$SLOWFS_SHARE-backing
SLOWFS_MNT=/srv/$SLOWFS_SHARE
SLOWFS_RUN=/run/slowfs
# While this file exists every READ of slowfs blocks (slowfs_hold).
SLOWFS_HOLD=$SLOWFS_RUN/hold
SLOWFS_STATS=$SLOWFS_RUN/stats
SLOWFS_LOG=$SLOWFS_RUN/log
SLOWFS_PID=

# slowfs_available: slowfs is built and the kernel has FUSE; otherwise
# says why on stdout and returns 1.
slowfs_available() {
	if [[ ! -x $SLOWFS_BIN ]]; then
		echo "$SLOWFS_BIN missing: build it on the host with 'make -C selftests/vm' (libfuse3-dev)"
		return 1
	fi
	if ! grep -qw fuse /proc/filesystems || [[ ! -c /dev/fuse ]]; then
		echo "no FUSE in this kernel ($(uname -r)): run on Debian's kernel (VM_KERNEL=stock)"
		return 1
	fi
}

# slowfs_mounted: the model is mounted at $SLOWFS_MNT.
slowfs_mounted() { awk -v d="$SLOWFS_MNT" '$2 == d && $3 == "fuse.slowfs" { f = 1 } END { exit !f }' /proc/mounts; }
slowfs_unmounted() { ! slowfs_mounted; }

# slowfs_conf_share: the share's section in ksmbd.conf (once).
slowfs_conf_share() {
	grep -q "^\[$SLOWFS_SHARE\]" "$KSMBD_CONF" && return 0
	cat >>"$KSMBD_CONF" <<EOF

[$SLOWFS_SHARE]
	path = $SLOWFS_MNT
	read only = no
	browseable = yes
	force user = root
	force group = root
EOF
	# ksmbd.mountd reads the file again; the kernel asks it for a
	# share's configuration at the first TREE_CONNECT to it.
	ksmbd.control -r >>"$KSMBD_LOG" 2>&1
}

# slowfs_share_ok: a TREE_CONNECT to the share and a directory listing work.
slowfs_share_ok() {
	smbclient "//127.0.0.1/$SLOWFS_SHARE" -U "$SMB_USER%$SMB_PASS" -m SMB3 -c ls >/dev/null 2>&1
}

slowfs_share_start() {
	local why
	why=$(slowfs_available) || { echo "slowfs: $why" >&2; return 1; }
	slowfs_share_stop
	mkdir -p "$SLOWFS_BACKING" "$SLOWFS_MNT" "$SLOWFS_RUN"
	chmod 0777 "$SLOWFS_BACKING"
	rm -f "$SLOWFS_RUN/ready" "$SLOWFS_STATS" "$SLOWFS_HOLD"
	"$SLOWFS_BIN" --hold-file "$SLOWFS_HOLD" --ready-file "$SLOWFS_RUN/ready" \
		--stats-file "$SLOWFS_STATS" "$@" "$SLOWFS_BACKING" "$SLOWFS_MNT" \
		>>"$SLOWFS_LOG" 2>&1 </dev/null &
	SLOWFS_PID=$!
	if ! vm_poll 30 test -e "$SLOWFS_RUN/ready" || ! slowfs_mounted; then
		echo "slowfs: not mounted at $SLOWFS_MNT after 30 s; $SLOWFS_LOG:" >&2
		tail -n 5 "$SLOWFS_LOG" >&2
		slowfs_share_stop
		return 1
	fi
	slowfs_conf_share
	if ! vm_poll 60 slowfs_share_ok; then
		echo "slowfs: share $SLOWFS_SHARE not served after 60 s" >&2
		slowfs_share_stop
		return 1
	fi
}

# slowfs_share_stop: release held reads, stop slowfs (it unmounts on
# SIGTERM), wait for it.  The share's section stays in ksmbd.conf (the
# next start serves the same path).  Safe when nothing runs.
slowfs_share_stop() {
	local pid
	rm -f "$SLOWFS_HOLD"
	if [[ -n $SLOWFS_PID ]]; then
		kill -TERM "$SLOWFS_PID" 2>/dev/null
		wait "$SLOWFS_PID" 2>/dev/null
		SLOWFS_PID=
	elif read -r pid 2>/dev/null <"$SLOWFS_RUN/ready" && [[ $pid =~ ^[0-9]+$ ]]; then
		# started by another shell: not our child, wait for it to go
		kill -TERM "$pid" 2>/dev/null && vm_poll 30 eval "! kill -0 $pid 2>/dev/null"
	fi
	rm -f "$SLOWFS_RUN/ready"
	slowfs_mounted && umount -l "$SLOWFS_MNT"
	vm_poll 10 slowfs_unmounted
}

# slowfs_mount SRC MNT [OPTS]: cifs mount of the slow share from SRC (its
# own connection), as sched_mount does for the main share.
slowfs_mount() { SMB_SHARE=$SLOWFS_SHARE sched_mount "$1" 127.0.0.1 "$2" "${3:-}"; }

# slowfs_no_splice CLASS...: no SPLICE verdict for these classes.
# ksmbd's zero-copy READ reads a file through its page cache
# (filemap_splice_read(), also for a FUSE direct_io file), so a spliced
# READ of slowfs would be served around the storage model.
slowfs_no_splice() {
	local c
	for c in "$@"; do
		smb-classify policy set "$c" splice-min off >/dev/null
	done
}

slowfs_hold() { : >"$SLOWFS_HOLD"; }
slowfs_release() { rm -f "$SLOWFS_HOLD"; }

# slowfs_stat KEY: KEY's value from slowfs's statistics, current: asks
# slowfs to rewrite them (SIGUSR1) and waits until it has.
slowfs_stat() {
	local n pid=$SLOWFS_PID
	n=$(slowfs_stat_file updates)
	[[ -n $pid ]] || read -r pid <"$SLOWFS_RUN/ready" || return 1
	kill -USR1 "$pid" 2>/dev/null || return 1
	vm_poll 10 slowfs_updated_after "${n:-0}" || return 1
	slowfs_stat_file "$1"
}
# slowfs_stat_file KEY: KEY as the statistics file has it now.
slowfs_stat_file() { awk -v k="$1:" '$1 == k { print $2 }' "$SLOWFS_STATS" 2>/dev/null; }
slowfs_updated_after() {
	local v
	v=$(slowfs_stat_file updates)
	(( ${v:-0} > $1 ))
}

# slowfs_held_at_least N: N or more reads are blocked by the hold file
# (the file is rewritten whenever that number changes).
slowfs_held_at_least() {
	local v
	v=$(slowfs_stat_file held)
	(( ${v:-0} >= $1 ))
}
slowfs_none_held() { [[ $(slowfs_stat_file held) == 0 ]]; }
