#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-module: unload (the ksmbd module is unloaded or replaced)
#
# The admin's day: "apply FILE" sets the whole policy, checked whole
# first (a bad file changes nothing: same dump, same programs), "dump"
# round-trips through apply, "--dry-run" prints the diff and changes
# nothing; connections made while policies are swapped back and forth
# always carry the class of one whole policy, never a mix; the commands
# of smb-classify.service bring the policy back after a ksmbd restart and
# after ExecStop, rmmod ksmbd and modprobe ksmbd (on Debian's kernel);
# "status -o openmetrics" parses with prometheus_client's OpenMetrics
# parser and counts real reads; "trace -j" is strict JSON; "clients".
# The guest has no systemd as PID 1: the unit's own command lines are run.
# vm-timeout: 480

set -euo pipefail
# shellcheck source=../lib.sh
source "${VM_DIR:?run me inside the VM: selftests/vm/run $0}/lib.sh"
# shellcheck source=../testlib-sched.sh
source "$VM_DIR/testlib-sched.sh"
trap 'sched_stop_loop; sched_ltrace_stop; sched_cleanup' EXIT

tmp=$sched_tmp
UNIT_IN=$VM_CHECKOUT/tools/smb-classify/dist/smb-classify.service.in
head -c 256K /dev/urandom >"$SMB_SHARE_DIR/data.bin"
want=$(sched_sha "$SMB_SHARE_DIR/data.bin")
sched_route_src 127.0.0.2

# Policy A: 127/8 one class 1, everybody else per host; B: 127.0.0.2 alone.
cat >"$tmp/a.conf" <<'CONF'
[global]
	max inflight = 4
[class 1]
	splice min = 0
	prefix = 127.0.0.0/8
[class 0]
	per peer = yes
	prefix = ::/0
CONF
cat >"$tmp/b.conf" <<'CONF'
[global]
	max inflight = 2
[class 2]
	splice min = off
	prefix = 127.0.0.2/32
[class 3]
	weight = 2
	prefix = 127.0.0.0/8
CONF
WORD_A=0x00010001 WORD_B=0x00010002

# progs: the program ids of the attached ops, for "nothing changed".
progs() { smb-classify -j status | jq -c '[.link_id, [.progs[].id]]'; }

# ---- apply from nothing, dump, round trip -----------------------------------
if out=$(smb-classify apply "$tmp/a.conf" 2>&1); then
	vm_pass "apply a.conf from nothing: $(tail -n 1 <<<"$out")"
else
	vm_fail "apply a.conf: $out"
fi
vm_check "after apply: attached smb_prefix, max_inflight 4" \
	test "$(sched_proc attached):$(sched_proc name):$(sched_proc max_inflight)" = "1:smb_prefix:4"
smb-classify dump >"$tmp/d1.conf"
cat "$tmp/d1.conf"
vm_check "dump: the prefixes and thresholds of a.conf" \
	test "$(grep -c 'prefix = \|splice min = 0\|per peer = yes\|max inflight = 4' "$tmp/d1.conf")" = 5
link=$(sched_proc link_id)
smb-classify apply "$tmp/d1.conf" >/dev/null
smb-classify dump >"$tmp/d2.conf"
vm_check "dump | apply | dump: unchanged" cmp -s "$tmp/d1.conf" "$tmp/d2.conf"
vm_check "apply over a loaded program keeps the link ($link)" test "$(sched_proc link_id)" = "$link"
out=$(smb-classify apply --dry-run "$tmp/d1.conf")
vm_check "dry-run of the dump: 0 changes ($out)" grep -q ': 0 changes$' <<<"$out"

# ---- dry-run: the diff, nothing changed -------------------------------------
before=$(progs)
out=$(smb-classify apply --dry-run "$tmp/b.conf")
echo "$out"
vm_check "dry-run: max inflight 4 -> 2" grep -qx '~ max-inflight 4 -> 2' <<<"$out"
vm_check "dry-run: 127.0.0.0/8 moves to class 3" \
	grep -qx '~ prefix 127.0.0.0/8 class 1 weight 1 -> class 3 weight 2' <<<"$out"
vm_check "dry-run: + 127.0.0.2/32, - ::/0, - policy 1, + policy 2" \
	test "$(grep -c '^+ prefix 127.0.0.2/32 class 2\|^- prefix ::/0\|^- policy 1 \|^+ policy 2 splice-min off' <<<"$out")" = 4
vm_check "dry-run: 6 changes" grep -q ': 6 changes$' <<<"$out"
vm_check "dry-run changed nothing: same dump" cmp -s "$tmp/d1.conf" <(smb-classify dump)
vm_check "dry-run changed nothing: same programs" test "$(progs)" = "$before"
out=$(smb-classify -j apply --dry-run "$tmp/b.conf")
vm_check "dry-run -j: changes 6, diff lines" sched_jq '.changes == 6 and (.diff | length) == 6' "$out"

# ---- a bad file: file:line: field, nothing changed ----------------------------
bad_conf() {
	local desc=$1 want=$2 err
	printf '%b' "$3" >"$tmp/bad.conf"
	if smb-classify apply "$tmp/bad.conf" >/dev/null 2>"$tmp/err"; then
		vm_fail "apply $desc succeeded"
		return
	fi
	err=$(cat "$tmp/err")
	if [[ $(wc -l <"$tmp/err") == 1 && $err == "Error: $tmp/bad.conf:$want"* ]] &&
		cmp -s "$tmp/d1.conf" <(smb-classify dump) && [[ $(progs) == "$before" ]]; then
		vm_pass "apply $desc: refused, nothing changed ($err)"
	else
		vm_fail "apply $desc: '$err' (want $tmp/bad.conf:$want), dump or programs changed"
	fi
}
bad_conf "host bits" "3: prefix:" '[class 1]\nweight = 2\nprefix = 10.1.2.3/8\n'
bad_conf "bad last line" "5: splice min:" '[global]\nmax inflight = 2\n[class 2]\nprefix = 10.0.0.0/8\nsplice min = 17M\n'
bad_conf "duplicate prefix" "4: prefix:" '[class 1]\nprefix = 10.0.0.0/8\n[class 2]\nprefix = 10.0.0.0/8\n'
bad_conf "unknown field" "2: colour:" '[class 1]\ncolour = red\n'
bad_conf "budget too big" "2: max inflight:" '[global]\nmax inflight = 5000\n'
if out=$(smb-classify apply "$tmp/missing.conf" 2>&1); then
	vm_fail "apply of a missing file succeeded"
else
	vm_check "apply of a missing file: Error ($out)" grep -q "^Error: cannot read $tmp/missing.conf" <<<"$out"
fi

# ---- atomic: connections during swaps carry A's or B's class --------------
sched_ltrace_start "$tmp/swap.json"
( for i in $(seq 1 12); do
	smb-classify apply "$tmp/b.conf" >/dev/null
	smb-classify apply "$tmp/a.conf" >/dev/null
  done ) &
SCHED_LOOP_PID=$!
n=0
while kill -0 "$SCHED_LOOP_PID" 2>/dev/null && (( n < 40 )); do
	sched_smbclient 127.0.0.2 "get data.bin $tmp/sw.bin" >/dev/null 2>&1 && n=$((n + 1))
done
wait "$SCHED_LOOP_PID"
SCHED_LOOP_PID=
sched_ltrace_sync "$tmp/swap.json"
words=$(jq -r 'select(.event == "ksmbd_sched_conn" and .peer == "::ffff:127.0.0.2") | .class_word' "$tmp/swap.json" |
	while read -r w; do printf '0x%08x\n' "$w"; done | sort | uniq -c | tr '\n' ' ')
echo "during 24 swaps, $n smbclient sessions from 127.0.0.2; class words: $words"
bad=$(jq -r 'select(.event == "ksmbd_sched_conn" and .peer == "::ffff:127.0.0.2") | .class_word' "$tmp/swap.json" |
	while read -r w; do printf '0x%08x\n' "$w"; done | grep -cv "^\($WORD_A\|$WORD_B\)$" || true)
vm_check "swaps: $n sessions, every connection of 127.0.0.2 has A's or B's class ($words)" \
	test "$n" -gt 0 -a "$bad" = 0 -a -n "$words"
smb-classify apply "$tmp/a.conf" >/dev/null

# ---- the unit's commands: restart, program gone, reload ----------------------
sbindir=$(dirname "$(command -v smb-classify)")
cp "$tmp/a.conf" "$tmp/unit.conf"
unit_cmd() {	# unit_cmd ExecStart|ExecReload|ExecStop
	grep "^$1=" "$UNIT_IN" | cut -d= -f2- |
		sed "s|@SBINDIR@|$sbindir|g; s|@CONF@|$tmp/unit.conf|g"
}
vm_check "unit: ExecStart is apply of the conf" test "$(unit_cmd ExecStart)" = "$sbindir/smb-classify apply $tmp/unit.conf"
vm_ksmbd_stop
vm_ksmbd_start
vm_check "ksmbd restarted: the policy is still there" cmp -s "$tmp/d1.conf" <(smb-classify dump)
# ExecStop (before rmmod ksmbd), then ExecStart (after modprobe): back.
$(unit_cmd ExecStop) >/dev/null
vm_check "ExecStop: nothing attached" test "$(sched_proc attached)" = 0
vm_ksmbd_stop
if [[ -e /sys/module/ksmbd/refcnt ]]; then
	# Debian's kernel: the module itself goes and comes back (90-module
	# checks that rmmod fails while a program is attached).
	vm_check "ExecStop let rmmod ksmbd go" vm_poll 10 rmmod ksmbd
	vm_check "ksmbd gone with its state ($SCHED_PROC)" test ! -e "$SCHED_PROC"
	vm_check "modprobe ksmbd again" modprobe ksmbd
	vm_check "the new module starts with nothing attached" test "$(sched_proc attached)" = 0
fi
vm_ksmbd_start
$(unit_cmd ExecStart) >/dev/null
vm_check "ExecStart after the restart: the policy is back" cmp -s "$tmp/d1.conf" <(smb-classify dump)
sched_ltrace_start "$tmp/conn.json"
if sched_smbclient 127.0.0.2 "get data.bin $tmp/r.bin" >"$tmp/sc.out" 2>&1; then
	vm_check "after ExecStart: smbclient read, sha256 equal" test "$(sched_sha "$tmp/r.bin")" = "$want"
else
	vm_fail "after ExecStart: smbclient"; cat "$tmp/sc.out"
fi
sched_ltrace_sync "$tmp/conn.json"
vm_check "after ExecStart: 127.0.0.2 classified by A (class 1)" \
	test "$(jq -r 'select(.event == "ksmbd_sched_conn" and .peer == "::ffff:127.0.0.2") | .class' "$tmp/conn.json" | sort -u)" = 1
cp "$tmp/b.conf" "$tmp/unit.conf"
$(unit_cmd ExecReload) >/dev/null
vm_check "ExecReload of the edited file: B in force" \
	test "$(smb-classify dump | grep -c 'prefix = 127.0.0.2/32\|max inflight = 2')" = 2
printf '[class 1]\nweight = 0\n' >"$tmp/unit.conf"
if $(unit_cmd ExecReload) >/dev/null 2>&1; then
	vm_fail "ExecReload of an invalid file succeeded"
else
	vm_check "ExecReload of an invalid file fails, B stays" \
		test "$(smb-classify dump | grep -c 'prefix = 127.0.0.2/32\|max inflight = 2')" = 2
fi
smb-classify apply "$tmp/a.conf" >/dev/null

# ---- trace -j: strict JSON --------------------------------------------------
strict_json() {
	python3 -c 'import json, sys
def nodup(p):
    k = [a for a, _ in p]
    assert len(k) == len(set(k)), k
    return dict(p)
n = 0
for l in open(sys.argv[1], "rb"):
    json.loads(l.decode("utf-8"), object_pairs_hook=nodup)
    n += 1
print(n)' "$1"
}
n=$(strict_json "$tmp/swap.json" 2>&1) || n="invalid: $n"
vm_check "trace -j during the swaps: strict JSON, one object a line ($n)" test "$n" -gt 0

# ---- status -o openmetrics ----------------------------------------------------
sched_smbclient 127.0.0.2 "get data.bin $tmp/r2.bin" >/dev/null 2>&1
smb-classify status -o openmetrics >"$tmp/metrics.txt"
if out=$(python3 - "$tmp/metrics.txt" <<'PY' 2>&1
import sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families
fams = {f.name: f for f in text_string_to_metric_families(open(sys.argv[1]).read())}
for n in ("ksmbd_sched_dispatched_requests", "ksmbd_sched_bytes",
          "ksmbd_sched_queued_requests", "ksmbd_sched_inflight_requests",
          "ksmbd_sched_wait_seconds", "ksmbd_sched_attached"):
    assert n in fams, n
assert fams["ksmbd_sched_wait_seconds"].type == "histogram"
d = [s for s in fams["ksmbd_sched_dispatched_requests"].samples if s.labels["class"] == "1"]
assert d and d[0].value > 0, d
b = [s for s in fams["ksmbd_sched_bytes"].samples if s.labels["class"] == "1"]
assert b and b[0].value >= 256 * 1024, b
h = {s.name: s.value for s in fams["ksmbd_sched_wait_seconds"].samples
     if s.labels["class"] == "1" and s.labels.get("le") in (None, "+Inf")}
assert h["ksmbd_sched_wait_seconds_count"] == h["ksmbd_sched_wait_seconds_bucket"] > 0, h
print("%d families; class 1: %d dispatched, %d bytes, %d waits" % (len(fams), d[0].value, b[0].value, h["ksmbd_sched_wait_seconds_count"]))
PY
); then
	vm_pass "status -o openmetrics parses (prometheus_client): $out"
else
	vm_fail "status -o openmetrics: $out"; cat "$tmp/metrics.txt"
fi

# ---- clients ------------------------------------------------------------------
if [[ -e /proc/net/ksmbd_sched_clients ]]; then
	out=$(smb-classify -j clients)
	vm_check "clients -j parses ($out)" sched_jq 'type == "array"' "$out"
else
	out=$(smb-classify clients 2>&1) && vm_fail "clients without the file succeeded"
	vm_check "clients without ksmbd_sched_clients: says so ($out)" grep -q '^Error: .*ksmbd_sched_clients missing' <<<"$out"
fi

smb-classify unload >/dev/null
vm_finish
