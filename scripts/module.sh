#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ksmbd.ko for Debian's own 6.12 kernel: Debian's ksmbd (linux-source-6.12)
# with kernel/ applied, built out of tree against Debian's
# linux-headers-$KVER, with module BTF against that version's vmlinux.
#
#   scripts/module.sh fetch    apt-get download Debian's headers, kbuild and
#                              image packages (+ busybox-static for the VM
#                              initramfs) and unpack them into the cache
#   scripts/module.sh source   the module source tree (also the DKMS source):
#                              fs/smb/server + fs/smb/common + the nls
#                              headers, ASN.1 parsers generated
#   scripts/module.sh build    ksmbd.ko, then check vermagic and BTF
#   scripts/module.sh vmroot   the guest's /lib/modules/$KVER: Debian's
#                              modules + our ksmbd.ko in updates/, depmod;
#                              and the VM's initramfs (busybox, 9p modules)
#   scripts/module.sh all      all of the above (the default)
#
# Layout under $CACHE_DIR:
#   debian/debs/     the .deb files (apt-get download)
#   debian/root/     dpkg-deb -x of them (usr/src/linux-headers-*, boot/,
#                    lib/modules/$KVER, bin/busybox)
#   module/src/      the module source (Kbuild, Makefile, fs/...)
#   module/ksmbd.ko  the result
#   vm/modules/      lib/modules/$KVER for the test VM (modprobe -d)
#   vm/initramfs.cpio.gz  mounts the 9p root and switch_roots to guest-init
# Nothing is installed on the host: no /boot, no /lib/modules, no dpkg -i.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
CACHE_DIR=${CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ksmbd-bpf-sched}
export CACHE_DIR
KVER=${KVER:-6.12.117+deb12-amd64}
# The project's version (debian/changelog): the module's MODULE_VERSION.
VERSION=$("$TOP/scripts/version.sh")
DEB_VERSION=${DEB_VERSION:-6.12.117-1~deb12u1}
KBASE=${KVER%-amd64}
SRC=$CACHE_DIR/src/linux
DEBS=$CACHE_DIR/debian/debs
ROOT=$CACHE_DIR/debian/root
MSRC=$CACHE_DIR/module/src
KO=$CACHE_DIR/module/ksmbd.ko
VMMOD=$CACHE_DIR/vm/modules
HDR=$ROOT/usr/src/linux-headers-$KVER
JOBS=${JOBS:-$(($(nproc) + 1))}
export CCACHE_DIR=${CCACHE_DIR:-$CACHE_DIR/ccache}
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-5G}
export CCACHE_COMPILERCHECK=content
export CCACHE_NOHASHDIR=1
export CCACHE_BASEDIR=$MSRC

PKGS=(
	"linux-headers-$KVER=$DEB_VERSION"
	"linux-headers-$KBASE-common=$DEB_VERSION"
	"linux-kbuild-$KBASE=$DEB_VERSION"
	"linux-image-$KVER-unsigned=$DEB_VERSION"
	busybox-static
)

log() { printf '[module] %s\n' "$*" >&2; }
die() { printf '[module] error: %s\n' "$*" >&2; exit 1; }

do_fetch() {
	local stamp=$ROOT/.unpacked want p f
	want=$(printf '%s\n' "${PKGS[@]}" | sha256sum | cut -d' ' -f1)
	[ "$(cat "$stamp" 2>/dev/null)" = "$want" ] && return 0
	mkdir -p "$DEBS"
	for p in "${PKGS[@]}"; do
		compgen -G "$DEBS/${p%%=*}_*.deb" >/dev/null && continue
		log "apt-get download $p"
		# _apt cannot write into a root-owned cache: download as root.
		(cd "$DEBS" && apt-get download -q -o APT::Sandbox::User=root "$p") ||
			die "apt-get download $p failed (apt-get update?)"
	done
	log "unpacking into $ROOT"
	rm -rf "$ROOT" "$ROOT.tmp"
	mkdir -p "$ROOT.tmp"
	for p in "${PKGS[@]}"; do
		for f in "$DEBS/${p%%=*}"_*.deb; do
			dpkg-deb -x "$f" "$ROOT.tmp"
		done
	done
	# The headers' Makefile includes the common one by its absolute
	# /usr/src path: point it at the unpacked copy instead.
	printf 'include %s\n' \
		"$ROOT/usr/src/linux-headers-$KBASE-common/Makefile" \
		>"$ROOT.tmp/usr/src/linux-headers-$KVER/Makefile"
	echo "$want" >"$ROOT.tmp/.unpacked"
	mv "$ROOT.tmp" "$ROOT"
}

# The module source tree, shared with the DKMS package (scripts/deb.sh).
do_source() {
	"$TOP/scripts/kernel.sh" apply
	local tmp=$MSRC.tmp asn1c=$CACHE_DIR/module/asn1_compiler f
	if [ ! -x "$asn1c" ] || [ "$SRC/scripts/asn1_compiler.c" -nt "$asn1c" ]; then
		# linux-kbuild has no asn1_compiler: build it from the same source.
		mkdir -p "$(dirname "$asn1c")"
		gcc -O2 -I"$SRC/include" -o "$asn1c" "$SRC/scripts/asn1_compiler.c"
	fi
	rm -rf "$tmp"
	mkdir -p "$tmp/fs/smb" "$tmp/fs/nls"
	cp -a "$SRC/fs/smb/server" "$tmp/fs/smb/"
	mkdir -p "$tmp/fs/smb/common"
	cp -a "$SRC"/fs/smb/common/*.h "$tmp/fs/smb/common/"
	cp -a "$SRC"/fs/nls/nls_ucs2_utils.h "$SRC"/fs/nls/nls_ucs2_data.h \
		"$tmp/fs/nls/"
	# Generated ASN.1 parsers, as *_shipped: without the .asn1 sources
	# kbuild copies them and needs no asn1_compiler, and "make clean"
	# (which deletes *.asn1.[ch]; DKMS runs it) keeps them.
	for f in "$tmp"/fs/smb/server/*.asn1; do
		"$asn1c" "$f" "${f%.asn1}.asn1.c_shipped" "${f%.asn1}.asn1.h_shipped"
		rm -f "$f"
	done
	cp "$TOP/scripts/module/Kbuild" "$TOP/scripts/module/Makefile" "$tmp/"
	# A module version: tells this ksmbd.ko from Debian's in modinfo, and
	# lets DKMS replace Debian's (which has none) without --force.
	cat >"$tmp/fs/smb/server/ksmbd_bpf_sched_version.c" <<-EOF
	// SPDX-License-Identifier: GPL-2.0-or-later
	/* Out-of-tree ksmbd.ko with ksmbd-bpf-sched (scripts/module.sh). */
	#include <linux/module.h>
	MODULE_VERSION("$VERSION-bpf-sched");
	EOF
	echo 'ksmbd-y += ksmbd_bpf_sched_version.o' >>"$tmp/fs/smb/server/Makefile"
	# Only files whose content changed get a new mtime: make stays
	# incremental across re-runs.
	mkdir -p "$MSRC"
	rsync -rlp --checksum --delete --exclude='*.o' --exclude='*.ko' \
		--exclude='*.cmd' --exclude='*.mod*' --exclude='.*' \
		--exclude=modules.order --exclude=Module.symvers \
		--exclude='*.asn1.[ch]' \
		"$tmp/" "$MSRC/"
	rm -rf "$tmp"
}

do_build() {
	do_fetch
	do_source
	[ -f "$HDR/vmlinux" ] || die "no $HDR/vmlinux (BTF base)"
	log "building ksmbd.ko against linux-headers-$KVER"
	make -s -C "$MSRC" KDIR="$HDR" DEBIAN_KERNEL_USE_CCACHE=1 \
		-j"$JOBS" >&2 || die "module build failed"
	local built=$MSRC/fs/smb/server/ksmbd.ko
	[ -f "$built" ] || die "no ksmbd.ko built"
	check_module "$built"
	cp -p "$built" "$KO.tmp" && mv "$KO.tmp" "$KO"
	log "module: $KO"
}

# check_module KO: vermagic equals that of Debian's own ksmbd.ko for
# $KVER, and the module carries BTF on top of the headers' vmlinux BTF
# with what programs and smb-classify look up by name: the struct_ops
# type, its two contexts and the enums of fs/smb/server/ksmbd_sched_abi.h
# (Documentation/ksmbd-sched.rst, "ABI").
check_module() {
	local ko=$1 stock want got
	stock=$(find "$ROOT/lib/modules/$KVER/kernel/fs/smb/server" -name 'ksmbd.ko*' | head -n 1)
	[ -n "$stock" ] || die "Debian's ksmbd.ko not found in the image package"
	want=$(modinfo -F vermagic "$stock")
	got=$(modinfo -F vermagic "$ko")
	[ "$want" = "$got" ] || die "vermagic '$got' is not Debian's '$want'"
	objdump -h "$ko" | grep -q ' \.BTF ' || die "$ko has no .BTF section"
	local bpftool=${BPFTOOL:-$CACHE_DIR/bpftool/bpftool}
	[ -x "$bpftool" ] || die "no bpftool at $bpftool to read the module BTF ('make libbpf' builds it)"
	local dump
	dump=$("$bpftool" -B "$HDR/vmlinux" btf dump file "$ko") ||
		die "bpftool cannot read the module BTF of $ko"
	for t in "STRUCT 'ksmbd_sched_ops'" "STRUCT 'ksmbd_sched_conn'" \
		 "STRUCT 'ksmbd_sched_req'" "ENUM 'ksmbd_sched_limits'" \
		 "ENUM 'ksmbd_sched_ops_flags'" \
		 "ENUM 'ksmbd_sched_transport'" \
		 "ENUM 'ksmbd_sched_req_flags'" \
		 "ENUM 'ksmbd_sched_command'" \
		 "ENUM 'ksmbd_sched_class_word'" \
		 "ENUM 'ksmbd_sched_verdict'"; do
		grep -q "$t" <<<"$dump" || die "module BTF lacks $t"
	done
	log "vermagic: $got; BTF: yes"
}

# The guest's /lib/modules/$KVER: hard links to Debian's modules, our
# ksmbd.ko in updates/ (depmod's default search order prefers it), depmod.
do_vmroot() {
	do_build
	local stamp=$VMMOD/.stamp want
	want=$(sha256sum "$KO" | cut -d' ' -f1)
	[ "$(cat "$stamp" 2>/dev/null)" = "$want" ] && return 0
	log "guest module tree $VMMOD/lib/modules/$KVER"
	rm -rf "$VMMOD"
	mkdir -p "$VMMOD/lib/modules"
	cp -al "$ROOT/lib/modules/$KVER" "$VMMOD/lib/modules/$KVER"
	rm -f "$VMMOD/lib/modules/$KVER/build" "$VMMOD/lib/modules/$KVER/source"
	mkdir -p "$VMMOD/lib/modules/$KVER/updates"
	cp "$KO" "$VMMOD/lib/modules/$KVER/updates/ksmbd.ko"
	depmod -b "$VMMOD" "$KVER"
	do_admin_tree
	echo "$want" >"$stamp"
}

# For the package test (selftests/vm/tests/91-packages.sh): Debian's own
# module tree as the image package installs it, without our ksmbd.ko, cut
# to what ksmbd and its crypto need (depmod over all of Debian's modules
# takes minutes under TCG, and DKMS runs it on install and on remove).
do_admin_tree() {
	local dst=$CACHE_DIR/vm/admin/lib/modules/$KVER d f
	rm -rf "$CACHE_DIR/vm/admin"
	mkdir -p "$dst"
	for d in fs/smb fs/nls crypto lib arch/x86/crypto; do
		mkdir -p "$dst/kernel/$(dirname "$d")"
		cp -al "$ROOT/lib/modules/$KVER/kernel/$d" "$dst/kernel/$d"
	done
	for f in modules.builtin modules.builtin.modinfo modules.order; do
		cp "$ROOT/lib/modules/$KVER/$f" "$dst/"
	done
	depmod -b "$CACHE_DIR/vm/admin" "$KVER"
}

# The initramfs of the VM on Debian's kernel: 9p and virtio are modules
# there.  /init loads them, mounts the host's root (9p, read-only) and
# switch_roots into the init= of the command line (selftests/vm/guest-init).
do_initramfs() {
	local out=$CACHE_DIR/vm/initramfs.cpio.gz want tmp m f
	want=$( (sha256sum "$VMMOD/.stamp" "$TOP/scripts/module/initramfs-init";
		 echo "$KVER") | sha256sum | cut -d' ' -f1)
	[ -f "$out" ] && [ "$(cat "$out.stamp" 2>/dev/null)" = "$want" ] && return 0
	log "initramfs $out"
	tmp=$CACHE_DIR/vm/initramfs.tmp
	rm -rf "$tmp"
	mkdir -p "$tmp/bin" "$tmp/modules" "$tmp/proc" "$tmp/sys" "$tmp/dev" \
		"$tmp/newroot"
	cp "$ROOT/bin/busybox" "$tmp/bin/busybox"
	ln -s busybox "$tmp/bin/sh"
	cp "$TOP/scripts/module/initramfs-init" "$tmp/init"
	chmod 755 "$tmp/init"
	# Dependency order from modprobe; xz-decompressed for busybox insmod.
	for m in 9pnet_virtio 9p overlay; do
		modprobe -d "$VMMOD" -S "$KVER" --show-depends "$m"
	done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }' |
	while read -r f; do
		m=$(basename "$f")
		m=${m%.xz}
		case $f in
		*.xz) xz -dc "$f" >"$tmp/modules/$m" ;;
		*) cp "$f" "$tmp/modules/$m" ;;
		esac
		echo "$m" >>"$tmp/modules/order"
	done
	(cd "$tmp" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) |
		gzip -1 >"$out.tmp"
	mv "$out.tmp" "$out"
	rm -rf "$tmp"
	echo "$want" >"$out.stamp"
}

case "${1:-all}" in
fetch) do_fetch ;;
source) do_source ;;
build) do_build ;;
vmroot|all) do_vmroot; do_initramfs ;;
*) die "usage: $0 fetch|source|build|vmroot|all" ;;
esac
