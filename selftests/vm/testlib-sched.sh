# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers of the scheduling tests (tests/[0-9]*-*.sh), on top of lib.sh:
# tracepoints, /proc/net/ksmbd_sched, cifs mounts from a chosen source
# address, and cleanup.  Source after lib.sh.

SCHED_TRACE=/sys/kernel/tracing
SCHED_PROC=/proc/net/ksmbd_sched
SCHED_PINS=/sys/fs/bpf/smb-classify
SCHED_CONST_OBJ=$VM_CHECKOUT/selftests/vm/progs/const_class.bpf.o
SCHED_ATTACH_TEST=$VM_CHECKOUT/selftests/vm/attach_test
SCHED_TOKEN_TEST=$VM_CHECKOUT/selftests/vm/token_test
# KSMBD_SCHED_CLASS(42, 1, 0): the default class word of const_class.
SCHED_CONST_WORD=0x0001002a
# The start of the kernel's one log line when the watchdog bypasses a
# dispatcher (ksmbd_disp_guard_fn()).
SCHED_WATCHDOG_LOG='ksmbd: sched: a client waited'

sched_tmp=${TEST_TMPDIR:-$(mktemp -d)}
mkdir -p "$sched_tmp"
sched_auth=(-U "$SMB_USER%$SMB_PASS")

# sched_need_built: the host-built helpers exist (make -C selftests/vm).
sched_need_built() {
	local f
	for f in "$SCHED_CONST_OBJ" "$SCHED_ATTACH_TEST" "$SCHED_TOKEN_TEST"; do
		if [[ ! -e $f ]]; then
			echo "FAIL: $f missing: build it on the host with 'make -C selftests/vm'"
			exit 1
		fi
	done
}

# sched_proc KEY [NETNS]: a value of /proc/net/ksmbd_sched (lib.sh).
sched_proc() { vm_sched_value "$@"; }

# sched_proc_show KEY...: "KEY=V ..." of /proc/net/ksmbd_sched, one read
# through smb-classify (for messages).
sched_proc_show() {
	local -A v
	local k x out=()
	while read -r k x; do v[$k]=$x; done < <(smb-classify -o kernel status)
	for k; do out+=("$k=${v[$k]:-}"); done
	echo "${out[*]}"
}

# sched_class_field ID FIELD: a counter of class ID (0 if not seen yet).
sched_class_field() {
	smb-classify -j -o kernel status |
		jq --argjson id "$1" --arg f "$2" '[.classes[] | select(.class == $id) | .[$f]] | first // 0'
}

# sched_client_field ID FIELD: FIELD summed over the dispatcher clients of
# class ID ("smb-classify -j clients"); empty when it has none.
sched_client_field() {
	smb-classify -j clients 2>/dev/null |
		jq -r --argjson id "$1" --arg f "$2" '[.[] | select(.class == $id) | .[$f]] | add // empty'
}

# sched_netns_ino: inode of the current netns.
sched_netns_ino() { stat -L -c %i /proc/self/ns/net; }

# The ksmbd events of the current netns as the loader decodes them
# ("smb-classify -j trace": binary records, libtraceevent; no trace text
# is parsed here), one JSON object a line in SCHED_TRACE_JSON, each with
# the fields of its event's format by name plus "class", "weight",
# "per_peer", "cmd", "queue", "splice", "route", "reason", "source"
# (smb-classify(8)); "ts" is the mono clock, that of wait_ns.
#   sched_trace_start  tracer on, file emptied;
#   sched_trace_only EVENT...  the same, of these events only (e.g.
#                      ksmbd_sched_dispatch);
#   sched_trace_sync   every event recorded so far is in the file (the
#                      tracer drains its buffer on SIGUSR1 and says so;
#                      it keeps running);
#   sched_trace_clear  sync, then empty the file; the ksmbd_sched_conn
#                      events it held are added to SCHED_CONNS_SEEN;
#   sched_trace_lost   events the tracer's ring buffer lost: as of the
#                      last sync, or all of them after the stop;
#   sched_trace_stop   tracer off (the file stays, complete).
# Events fired between a clear's sync and its emptying are lost: clear
# after an action, not during one.  Call these in the test's shell, not
# in $(...): the tracer is a child of the shell that starts it.
SCHED_TRACE_JSON=$sched_tmp/trace.json
SCHED_CONNS_SEEN=0
sched_trace_start() {
	SCHED_CONNS_SEEN=0
	sched_ltrace_start "$SCHED_TRACE_JSON"
}
sched_trace_only() {
	SCHED_CONNS_SEEN=0
	sched_ltrace_start "$SCHED_TRACE_JSON" "$@"
}
sched_trace_sync() { sched_ltrace_drain; }
sched_trace_clear() {
	sched_ltrace_drain
	SCHED_CONNS_SEEN=$(( SCHED_CONNS_SEEN + $(sched_conn_count) ))
	# The tracer appends (O_APPEND): it goes on at the new end.
	: >"$SCHED_TRACE_JSON"
}
sched_trace_lost() { echo "${SCHED_LTRACE_LOST:-0}"; }
# sched_conns_seen: ksmbd_sched_conn events since sched_trace_start,
# across clears (sched_trace_sync first for all of them).
sched_conns_seen() { echo $(( SCHED_CONNS_SEEN + $(sched_conn_count) )); }
sched_trace_stop() {
	sched_ltrace_stop
	# Tests that trace through the global buffer themselves.
	echo 0 >"$SCHED_TRACE/events/ksmbd/enable" 2>/dev/null || true
	: >"$SCHED_TRACE/trace" 2>/dev/null || true
}

# sched_events EVENT [JQ-CONDITION]: the EVENT events in the file as it
# is now (sched_trace_sync first for all of them), one JSON object a
# line; JQ-CONDITION selects, e.g. '.cmd == "READ" and .length >= 4096'.
sched_events() {
	jq -c --arg e "$1" "select(.event == \$e and (${2:-true}))" "$SCHED_TRACE_JSON"
}
# sched_count EVENT [JQ-CONDITION]: how many of sched_events.
sched_count() { sched_events "$@" | wc -l; }
# sched_seen EVENT [JQ-CONDITION]: at least one (for vm_poll).
sched_seen() { sched_events "$@" | grep -q .; }

# sched_format EVENT JQ-CONDITION JQ-STRING: one line per EVENT event that
# matches, JQ-STRING of it; "hex8" gives a number as the kernel prints a
# class word (0x%08x), "read_path" a ksmbd_read_payload's path as the
# kernel prints path= (splice for path 0, else copy).
sched_format() {
	sched_events "$1" "$2" | jq -r 'def hex8: . as $n | [range(7; -1; -1) as $i |
		($n / pow(16; $i) | floor) % 16 | "0123456789abcdef"[.:.+1]] |
		"0x" + join("");
		def read_path: if .path == 0 then "splice" else "copy" end; '"$3"
}
# sched_conn_events: one line per ksmbd_sched_conn event:
#   NETNS PEER PORT CLASSWORD PROG
sched_conn_events() {
	sched_format ksmbd_sched_conn true \
		'"\(.netns_ino) \(.peer) \(.peer_port) \(.class_word | hex8) \(.prog)"'
}

sched_conn_count() { sched_conn_events | wc -l; }
# sched_conn_count_gt N: more than N ksmbd_sched_conn events (for vm_poll).
sched_conn_count_gt() { (( $(sched_conn_count) > $1 )); }

# sched_peer ADDR: the peer as the tracepoint prints it (IPv4 mapped).
sched_peer() {
	if [[ $1 == *:* ]]; then echo "$1"; else echo "::ffff:$1"; fi
}

# sched_mount SRC DEST MNT [OPTS]: cifs mount of the share at DEST from
# source address SRC (its own connection: nosharesock), with more mount
# options OPTS (e.g. seal).
sched_mount() {
	local src=$1 dest=$2 mnt=$3 extra=${4:-} opts
	opts="username=$SMB_USER,password=$SMB_PASS,vers=3.1.1,cache=none,nosharesock"
	[[ -n $src ]] && opts+=",srcaddr=$src"
	[[ -n $extra ]] && opts+=",$extra"
	mkdir -p "$mnt"
	mount -t cifs "//$dest/$SMB_SHARE" "$mnt" -o "$opts"
}

# sched_client_port SRC: local port of the established client connection
# from SRC to port 445 (exactly one expected).
sched_client_port() {
	local src=$1 pat
	if [[ $src == *:* ]]; then pat="[$src]:"; else pat="$src:"; fi
	ss -Htn state established '( dport = :445 )' |
		awk -v p="$pat" 'index($3, p) == 1 { n = split($3, a, ":"); print a[n] }'
}

# sched_expect_conn DESC PEER PORT CLASSWORD PROG: exactly one
# ksmbd_sched_conn event for PEER:PORT, with CLASSWORD and PROG.
sched_expect_conn() {
	local desc=$1 peer=$2 port=$3 word=$4 prog=$5 got
	sched_trace_sync
	got=$(sched_format ksmbd_sched_conn ".peer == \"$peer\" and .peer_port == $port" \
		'"\(.class_word | hex8) \(.prog)"')
	if [[ $got == "$word $prog" ]]; then
		vm_pass "$desc: conn $peer port $port class $word prog $prog"
	else
		vm_fail "$desc: conn $peer port $port: want class $word prog $prog, got '${got//$'\n'/; }'"
	fi
}

# sched_expect_peer_conns DESC PEER CLASSWORD PROG: at least one
# ksmbd_sched_conn event for PEER, all with CLASSWORD and PROG.
sched_expect_peer_conns() {
	local desc=$1 peer=$2 word=$3 prog=$4 got
	sched_trace_sync
	got=$(sched_format ksmbd_sched_conn ".peer == \"$peer\"" '"\(.class_word | hex8) \(.prog)"' |
		sort -u)
	if [[ $got == "$word $prog" ]]; then
		vm_pass "$desc: conns of $peer have class $word prog $prog"
	else
		vm_fail "$desc: conns of $peer: want class $word prog $prog, got '${got//$'\n'/; }'"
	fi
}

# sched_expect_reqs DESC PEER CLASSWORD [CMD]: ksmbd_sched_req events of
# PEER all carry CLASSWORD, and there is at least one (of CMD if given).
sched_expect_reqs() {
	local desc=$1 peer=$2 word=$3 cmd=${4:-} words n
	sched_trace_sync
	words=$(sched_format ksmbd_sched_req ".peer == \"$peer\"" '.class_word | hex8' | sort -u)
	n=$(sched_count ksmbd_sched_req ".peer == \"$peer\" and (\"$cmd\" == \"\" or .cmd == \"$cmd\")")
	if [[ $words == "$word" ]] && (( n > 0 )); then
		vm_pass "$desc: $n ${cmd:-request} event(s) of $peer, all class $word"
	else
		vm_fail "$desc: requests of $peer: want class $word (${cmd:-any} seen), got classes '${words//$'\n'/ }', $n ${cmd:-request}(s)"
	fi
}

# sched_stop_loop: kill the background loop whose pid the test keeps in
# SCHED_LOOP_PID and wait for it; nothing if it is empty (safe in traps).
SCHED_LOOP_PID=
sched_stop_loop() {
	if [[ -n $SCHED_LOOP_PID ]]; then
		kill "$SCHED_LOOP_PID" 2>/dev/null || true
		wait "$SCHED_LOOP_PID" 2>/dev/null || true
	fi
	SCHED_LOOP_PID=
}

# sched_jq FILTER JSON: JSON parses and FILTER is true (for vm_check).
sched_jq() { jq -e "$1" <<<"$2" >/dev/null; }

sched_sha() { sha256sum "$1" | cut -d' ' -f1; }

# sched_route_src ADDR: connections to ADDR (127.x) leave from ADDR.
sched_route_src() {
	ip route replace local "$1/32" dev lo src "$1" table local
	SCHED_ROUTES+=("$1")
}
SCHED_ROUTES=()

# sched_smbclient ADDR CMD: one smbclient session to //ADDR/share.
sched_smbclient() {
	smbclient "//$1/$SMB_SHARE" "${sched_auth[@]}" -m SMB3 -c "$2"
}

# sched_prefix_clear: remove every prefix of the current netns.
sched_prefix_clear() {
	local p
	for p in $(smb-classify -j prefix list | jq -r '.[].prefix'); do
		smb-classify prefix del "$p" >/dev/null
	done
}

# sched_cleanup: unmount what the test mounted under its tmpdir, undo
# routes, unload everywhere, trace off.  Safe to call twice.
sched_cleanup() {
	local m r
	while read -r _ m _; do
		[[ $m == "$sched_tmp"* ]] && umount -l "$m" 2>/dev/null
	done < <(tac /proc/mounts)
	for r in "${SCHED_ROUTES[@]}"; do
		ip route del local "$r/32" table local 2>/dev/null
	done
	SCHED_ROUTES=()
	smb-classify unload >/dev/null 2>&1
	sched_trace_stop
	return 0
}

# sched_ltrace_start FILE [EVENT...]: "smb-classify -j trace [EVENT...]"
# of the current netns into FILE (emptied) in the background, from the
# moment it is ready.  The loader decodes the binary records
# (libtraceevent); tests read FILE with jq.  sched_ltrace_run FILE
# [EVENT...]: the same, appending to FILE.
SCHED_LTRACE_PID=
SCHED_LTRACE_FILE=
SCHED_LTRACE_LOST=0
sched_ltrace_start() {
	sched_ltrace_stop
	: >"$1"
	sched_ltrace_run "$@"
}
sched_ltrace_run() {
	local f file=$1
	shift
	: >"$file.err"
	# Without the test's other descriptors: a FIFO a test closes to end
	# a helper (22-clamp, 30-replace) must not stay open in the tracer.
	(
		for f in /proc/$BASHPID/fd/*; do
			f=${f##*/}
			(( f > 2 )) && eval "exec $f>&-" 2>/dev/null
		done
		exec smb-classify -j trace "$@"
	) >>"$file" 2>"$file.err" &
	SCHED_LTRACE_PID=$!
	SCHED_LTRACE_FILE=$file
		SCHED_LTRACE_LOST=0
	vm_poll 30 grep -q '^tracing ksmbd events' "$file.err" ||
		{ echo "FAIL: smb-classify trace did not start: $(cat "$file.err")"; return 1; }
}

# sched_ltrace_sync FILE: stop the tracer; on SIGTERM it prints every
# event recorded before, then exits, so FILE is complete afterwards.
sched_ltrace_sync() { sched_ltrace_stop; }

# sched_ltrace_drain: the running tracer's file holds every event
# recorded so far: SIGUSR1, then its "sync N lost M" line on stderr
# (bounded wait: 30 s); SCHED_LTRACE_LOST is M (in this shell).  The
# tracer keeps running.  Returns 1 (with a message) if it does not
# answer.  No process is started: under TCG a fork costs more than the
# tracer takes to answer (a few ms).
sched_ltrace_drain() {
	local n deadline
	[[ -n $SCHED_LTRACE_PID ]] || return 0
	# Counted in the file: also right when called in $(...).
	sched_ltrace_last_sync
	n=${SCHED_LTRACE_LAST#sync }
	n=$(( ${n%% *} + 1 ))
	if ! kill -USR1 "$SCHED_LTRACE_PID" 2>/dev/null; then
		sched_ltrace_stop	# it ended (-c, error): its file is complete
		return 0
	fi
	deadline=$(( ${EPOCHREALTIME/./} + 30 * ${TEST_TIMEOUT_SCALE:-1} * 1000000 ))
	while sched_ltrace_last_sync; [[ $SCHED_LTRACE_LAST != "sync $n "* ]]; do
		if (( ${EPOCHREALTIME/./} > deadline )); then
			echo "FAIL: smb-classify trace did not drain: $(cat "$SCHED_LTRACE_FILE.err")"
			return 1
		fi
		read -r -t 0.01 -u "$SCHED_NAP_FD" || true
	done
	SCHED_LTRACE_LOST=${SCHED_LTRACE_LAST##* }
}
# sched_ltrace_last_sync: SCHED_LTRACE_LAST, the tracer's last "sync N
# lost M" line ("sync 0 " before the first), read without a fork.
sched_ltrace_last_sync() {
	local l
	SCHED_LTRACE_LAST="sync 0 "
	while IFS= read -r l; do
		[[ $l == "sync "* ]] && SCHED_LTRACE_LAST=$l
	done <"$SCHED_LTRACE_FILE.err"
	return 0
}
# A descriptor that never has data: "read -t" on it naps without a fork.
exec {SCHED_NAP_FD}<> <(:)

# sched_ltrace_stop: the tracer off; SCHED_LTRACE_LOST is what its ring
# buffer lost in all (its last words: "note: the ring buffer lost N
# events", none when N is 0).
sched_ltrace_stop() {
	[[ -n $SCHED_LTRACE_PID ]] || return 0
	kill -TERM "$SCHED_LTRACE_PID" 2>/dev/null || true
	wait "$SCHED_LTRACE_PID" 2>/dev/null || true
	SCHED_LTRACE_PID=
	SCHED_LTRACE_LOST=$(sed -n 's/^note: the ring buffer lost \([0-9]*\) events$/\1/p' "$SCHED_LTRACE_FILE.err" 2>/dev/null || true)
	SCHED_LTRACE_LOST=${SCHED_LTRACE_LOST:-0}
}

# sched_check_netns_gone NAME INODE LINK_ID: after netns NAME (its inode
# INODE, its program's link LINK_ID) was deleted, `status -j -n NAME` says
# the netns is gone and nothing is attached, which also removes its pins,
# and the link is freed.  Checks (vm_check/vm_fail), no status of its own.
sched_check_netns_gone() {
	local name=$1 ino=$2 link=$3 out
	if out=$(smb-classify -j -n "$name" status 2>&1); then
		vm_check "status -j -n $name after the delete: netns gone, not attached ($out)" \
			sched_jq '.netns_exists == false and .attached == false' "$out"
	else
		vm_fail "status -n $name after the delete: $out"
	fi
	vm_check "$name: no pins left after status" test ! -e "$SCHED_PINS/$ino"
	vm_check "$name: link $link freed" \
		vm_poll 20 eval "! bpftool link show id $link >/dev/null 2>&1"
}
