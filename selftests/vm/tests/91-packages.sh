#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The packages of 'make deb' on Debian's kernel (VM_KERNEL=stock), as an
# administrator uses them, in a chroot whose root is a writable overlay
# over the read-only root and whose /lib/modules/$(uname -r) is Debian's
# module tree as the image package installs it (no ksmbd of ours; only
# fs/smb, fs/nls, crypto, lib: see below):
# dpkg -i ksmbd-bpf-sched-dkms + ksmbd-bpf-sched; DKMS installs ksmbd.ko
# into updates/dkms (from the DKMS tarball built on the host by
# 'scripts/deb.sh prebuilt' with 'dkms build -k': compiling under TCG is
# too slow); modprobe ksmbd loads it, ksmbd-tools serve, the packaged
# smb-classify classifies a real cifs client.  dpkg -r removes both,
# modprobe ksmbd loads Debian's ksmbd again, and it serves (no hook).
# Afterwards the harness's ksmbd.ko is loaded again for the next tests.
# vm-timeout: 420

set -euo pipefail
# shellcheck source=../lib.sh
source "${VM_DIR:?run me inside the VM: selftests/vm/run $0}/lib.sh"
# shellcheck source=../testlib-sched.sh
source "$VM_DIR/testlib-sched.sh"

[[ -e /sys/module/ksmbd/refcnt ]] || vm_skip_test "ksmbd is built in (VM_KERNEL=tiny)"
kver=$(uname -r)
deb=$CACHE_DIR/deb
V=$("$VM_CHECKOUT/scripts/version.sh")
pkgs=("$deb/ksmbd-bpf-sched-dkms_${V}-1_all.deb" "$deb/ksmbd-bpf-sched_${V}-1_amd64.deb")
tarball=$deb/ksmbd-bpf-sched-$V.dkms.tar.gz
for f in "${pkgs[@]}" "$tarball"; do
	[[ -f $f ]] || { vm_fail "$f missing: run 'scripts/deb.sh prebuilt' on the host"; vm_finish; }
done

tmp=$sched_tmp
R=$tmp/root
in_root() { chroot "$R" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"; }

# Back to the harness's module whatever happens.
cleanup() {
	set +e
	sched_cleanup 2>/dev/null
	in_root /usr/sbin/smb-classify unload >/dev/null 2>&1
	vm_ksmbd_stop >/dev/null 2>&1
	rmmod ksmbd 2>/dev/null
	local m
	while read -r _ m _; do
		[[ $m == "$R"* ]] && umount -l "$m" 2>/dev/null
	done < <(tac /proc/mounts)
	modprobe ksmbd && vm_ksmbd_start
}
trap cleanup EXIT

# ---- The administrator's machine: overlay root, Debian's modules --------
vm_ksmbd_stop
smb-classify unload >/dev/null
vm_poll 10 rmmod ksmbd || { vm_fail "cannot rmmod the harness's ksmbd"; vm_finish; }
mkdir -p "$tmp/upper" "$tmp/work" "$tmp/mu" "$tmp/mw" "$R"
mount -t tmpfs tmpfs "$tmp/upper"
mkdir -p "$tmp/upper/u" "$tmp/upper/w"
mount -t overlay overlay -o "lowerdir=/,upperdir=$tmp/upper/u,workdir=$tmp/upper/w" "$R"
mount -t proc proc "$R/proc"
mount --rbind /sys "$R/sys"
mount --rbind /dev "$R/dev"
mount -t tmpfs tmpfs "$R/tmp"
mount -t tmpfs tmpfs "$R/run"
mkdir -p "$R/lib/modules/$kver" "$tmp/upper/mu" "$tmp/upper/mw"
# Debian's modules of fs/smb, fs/nls, crypto and lib, depmod'ed on the
# host (scripts/module.sh vmroot): depmod over all of them takes minutes
# under TCG, and DKMS runs it on install and remove.
mount -t overlay overlay -o "lowerdir=$CACHE_DIR/vm/admin/lib/modules/$kver,upperdir=$tmp/upper/mu,workdir=$tmp/upper/mw" \
	"$R/lib/modules/$kver"
vm_check "before: modprobe would load Debian's ksmbd" \
	grep -q "/kernel/fs/smb/server/ksmbd.ko" <(in_root modinfo -F filename ksmbd)

# ---- Install --------------------------------------------------------------
mkdir -p "$R/var/lib/ksmbd-bpf-sched-dkms"
cp "$tarball" "$R/var/lib/ksmbd-bpf-sched-dkms/"
for f in "${pkgs[@]}"; do cp "$f" "$R/tmp/"; done
t0=$EPOCHREALTIME
if in_root dpkg -i "/tmp/${pkgs[0]##*/}" "/tmp/${pkgs[1]##*/}" >"$tmp/dpkg-i.log" 2>&1; then
	vm_pass "dpkg -i both packages ($(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s)"
else
	vm_fail "dpkg -i:"; cat "$tmp/dpkg-i.log"
fi
dst=/lib/modules/$kver/updates/dkms/ksmbd.ko
vm_check "DKMS installed $dst" test -f "$R$dst"
vm_check "dkms status: installed for $kver" \
	grep -q "ksmbd-bpf-sched/$V, $kver, x86_64: installed" <(in_root dkms status)
vm_check "modinfo: ksmbd is now $dst" test "$(in_root modinfo -F filename ksmbd)" = "$dst"
vm_check "smb-classify from the package" test -x "$R/usr/sbin/smb-classify"
vm_check "BPF object in /usr/share/ksmbd-bpf-sched" test -f "$R/usr/share/ksmbd-bpf-sched/smb_classify.bpf.o"

# ---- modprobe + ksmbd-tools + classify a real client ----------------------
vm_check "modprobe ksmbd (the DKMS one)" in_root modprobe ksmbd
vm_check "loaded: version $V-bpf-sched" test "$(cat /sys/module/ksmbd/version 2>/dev/null)" = "$V-bpf-sched"
vm_check "ksmbd-tools serve" vm_ksmbd_start
vm_check "packaged smb-classify loads the packaged BPF object" \
	in_root /usr/sbin/smb-classify load /usr/share/ksmbd-bpf-sched/smb_classify.bpf.o
in_root /usr/sbin/smb-classify prefix add 127.0.0.0/8 4 weight 2 >/dev/null
vm_check "attached" test "$(sched_proc attached)" = 1
sched_trace_start
head -c 1M /dev/urandom >"$SMB_SHARE_DIR/data.bin"
want=$(sched_sha "$SMB_SHARE_DIR/data.bin")
sched_mount 127.0.0.2 127.0.0.1 "$tmp/a"
port=$(sched_client_port 127.0.0.2)
sched_expect_conn "packaged module + loader" ::ffff:127.0.0.2 "$port" 0x00020004 smb_prefix
vm_check "read through cifs, sha256 equal" test "$(sched_sha "$tmp/a/data.bin")" = "$want"
umount "$tmp/a"
sched_trace_stop

# ---- Remove: the stock ksmbd serves again --------------------------------
in_root /usr/sbin/smb-classify unload >/dev/null
vm_ksmbd_stop
vm_check "rmmod the DKMS ksmbd" vm_poll 10 rmmod ksmbd
if in_root dpkg -r ksmbd-bpf-sched ksmbd-bpf-sched-dkms >"$tmp/dpkg-r.log" 2>&1; then
	vm_pass "dpkg -r both packages"
else
	vm_fail "dpkg -r:"; cat "$tmp/dpkg-r.log"
fi
vm_check "removed: no $dst" test ! -e "$R$dst"
vm_check "removed: no smb-classify" test ! -e "$R/usr/sbin/smb-classify"
vm_check "removed: modinfo points at Debian's ksmbd again" \
	grep -q "/kernel/fs/smb/server/ksmbd.ko" <(in_root modinfo -F filename ksmbd)
vm_check "modprobe ksmbd (Debian's)" in_root modprobe ksmbd
vm_check "stock: no module version, no $SCHED_PROC" \
	test ! -e /sys/module/ksmbd/version -a ! -e "$SCHED_PROC"
vm_check "stock: no ksmbd_sched_ops in the module BTF" \
	sh -c "! bpftool btf dump file /sys/kernel/btf/ksmbd | grep -q ksmbd_sched_ops"
vm_check "stock ksmbd serves" vm_ksmbd_start
sched_route_src 127.0.0.3
if sched_smbclient 127.0.0.3 "get data.bin $tmp/sc.bin" >"$tmp/sc.out" 2>&1; then
	vm_check "stock: smbclient get, sha256 equal" test "$(sched_sha "$tmp/sc.bin")" = "$want"
else
	vm_fail "stock: smbclient get"; cat "$tmp/sc.out"
fi
vm_finish
