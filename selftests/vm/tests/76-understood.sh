#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Understood before scheduled (Documentation/dispatch.rst), counted at the
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

# dispatches PEER JQ-CONDITION: ksmbd_sched_dispatch events of client
# 0/PEER that match; reqs PEER JQ-CONDITION: ksmbd_sched_req events.
dispatches() {
	sched_count ksmbd_sched_dispatch ".class == 0 and .peer == \"::ffff:$1\" and ($2)"
}
reqs() { sched_count ksmbd_sched_req ".peer == \"::ffff:$1\" and ($2)"; }

# ---- (a) compounds ----------------------------------------------------------
vm_check "(a) 20 [CLOSE, READ] and 20 [ECHO, ECHO] compounds answered, data exact" \
	read_raw --host 127.0.0.2 echo-compound data.bin --count 20 --length 65536
sched_trace_sync
n=$(dispatches 127.0.0.2 '.cmd == "CLOSE" and .bytes == 65536 and .waited == 1 and .cost == 65536')
vm_check "(a) the 20 [CLOSE, READ 64 KiB] compounds took a slot and cost 64 KiB ($n)" test "$n" = 20
n=$(dispatches 127.0.0.2 '.cmd == "ECHO" and .bytes == 0 and .waited == 0')
vm_check "(a) the 20 [ECHO, ECHO] compounds were control ($n)" test "$n" = 20
n=$(dispatches 127.0.0.2 '.cmd == "CLOSE" and .bytes == 65536 and .waited == 0')
vm_check "(a) no [CLOSE, READ] compound bypassed the fair queue ($n)" test "$n" = 0

# ---- (b) a sealed session ------------------------------------------------------
vm_check "(b) sealed CREATE/READ/CLOSE x10, data exact" \
	read_raw --host 127.0.0.3 sealed-ops data.bin --count 10
sched_trace_sync
n=$(reqs 127.0.0.3 '.cmd == "UNKNOWN"')
vm_check "(b) no sealed request classified as UNKNOWN ($n)" test "$n" = 0
for cmd in CREATE READ CLOSE; do
	# KSMBD_SCHED_REQ_ENCRYPTED is bit 2 of flags.
	n=$(reqs 127.0.0.3 ".cmd == \"$cmd\" and (.flags / 4 | floor) % 2 == 1")
	vm_check "(b) sealed $cmd requests seen decrypted, flagged ENCRYPTED ($n)" test "$n" -ge 10
done
n=$(dispatches 127.0.0.3 '.cmd == "CLOSE" and .waited == 0')
vm_check "(b) sealed CLOSEs are control: waited=0 ($n)" test "$n" -ge 10
n=$(dispatches 127.0.0.3 '.cmd == "READ" and .waited == 1')
vm_check "(b) sealed READs are data: waited=1 ($n)" test "$n" -ge 10

vm_finish
