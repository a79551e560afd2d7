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

# ---- loads of the server-cost runs (stress/94, the hostile bench) ------

# slowfs_copies_start MNT N STOP: N loops of copy_file_range(2) on the
# cifs mount MNT of the slow share, srcI.bin (1 MiB, written here into
# the backing directory) to copyI.bin, until the file STOP exists; the
# cifs client sends each copy as FSCTL_SRV_COPYCHUNK_WRITE (MS-SMB2
# 2.2.31.1).  A source file per loop: the cifs client locks both inodes
# of a copy, so loops sharing a source would run one at a time.  Pid in
# SLOWFS_COPY_PID; slowfs_copies_stop ends them.
slowfs_copies_start() {
	local mnt=$1 n=$2 i
	SLOWFS_COPY_STOP=$3
	rm -f "$SLOWFS_COPY_STOP"
	for (( i = 0; i < n; i++ )); do
		[[ -s $SLOWFS_BACKING/src$i.bin ]] ||
			head -c 1M /dev/urandom >"$SLOWFS_BACKING/src$i.bin"
	done
	python3 - "$mnt" "$n" "$SLOWFS_COPY_STOP" <<'PY' &
import os, sys
mnt, n, stop = sys.argv[1], int(sys.argv[2]), sys.argv[3]
for i in range(n):
    if os.fork() == 0:
        src = os.open(f"{mnt}/src{i}.bin", os.O_RDONLY)
        dst = os.open(f"{mnt}/copy{i}.bin", os.O_WRONLY | os.O_CREAT, 0o644)
        size = os.fstat(src).st_size
        while not os.path.exists(stop):
            off = 0
            while off < size:
                got = os.copy_file_range(src, dst, size - off, off, off)
                if got <= 0:
                    sys.exit(f"copy_file_range returned {got}")
                off += got
        os._exit(0)
ok = True
for i in range(n):
    ok &= os.wait()[1] == 0
sys.exit(0 if ok else 1)
PY
	SLOWFS_COPY_PID=$!
}
SLOWFS_COPY_PID=''

# slowfs_copies_stop: the loops finish the copy they are in and exit;
# fails when one of them failed.  Safe when none runs.
slowfs_copies_stop() {
	local rc=0
	[[ -n $SLOWFS_COPY_PID ]] || return 0
	: >"$SLOWFS_COPY_STOP"
	wait "$SLOWFS_COPY_PID" || rc=$?
	SLOWFS_COPY_PID=''
	rm -f "$SLOWFS_COPY_STOP"
	return "$rc"
}

# slowfs_copies_exact N: copyI.bin equals srcI.bin for every loop.
slowfs_copies_exact() {
	local i
	for (( i = 0; i < $1; i++ )); do
		cmp -s "$SLOWFS_BACKING/src$i.bin" "$SLOWFS_BACKING/copy$i.bin" || return 1
	done
}

# slowfs_syncwrites_start MNT OUT: 8 fio jobs on the cifs mount MNT,
# each writing 4 KiB at random in its own 1 MiB file with an fsync after
# every write (WRITE + FLUSH), for at most 600 s; fio's report in OUT.
# The files are laid out here first: through the share fio would write
# them 4 KiB at a time, at the model's service time.  Pid in
# SLOWFS_WRITE_PID; slowfs_syncwrites_stop ends them.
slowfs_syncwrites_start() {
	local i
	for i in 0 1 2 3 4 5 6 7; do
		[[ -s $SLOWFS_BACKING/sync.$i.0 ]] ||
			head -c 1M /dev/zero >"$SLOWFS_BACKING/sync.$i.0"
	done
	fio --name=sync --thread --directory="$1" --size=1m --rw=randwrite \
		--bs=4k --fsync=1 --numjobs=8 --time_based --runtime=600 \
		--output="$2" >/dev/null 2>&1 &
	SLOWFS_WRITE_PID=$!
}
SLOWFS_WRITE_PID=''
slowfs_syncwrites_stop() {
	[[ -n $SLOWFS_WRITE_PID ]] || return 0
	kill "$SLOWFS_WRITE_PID" 2>/dev/null || true
	wait "$SLOWFS_WRITE_PID" 2>/dev/null || true
	SLOWFS_WRITE_PID=''
}
