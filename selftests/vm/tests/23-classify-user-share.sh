#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Classes by user and by share (classify_session(), classify_tree() of
# the reference maps), with real cifs mounts, all from one address,
# 127.0.0.2, which no prefix covers (class 0):
#   - users smbtest (class 1, weight 3) and smbtest2 (class 2): each
#     mount's requests are dispatched in its user's class, the sessions'
#     ksmbd_sched_session events name the user and the class, and the
#     contested dispatches (dispatcher budget 2) split 75% / 25% +-3%;
#   - two shares of smbtest, "share" in class 4 and "two" in class 3: the
#     share's class wins over the user's (class 1 dispatches nothing);
#     /proc/net/ksmbd_sched counts the sessions and trees of each class;
#   - a sealed mount (seal) of smbtest2 is classified by its user: its
#     session event has the encryption flag, its READs are class 2;
#   - a PER_PEER user class keys its client by ClientGUID (guid= in the
#     clients listing), not by the address.
# Data read through each mount is checked against the server's sha256.
# vm-timeout: 300

set -euo pipefail
# shellcheck source=../lib.sh
source "${VM_DIR:?run me inside the VM: selftests/vm/run $0}/lib.sh"
# shellcheck source=../testlib-sched.sh
source "$VM_DIR/testlib-sched.sh"
# shellcheck source=../testlib-fair.sh
source "$VM_DIR/testlib-fair.sh"

USER2=smbtest2
PASS2=smbtest2-pass
SHARE2=two
SHARE2_DIR=/srv/$SHARE2
N=${FAIR_N:-600}
TOL=30			# per mille, as 70-fair-share
RUNTIME=120

cleanup() {
	fair_cleanup
	# the next test gets the configuration of lib.sh again
	{ vm_ksmbd_stop && vm_ksmbd_write_conf && vm_ksmbd_start; } || true
}
trap cleanup EXIT

# ---- a second user and a second share ------------------------------------
mkdir -p "$SHARE2_DIR"
chmod 0777 "$SHARE2_DIR"
cat >>"$KSMBD_CONF" <<EOF

[$SHARE2]
	path = $SHARE2_DIR
	read only = no
	force user = root
	force group = root
EOF
ksmbd.adduser -a "$USER2" -p "$PASS2" -c "$KSMBD_CONF" >/dev/null
vm_ksmbd_stop
vm_ksmbd_start

head -c 32M /dev/urandom >"$SMB_SHARE_DIR/data.bin"
head -c 8M /dev/urandom >"$SHARE2_DIR/two.bin"
want_sha=$(sched_sha "$SMB_SHARE_DIR/data.bin")
want_sha2=$(sched_sha "$SHARE2_DIR/two.bin")
sched_route_src 127.0.0.2

# mount_as USER PASS SHARE DIR [OPTS]: a cifs mount from 127.0.0.2.
mount_as() {
	SMB_USER=$1 SMB_PASS=$2 SMB_SHARE=$3 sched_mount 127.0.0.2 127.0.0.1 "$4" "${5:-}"
}

# class_bytes ID: READ/WRITE bytes dispatched in class ID's clients, from
# /proc/net/ksmbd_sched_clients (0 when it has none).
class_bytes() {
	awk -v id="$1" '$1 == "client" {
		c = -1; b = 0
		for (i = 2; i <= NF; i++) {
			split($i, kv, "=")
			if (kv[1] == "class") c = kv[2]
			if (kv[1] == "bytes") b = kv[2]
		}
		if (c == id) s += b
	} END { print s + 0 }' /proc/net/ksmbd_sched_clients
}

# class_names ID KEY: sessions or trees of class ID's class_names line of
# /proc/net/ksmbd_sched (0 without one).
class_names() {
	awk -v id="$1" -v k="$2" '$1 == "class_names:" && $2 == id {
		for (i = 3; i < NF; i += 2) if ($i == k) v = $(i + 1) }
		END { print v + 0 }' /proc/net/ksmbd_sched
}

# session_event USER: "class_word flags" of the ksmbd_sched_session
# events of USER, one line each.
session_event() {
	sched_trace_sync
	sched_format ksmbd_sched_session ".user == \"$1\"" '"\(.class_word | hex8) \(.flags)"'
}

# ---- two users behind one address, weights 3:1 ------------------------------
fair_load 2
sched_trace_only ksmbd_sched_session ksmbd_sched_tree
smb-classify user add SMBTEST 1 weight 3 >/dev/null
smb-classify user add "$USER2" 2 >/dev/null
vm_check "user list shows both users, folded to lower case" \
	sched_jq '[.[].user] | sort == ["smbtest", "smbtest2"]' "$(smb-classify -j user list)"
mount_as "$SMB_USER" "$SMB_PASS" "$SMB_SHARE" "$sched_tmp/a"
mount_as "$USER2" "$PASS2" "$SMB_SHARE" "$sched_tmp/b"
vm_check "users: data.bin through smbtest's mount, sha256 equal" \
	test "$(sched_sha "$sched_tmp/a/data.bin")" = "$want_sha"
vm_check "users: data.bin through smbtest2's mount, sha256 equal" \
	test "$(sched_sha "$sched_tmp/b/data.bin")" = "$want_sha"
vm_check "users: smbtest's session classified 0x00030001 (class 1, weight 3)" \
	grep -qx '0x00030001 [0-9]*' <<<"$(session_event smbtest)"
vm_check "users: smbtest2's session classified 0x00010002 (class 2, weight 1)" \
	grep -qx '0x00010002 [0-9]*' <<<"$(session_event "$USER2")"
smb-classify -j clients
vm_check "users: both mounts' READs dispatched in class 1 and class 2" \
	test "$(class_bytes 1)" -ge $((32 << 20)) -a "$(class_bytes 2)" -ge $((32 << 20))
vm_check "users: nothing dispatched in the address's class 0" \
	test "$(class_bytes 0)" = 0
vm_check "users: one session counted in each user's class" \
	test "$(class_names 1 sessions)" = 1 -a "$(class_names 2 sessions)" = 1
sched_trace_stop

fair_fio a "$sched_tmp/a/data.bin" "$RUNTIME" 32
fair_fio b "$sched_tmp/b/data.bin" "$RUNTIME" 32
if fair_trace_window "$N"; then
	a=$(fair_contested '.class == 1')
	b=$(fair_contested '.class == 2')
	echo "users 3:1: $a vs $b contested dispatches; lost events $(fair_trace_overruns)"
	vm_check "users 3:1: no trace events lost" test "$(fair_trace_overruns)" = 0
	vm_check "users 3:1: >= $N contested dispatches, all of class 1 or 2" \
		test $((a + b)) -ge "$N" -a "$(fair_contested true)" = $((a + b))
	(( a + b > 0 )) &&
		fair_share_ok "users 3:1: smbtest's share" \
			"$(fair_permille "$a" $((a + b)))" 750 "$TOL"
else
	vm_fail "users 3:1: no counting window"
fi
fair_kill_all
for f in a b; do
	vm_check "users 3:1: fio $f without I/O errors" fair_fio_ok "$f"
done
umount "$sched_tmp/a" "$sched_tmp/b"
smb-classify unload >/dev/null

# ---- two shares of one user: the share's class wins ---------------------------
fair_load 2
sched_trace_only ksmbd_sched_session ksmbd_sched_tree
smb-classify user add "$SMB_USER" 1 weight 3 >/dev/null
smb-classify share add "$SHARE2" 3 >/dev/null
smb-classify share add "$SMB_SHARE" 4 weight 2 >/dev/null
mount_as "$SMB_USER" "$SMB_PASS" "$SMB_SHARE" "$sched_tmp/s1"
mount_as "$SMB_USER" "$SMB_PASS" "$SHARE2" "$sched_tmp/s2"
vm_check "shares: data.bin through share, sha256 equal" \
	test "$(sched_sha "$sched_tmp/s1/data.bin")" = "$want_sha"
vm_check "shares: two.bin through $SHARE2, sha256 equal" \
	test "$(sched_sha "$sched_tmp/s2/two.bin")" = "$want_sha2"
sched_trace_sync
vm_check "shares: the tree of $SHARE2 classified 0x00010003" \
	test "$(sched_format ksmbd_sched_tree ".share == \"$SHARE2\"" '.class_word | hex8' | sort -u)" = 0x00010003
vm_check "shares: the tree of $SMB_SHARE classified 0x00020004" \
	test "$(sched_format ksmbd_sched_tree ".share == \"$SMB_SHARE\"" '.class_word | hex8' | sort -u)" = 0x00020004
vm_check "shares: no tree of IPC\$ (no entry) has a class of its own" \
	test "$(sched_count ksmbd_sched_tree '.share == "ipc$" and .class_word != 1073741824')" = 0
vm_check "shares: READs of share in class 4, of $SHARE2 in class 3" \
	test "$(class_bytes 4)" -ge $((32 << 20)) -a "$(class_bytes 3)" -ge $((8 << 20))
vm_check "shares: no READ of either in the user's class 1 ($(class_bytes 1) bytes)" \
	test "$(class_bytes 1)" -lt $((1 << 20))
vm_check "shares: one tree connect counted in each share's class" \
	test "$(class_names 3 trees)" = 1 -a "$(class_names 4 trees)" = 1
umount "$sched_tmp/s1" "$sched_tmp/s2"
sched_trace_stop
smb-classify unload >/dev/null

# ---- a sealed session is classified by its user ------------------------------
fair_load 2
sched_trace_only ksmbd_sched_session
smb-classify user add "$USER2" 2 >/dev/null
mount_as "$USER2" "$PASS2" "$SMB_SHARE" "$sched_tmp/sealed" seal
vm_check "sealed: data.bin, sha256 equal" \
	test "$(sched_sha "$sched_tmp/sealed/data.bin")" = "$want_sha"
ev=$(session_event "$USER2")
echo "sealed: session events: $ev"
vm_check "sealed: the session is class 2 with the encryption flag (8)" \
	bash -c 'read -r w f <<<"$1"; [[ $w == 0x00010002 ]] && (( f & 8 ))' _ "$ev"
vm_check "sealed: its READs are dispatched in class 2" \
	test "$(class_bytes 2)" -ge $((32 << 20))
umount "$sched_tmp/sealed"
sched_trace_stop
smb-classify unload >/dev/null

# ---- a PER_PEER user class: one client per ClientGUID --------------------------
fair_load 2
smb-classify user add "$USER2" 2 per-peer >/dev/null
mount_as "$USER2" "$PASS2" "$SMB_SHARE" "$sched_tmp/g"
vm_check "per-peer user: data.bin, sha256 equal" \
	test "$(sched_sha "$sched_tmp/g/data.bin")" = "$want_sha"
cl=$(cat /proc/net/ksmbd_sched_clients)
echo "$cl"
vm_check "per-peer user: its class-2 client is keyed by a ClientGUID" \
	grep -Eq '^client id=[0-9]+ class=2 weight=1 peer=- guid=[0-9a-f-]{36} ' <<<"$cl"
umount "$sched_tmp/g"

vm_finish
