#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-module: unload (the ksmbd module is unloaded or replaced)
#
# ksmbd as a module on Debian's kernel (VM_KERNEL=stock): the loaded
# ksmbd.ko is ours (updates/), with Debian's vermagic, and its struct_ops
# type is in the module's BTF, built on exactly the running kernel's
# vmlinux BTF; the unbound queue's affinity scope is settable in sysfs
# (WQ_SYSFS); rmmod while a classifier is attached fails (the struct_ops
# map pins the module) and leaves it attached; after unload rmmod
# succeeds; modprobe brings ksmbd back, it serves, and a load classifies
# a real client again.  Skipped on the built-in kernel.
# vm-timeout: 240

set -euo pipefail
# shellcheck source=../lib.sh
source "${VM_DIR:?run me inside the VM: selftests/vm/run $0}/lib.sh"
# shellcheck source=../testlib-sched.sh
source "$VM_DIR/testlib-sched.sh"
trap sched_cleanup EXIT

[[ -e /sys/module/ksmbd/refcnt ]] || vm_skip_test "ksmbd is built in (VM_KERNEL=tiny)"
tmp=$sched_tmp
kver=$(uname -r)
hdr=$CACHE_DIR/debian/root/usr/src/linux-headers-$kver
refcnt() { cat /sys/module/ksmbd/refcnt; }

# ---- Which module, built against what ------------------------------------
file=$(modinfo -F filename ksmbd)
vm_check "modprobe picks updates/ksmbd.ko ($file)" \
	test "$file" = "$VM_MODULES_ROOT/lib/modules/$kver/updates/ksmbd.ko"
stock=$(find "$VM_MODULES_ROOT/lib/modules/$kver/kernel/fs/smb/server" -name 'ksmbd.ko*')
want=$(modinfo -F vermagic "$stock")
vm_check "vermagic equals Debian's ksmbd.ko ($want)" \
	test "$(modinfo -F vermagic "$file")" = "$want"
vm_check "module BTF: /sys/kernel/btf/ksmbd has struct ksmbd_sched_ops" \
	grep -q "STRUCT 'ksmbd_sched_ops'" <(bpftool btf dump file /sys/kernel/btf/ksmbd)
objcopy -O binary --only-section=.BTF "$hdr/vmlinux" "$tmp/hdr.btf"
vm_check "the headers' vmlinux BTF (the module's base) is the running kernel's" \
	cmp -s "$tmp/hdr.btf" /sys/kernel/btf/vmlinux

# ---- The unbound queue's affinity scope (WQ_SYSFS) -----------------------
scope=/sys/devices/virtual/workqueue/ksmbd-io-unbound/affinity_scope
if [[ -w $scope ]]; then
	vm_pass "ksmbd-io-unbound: affinity_scope in sysfs ($(<"$scope"))"
	echo cpu >"$scope"
	vm_check "affinity_scope set to cpu" test "$(<"$scope")" = cpu
else
	vm_fail "no writable $scope"
fi

# ---- Attached: rmmod fails cleanly ---------------------------------------
vm_ksmbd_stop
before=$(refcnt)
smb-classify load >/dev/null
vm_check "load takes a module reference ($before -> $(refcnt))" test "$(refcnt)" -gt "$before"
if out=$(rmmod ksmbd 2>&1); then
	vm_fail "rmmod ksmbd succeeded with a classifier attached"
else
	vm_pass "rmmod while attached fails: $out"
fi
vm_check "still loaded, still attached" test "$(sched_proc attached)" = 1

# ---- Unloaded: rmmod succeeds --------------------------------------------
smb-classify unload >/dev/null
# The struct_ops map is freed after an RCU grace period: poll.
vm_check "after unload: reference dropped" vm_poll 10 sh -c "test \$(cat /sys/module/ksmbd/refcnt) -le $before"
vm_check "after unload: rmmod ksmbd succeeds" vm_poll 10 rmmod ksmbd
vm_check "ksmbd gone (/sys/module/ksmbd, $SCHED_PROC)" \
	test ! -e /sys/module/ksmbd -a ! -e "$SCHED_PROC"

# ---- modprobe again: serves, classifies ----------------------------------
vm_check "modprobe ksmbd again" modprobe ksmbd
vm_check "scope back to the default after reload" \
	sh -c "! grep -qx cpu $scope"
vm_check "ksmbd serves again" vm_ksmbd_start
vm_check "nothing attached after reload" test "$(sched_proc attached)" = 0
smb-classify load >/dev/null
smb-classify prefix add 127.0.0.0/8 5 weight 2
sched_trace_start
head -c 1M /dev/urandom >"$SMB_SHARE_DIR/data.bin"
sched_mount 127.0.0.2 127.0.0.1 "$tmp/a"
port=$(sched_client_port 127.0.0.2)
sched_expect_conn "after reload" ::ffff:127.0.0.2 "$port" 0x00020005 smb_prefix
vm_check "after reload: read, sha256 equal" \
	test "$(sched_sha "$tmp/a/data.bin")" = "$(sched_sha "$SMB_SHARE_DIR/data.bin")"
umount "$tmp/a"
vm_finish
