# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers of the hostile-peer runs (tests/93-hostile-peers, the hostile
# bench selftests/bench/in-vm-hostile.sh), on top of lib.sh and
# testlib-sched.sh: raw peers of hostile.py that lie or flood before they
# log in, and a victim's mount-and-read.  The peers' processes run at
# nice 19: they stand for other machines, and their Python would
# otherwise take the guest's CPU from the victim's client (with two
# vCPUs run by one host thread, VM_TCG_THREAD=single, it did).  Their
# requests still cost the server what they cost it: ksmbd receives and
# parses them in its own threads, at normal priority.

HOSTILE=$VM_DIR/hostile.py
HOSTILE_PIDS=()

# hostile_lie_start SECONDS ADDR...: from each ADDR, a peer streams READs
# with Length 0xffffffff on 4 connections that never set up a session,
# for SECONDS; its JSON counts in $sched_tmp/hostile-ADDR.json.
hostile_lie_start() {
	local secs=$1 a
	shift
	for a in "$@"; do
		nice -n 19 python3 "$HOSTILE" unauth-read --src "$a" --seconds "$secs" \
			--conns 4 >"$sched_tmp/hostile-$a.json" &
		HOSTILE_PIDS+=($!)
	done
}

# hostile_lie_count FIELD ADDR...: the sum of FIELD (sent: lying READs;
# replies: answers received) over the peers of hostile_lie_start at ADDR
# (after hostile_wait).
hostile_lie_count() {
	local f=$1 a n sum=0
	shift
	for a in "$@"; do
		n=$(jq -r ".$f" "$sched_tmp/hostile-$a.json" 2>/dev/null || echo 0)
		sum=$((sum + n))
	done
	echo "$sum"
}

# hostile_flood_start ADDR: from ADDR, connection after connection with a
# NEGOTIATE and a failing SESSION_SETUP, for at most 120 s; returns once
# 20 connections more than before were opened (or after 10 s).
hostile_flood_start() {
	local n0
	n0=$(hostile_conns "$1")
	nice -n 19 python3 "$HOSTILE" neg-flood --src "$1" --seconds 120 \
		>"$sched_tmp/flood-$1.json" &
	HOSTILE_PIDS+=($!)
	vm_poll 10 hostile_conns_beyond "$1" $((n0 + 20)) ||
		echo "the flood from $1 was slow to start" >&2
}

# hostile_during_flood ADDR CMD...: CMD while ADDR floods (under way
# first, hostile_flood_start); prints CMD's output, returns its status.
hostile_during_flood() {
	local out rc=0
	hostile_flood_start "$1"
	shift
	out=$("$@") || rc=$?
	hostile_stop
	echo "$out"
	return "$rc"
}

# hostile_conns ADDR: TCP sockets from ADDR, TIME-WAIT included.
hostile_conns() { ss -Htan src "$1" | wc -l; }
hostile_conns_beyond() { (( $(hostile_conns "$1") > $2 )); }

# hostile_wait: wait for the peers to end by themselves.
hostile_wait() {
	if (( ${#HOSTILE_PIDS[@]} )); then
		wait "${HOSTILE_PIDS[@]}" 2>/dev/null || true
	fi
	HOSTILE_PIDS=()
}

# hostile_stop: stop the peers now.  Safe when none runs.
hostile_stop() {
	if (( ${#HOSTILE_PIDS[@]} )); then
		kill "${HOSTILE_PIDS[@]}" 2>/dev/null || true
	fi
	hostile_wait
}

# hostile_mount_read SRC MNT FILE SHA: mount the share from SRC on MNT,
# copy FILE off it, unmount; prints the milliseconds it all took; fails
# when the copy's sha256 is not SHA.
hostile_mount_read() {
	local t0 t1
	t0=$(date +%s%N)
	sched_mount "$1" 127.0.0.1 "$2" || return 1
	cp "$2/$3" "$sched_tmp/mount-read.bin"
	umount "$2" || return 1
	t1=$(date +%s%N)
	if [[ $(sched_sha "$sched_tmp/mount-read.bin") != "$4" ]]; then
		echo "$3 read from $1 differs" >&2
		return 1
	fi
	echo $(( (t1 - t0) / 1000000 ))
}
