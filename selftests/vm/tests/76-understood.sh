#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Understood before scheduled (Dispatch v2, point 5), counted at the
# server with the ksmbd_sched_req and ksmbd_sched_dispatch tracepoints:
#   (a) a raw client (127.0.0.2) sends 20 compounds [CLOSE, READ 64 KiB]
#       and 20 compounds [ECHO, ECHO]: the first are data (waited=1, a
#       slot, bytes=65536 cost=65536 although the first PDU is a CLOSE),
#       the second control (waited=0);
#   (b) a sealed raw client (127.0.0.3, SMB 3.0, AES-CCM) opens, reads
#       and closes a file 10 times: its requests are seen decrypted
#       (cmd=CREATE/READ/CLOSE with flags ENCRYPTED, never UNKNOWN), its
#       CLOSEs are control (waited=0) and its READs data (waited=1).
# Replies and data are checked by the client.
# vm-timeout: 180

set -euo pipefail
# shellcheck source=../lib.sh
source "${VM_DIR:?run me inside the VM: selftests/vm/run $0}/lib.sh"
# shellcheck source=../testlib-sched.sh
source "$VM_DIR/testlib-sched.sh"
# shellcheck source=../testlib-read.sh
source "$VM_DIR/testlib-read.sh"
trap 'read_cleanup; sched_cleanup' EXIT
read_need_impacket

head -c 4M /dev/urandom >"$SMB_SHARE_DIR/data.bin"
read_route_src 127.0.0.2
read_route_src 127.0.0.3
smb-classify load >/dev/null
smb-classify prefix add ::/0 0 per-peer >/dev/null

sched_trace_start
echo 1 >"$SCHED_TRACE/events/ksmbd/ksmbd_sched_dispatch/enable"

# dispatches PEER PATTERN: ksmbd_sched_dispatch events of PEER matching PATTERN
dispatches() {
	grep "ksmbd_sched_dispatch: .* client=0/::ffff:$1 " "$SCHED_TRACE/trace" |
		grep -cE -- "$2" || true
}
reqs() {
	grep "ksmbd_sched_req: .* peer=::ffff:$1 " "$SCHED_TRACE/trace" |
		grep -cE -- "$2" || true
}

# ---- (a) compounds ----------------------------------------------------------
vm_check "(a) 20 [CLOSE, READ] and 20 [ECHO, ECHO] compounds answered, data exact" \
	read_raw --host 127.0.0.2 echo-compound data.bin --count 20 --length 65536
n=$(dispatches 127.0.0.2 'cmd=CLOSE .*bytes=65536 waited=1 .* cost=65536 ')
vm_check "(a) the 20 [CLOSE, READ 64 KiB] compounds took a slot and cost 64 KiB ($n)" test "$n" = 20
n=$(dispatches 127.0.0.2 'cmd=ECHO .*bytes=0 waited=0 ')
vm_check "(a) the 20 [ECHO, ECHO] compounds were control ($n)" test "$n" = 20
n=$(dispatches 127.0.0.2 'cmd=CLOSE .*bytes=65536 waited=0 ')
vm_check "(a) no [CLOSE, READ] compound bypassed the fair queue ($n)" test "$n" = 0

# ---- (b) a sealed session ------------------------------------------------------
vm_check "(b) sealed CREATE/READ/CLOSE x10, data exact" \
	read_raw --host 127.0.0.3 sealed-ops data.bin --count 10
n=$(reqs 127.0.0.3 'cmd=UNKNOWN ')
vm_check "(b) no sealed request classified as UNKNOWN ($n)" test "$n" = 0
for cmd in CREATE READ CLOSE; do
	n=$(reqs 127.0.0.3 "cmd=$cmd flags=[A-Z|]*ENCRYPTED")
	vm_check "(b) sealed $cmd requests seen decrypted, flagged ENCRYPTED ($n)" test "$n" -ge 10
done
n=$(dispatches 127.0.0.3 'cmd=CLOSE .*waited=0 ')
vm_check "(b) sealed CLOSEs are control: waited=0 ($n)" test "$n" -ge 10
n=$(dispatches 127.0.0.3 'cmd=READ .*waited=1 ')
vm_check "(b) sealed READs are data: waited=1 ($n)" test "$n" -ge 10

vm_finish
