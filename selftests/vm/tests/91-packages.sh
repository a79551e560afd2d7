#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-module: unload (the ksmbd module is unloaded or replaced)
#
# The packages of 'make deb' on Debian's kernel (VM_KERNEL=stock), as an
# administrator uses them, in a chroot whose root is a writable overlay
# over the read-only root and whose /lib/modules/$(uname -r) is Debian's
# module tree as the image package installs it (no ksmbd of ours; only
# fs/smb, fs/nls, crypto, lib: see below).  DKMS gets every module from
# a DKMS tarball built on the host ('scripts/deb.sh prebuilt', dkms build
# -k): compiling under TCG is too slow.
#
#   0.2      dpkg -i the 0.2 packages (selftests/vm/fixtures/deb-0.2.sh:
#            0.2's packaging); the administrator writes
#            /etc/ksmbd/ksmbd-sched.conf.
#   upgrade  dpkg -i this version's: DKMS swaps 0.2's ksmbd.ko for this
#            one's, the BPF object moves to /usr/lib, the unit is enabled
#            for ksmbd.service, the administrator's config is untouched.
#   autopkgtest  debian/tests/dkms-smb-classify, in the chroot.
#   use      modprobe ksmbd loads the DKMS module, ksmbd-tools serve, the
#            packaged object loads, the unit's ExecStart applies the
#            administrator's config, a real cifs client is classified by it.
#   purge    dpkg --purge of both with the policy attached: the loader's
#            prerm unloads it (rmmod then works), nothing of either
#            package stays (files, DKMS tree, unit and its enablement, bpffs
#            pins; the overlay's upper layers are searched), only the
#            administrator's own config; modprobe ksmbd loads Debian's
#            ksmbd again, and it serves (no hook).
# Afterwards the harness's ksmbd.ko is loaded again for the next tests.
# vm-timeout: 900

set -euo pipefail
# shellcheck source=../lib.sh
source "${VM_DIR:?run me inside the VM: selftests/vm/run $0}/lib.sh"
# shellcheck source=../testlib-sched.sh
source "$VM_DIR/testlib-sched.sh"

[[ -e /sys/module/ksmbd/refcnt ]] || vm_skip_test "ksmbd is built in (VM_KERNEL=tiny)"
kver=$(uname -r)
deb=$CACHE_DIR/deb
V=$("$VM_CHECKOUT/scripts/version.sh")
DV=$("$VM_CHECKOUT/scripts/version.sh" -d)
pkgs=("$deb/ksmbd-bpf-sched-dkms_${DV}_all.deb" "$deb/ksmbd-bpf-sched_${DV}_amd64.deb")
tarball=$deb/ksmbd-bpf-sched-$V.dkms.tar.gz
old=$deb/0.2
old_pkgs=("$old/ksmbd-bpf-sched-dkms_0.2-1_all.deb" "$old/ksmbd-bpf-sched_0.2-1_amd64.deb")
old_tarball=$old/ksmbd-bpf-sched-0.2.dkms.tar.gz
for f in "${pkgs[@]}" "$tarball" "${old_pkgs[@]}" "$old_tarball"; do
	[[ -f $f ]] || { vm_fail "$f missing: run 'scripts/deb.sh prebuilt' on the host"; vm_finish; }
done

tmp=$sched_tmp
R=$tmp/root
in_root() { chroot "$R" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"; }
secs() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }
# dpkg_ok WHAT ARGS...: dpkg ARGS in the root, its log shown on failure.
dpkg_ok() {
	local what=$1 t0=$EPOCHREALTIME
	shift
	if in_root dpkg "$@" >"$tmp/dpkg.log" 2>&1; then
		vm_pass "$what ($(secs "$t0") s)"
	else
		vm_fail "$what:"; cat "$tmp/dpkg.log"
	fi
}

# pkg_state: "<status abbrev> <version>" of both packages, a line each
# (nothing for a package dpkg does not know).
pkg_state() {
	# shellcheck disable=SC2016 # dpkg-query's ${field}s
	in_root dpkg-query -W -f '${db:Status-Abbrev}${Version}\n' \
		ksmbd-bpf-sched-dkms ksmbd-bpf-sched 2>/dev/null || true
}

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
mkdir -p "$tmp/upper" "$R"
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
# dpkg in the test root: no fsync of every unpacked file, and no man-db
# trigger (it rebuilds the root's whole manual database, a minute under
# TCG, and has nothing to do with these packages).
mkdir -p "$R/etc/dpkg/dpkg.cfg.d"
echo force-unsafe-io >"$R/etc/dpkg/dpkg.cfg.d/unsafe-io"
rm -f "$R/var/lib/man-db/auto-update"
vm_check "before: modprobe would load Debian's ksmbd" \
	grep -q "/kernel/fs/smb/server/ksmbd.ko" <(in_root modinfo -F filename ksmbd)
dst=/lib/modules/$kver/updates/dkms/ksmbd.ko
for f in "${pkgs[@]}" "${old_pkgs[@]}"; do cp "$f" "$R/tmp/"; done

# ---- 0.2, and the administrator's config ------------------------------------
# 0.2's postinst loads a DKMS tarball from /var/lib/ksmbd-bpf-sched-dkms/.
mkdir -p "$R/var/lib/ksmbd-bpf-sched-dkms"
cp "$old_tarball" "$R/var/lib/ksmbd-bpf-sched-dkms/"
dpkg_ok "dpkg -i the 0.2 packages" -i "/tmp/${old_pkgs[0]##*/}" "/tmp/${old_pkgs[1]##*/}"
vm_check "0.2: dkms status: installed for $kver" \
	grep -q "ksmbd-bpf-sched/0.2, $kver, x86_64: installed" <(in_root dkms status)
vm_check "0.2: $dst is 0.2's" test "$(in_root modinfo -F version "$dst")" = "0.2-bpf-sched"
vm_check "0.2: BPF object in /usr/share/ksmbd-bpf-sched" \
	test -f "$R/usr/share/ksmbd-bpf-sched/smb_classify.bpf.o"
conf=/etc/ksmbd/ksmbd-sched.conf
mkdir -p "$R/etc/ksmbd"
cat >"$R$conf" <<'CONF'
# The administrator's: loopback clients are class 4, twice the turns.
[class 4]
	weight = 2
	prefix = 127.0.0.0/8
CONF
conf_sha=$(sched_sha "$R$conf")

# ---- Upgrade ---------------------------------------------------------------
# dh_dkms's postinst loads a DKMS tarball from /usr/share/ksmbd-bpf-sched-dkms/.
mkdir -p "$R/usr/share/ksmbd-bpf-sched-dkms"
cp "$tarball" "$R/usr/share/ksmbd-bpf-sched-dkms/"
dpkg_ok "upgrade: dpkg -i the $DV packages" -i "/tmp/${pkgs[0]##*/}" "/tmp/${pkgs[1]##*/}"
vm_check "upgrade: both packages installed at $DV" \
	test "$(pkg_state | tr '\n' ' ')" = "ii $DV ii $DV "
vm_check "upgrade: dkms status: $V installed for $kver, 0.2 gone" \
	test "$(in_root dkms status -m ksmbd-bpf-sched)" = "ksmbd-bpf-sched/$V, $kver, x86_64: installed"
vm_check "upgrade: no 0.2 in /var/lib/dkms or /usr/src" \
	test ! -e "$R/var/lib/dkms/ksmbd-bpf-sched/0.2" -a ! -e "$R/usr/src/ksmbd-bpf-sched-0.2"
vm_check "upgrade: $dst is $V's" test "$(in_root modinfo -F version "$dst")" = "$V-bpf-sched"
vm_check "upgrade: modinfo ksmbd is $dst" test "$(in_root modinfo -F filename ksmbd)" = "$dst"
vm_check "upgrade: the administrator's $conf unchanged" test "$(sched_sha "$R$conf")" = "$conf_sha"
vm_check "upgrade: BPF object in /usr/lib/ksmbd-bpf-sched, none in /usr/share" \
	test -f "$R/usr/lib/ksmbd-bpf-sched/smb_classify.bpf.o" -a ! -e "$R/usr/share/ksmbd-bpf-sched"
vm_check "upgrade: smb-classify.service enabled for ksmbd.service" \
	test -L "$R/etc/systemd/system/ksmbd.service.wants/smb-classify.service"
vm_check "upgrade: man pages compressed" \
	test -f "$R/usr/share/man/man8/smb-classify.8.gz" -a -f "$R/usr/share/man/man5/ksmbd-sched.conf.5.gz"
vm_check "upgrade: smb-classify --version is $V" \
	grep -q "^smb-classify v$V " <(in_root /usr/sbin/smb-classify --version)

# ---- The package's autopkgtest ----------------------------------------------
t0=$EPOCHREALTIME
rc=0
# Copied in: the checkout's path need not exist inside the chroot.
mkdir -p "$R/tmp"
cp "$VM_CHECKOUT/debian/tests/dkms-smb-classify" "$R/tmp/dkms-smb-classify"
in_root sh /tmp/dkms-smb-classify >"$tmp/autopkgtest.log" 2>&1 || rc=$?
rm -f "$R/tmp/dkms-smb-classify"
sed -n 's/^\(PASS\|FAIL\): /autopkgtest: /p' "$tmp/autopkgtest.log"
if ((rc == 0)); then
	vm_pass "autopkgtest dkms-smb-classify ($(secs "$t0") s)"
else
	vm_fail "autopkgtest dkms-smb-classify (exit $rc):"; cat "$tmp/autopkgtest.log"
fi

# ---- modprobe + ksmbd-tools + the administrator's policy on a real client ---
vm_check "modprobe ksmbd (the DKMS one)" in_root modprobe ksmbd
vm_check "loaded: version $V-bpf-sched" test "$(cat /sys/module/ksmbd/version 2>/dev/null)" = "$V-bpf-sched"
vm_check "ksmbd-tools serve" vm_ksmbd_start
vm_check "packaged smb-classify loads the packaged BPF object" \
	in_root /usr/sbin/smb-classify load /usr/lib/ksmbd-bpf-sched/smb_classify.bpf.o
vm_check "attached" test "$(sched_proc attached)" = 1
# What systemd runs when ksmbd.service starts (the guest has no systemd).
exec_start=$(sed -n 's/^ExecStart=//p' "$R/lib/systemd/system/smb-classify.service")
vm_check "unit: ExecStart applies $conf" test "$exec_start" = "/usr/sbin/smb-classify apply $conf"
read -ra cmd <<<"$exec_start"
vm_check "unit's ExecStart: the administrator's policy" in_root "${cmd[@]}"
sched_trace_start
head -c 1M /dev/urandom >"$SMB_SHARE_DIR/data.bin"
want=$(sched_sha "$SMB_SHARE_DIR/data.bin")
sched_mount 127.0.0.2 127.0.0.1 "$tmp/a"
port=$(sched_client_port 127.0.0.2)
sched_expect_conn "packaged module + loader + the config" ::ffff:127.0.0.2 "$port" 0x00020004 smb_prefix
vm_check "read through cifs, sha256 equal" test "$(sched_sha "$tmp/a/data.bin")" = "$want"
umount "$tmp/a"
sched_trace_stop

# ---- Purge, the policy still attached: the stock ksmbd serves again ---------
in_root dpkg -L ksmbd-bpf-sched-dkms ksmbd-bpf-sched >"$tmp/files" 2>/dev/null || true
vm_ksmbd_stop
dpkg_ok "dpkg --purge both packages" --purge ksmbd-bpf-sched ksmbd-bpf-sched-dkms
vm_check "purged: no pins in /sys/fs/bpf/smb-classify" test ! -e /sys/fs/bpf/smb-classify
vm_check "purged: nothing holds ksmbd: rmmod" vm_poll 10 rmmod ksmbd
vm_check "purged: dpkg has neither package, not even its config" \
	test -z "$(pkg_state | grep -v '^un')"
left=$(while read -r f; do
	if [[ -e $R$f && ! -d $R$f ]]; then echo "$f"; fi
done <"$tmp/files")
vm_check "purged: no file of the packages' lists${left:+: $left}" test -z "$left"
# What the test itself put there for DKMS, then what is left anywhere
# but in man-db's cache of formatted pages (man, which systemd-analyze
# verify ran for Documentation=, wrote cat8/smb-classify.8.gz; man-db's
# daily mandb expires it, as for any package's page).
rm -rf "$R/var/lib/ksmbd-bpf-sched-dkms" "$R/usr/share/ksmbd-bpf-sched-dkms"
left=$(cd "$tmp/upper" && find u mu -path u/var/cache/man -prune -o \
	\( -name '*ksmbd-bpf-sched*' -o -name '*smb-classify*' -o -name '*smb_classify*' \) \
	! -type c -print | sort | tr '\n' ' ')
vm_check "purged: nothing named after them (DKMS tree, unit, enablement)${left:+: $left}" test -z "$left"
vm_check "purged: no unit in ksmbd.service.wants" \
	test ! -e "$R/etc/systemd/system/ksmbd.service.wants/smb-classify.service"
vm_check "purged: the administrator's $conf kept" test "$(sched_sha "$R$conf")" = "$conf_sha"
vm_check "purged: modinfo points at Debian's ksmbd again" \
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
