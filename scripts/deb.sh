#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make deb: the two packages an administrator installs on Debian.
#
#   ksmbd-bpf-sched-dkms_$V_all.deb   the module source (scripts/module.sh
#       source) + dkms.conf in /usr/src/ksmbd-bpf-sched-$V; its postinst
#       lets DKMS build ksmbd.ko for the installed 6.12 kernels and install
#       it into /lib/modules/<kver>/updates/dkms, where modprobe prefers it
#       to Debian's kernel/fs/smb/server/ksmbd.ko.  Removing the package
#       removes it: the stock ksmbd is back.
#   ksmbd-bpf-sched_$V_amd64.deb      smb-classify, the reference BPF object
#       and its source, the documentation.
#
#   scripts/deb.sh            both packages into $CACHE_DIR/deb/
#   scripts/deb.sh prebuilt   also a DKMS tarball (source + ksmbd.ko for
#                             $KVER, built here with dkms against the
#                             unpacked headers): dropped into
#                             /var/lib/ksmbd-bpf-sched-dkms/ before the
#                             package is installed, DKMS uses it instead of
#                             compiling (the VM test does, TCG is slow).
# dpkg-deb builds from staging directories; nothing is installed here.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
CACHE_DIR=${CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ksmbd-bpf-sched}
export CACHE_DIR
KVER=${KVER:-6.12.117+deb12-amd64}
NAME=ksmbd-bpf-sched
VERSION=$("$TOP/scripts/version.sh")
DEBREV=1
OUT=$CACHE_DIR/deb
STAGE=$OUT/stage
MSRC=$CACHE_DIR/module/src
HDR=$CACHE_DIR/debian/root/usr/src/linux-headers-$KVER
MAINTAINER=${DEB_MAINTAINER:-ksmbd-bpf-sched developers <ksmbd-bpf-sched@localhost>}

log() { printf '[deb] %s\n' "$*" >&2; }
die() { printf '[deb] error: %s\n' "$*" >&2; exit 1; }

copyright() {
	mkdir -p "$1"
	{
		echo "ksmbd-bpf-sched: BPF-controlled scheduling for ksmbd."
		echo "Kernel side: GPL-2.0-or-later (uapi header GPL-2.0 WITH"
		echo "Linux-syscall-note); bpf/ and tools/: GPL-2.0 OR BSD-2-Clause;"
		echo "the rest GPL-2.0.  Each file's SPDX identifier is authoritative."
		echo "The kernel sources are Debian's linux-source-6.12 (GPL-2.0)."
		echo
		echo "On Debian systems the licenses are in /usr/share/common-licenses/."
	} >"$1/copyright"
}

build_dkms_deb() {
	local root=$STAGE/dkms dst pkg=$NAME-dkms
	dst=$root/usr/src/$NAME-$VERSION
	rm -rf "$root"
	mkdir -p "$dst" "$root/DEBIAN" "$root/var/lib/$NAME-dkms"
	cp -a "$MSRC/." "$dst/"
	# Only sources: no build products of 'make module'.
	find "$dst" \( -name '*.o' -o -name '*.ko' -o -name '.*.cmd' -o \
		-name '*.mod' -o -name '*.mod.c' -o -name modules.order -o \
		-name Module.symvers -o -name '.*.d' -o -name '*.asn1.[ch]' \) -delete
	sed "s/@VERSION@/$VERSION/" "$TOP/scripts/module/dkms.conf" >"$dst/dkms.conf"
	copyright "$root/usr/share/doc/$pkg"
	cat >"$root/DEBIAN/control" <<EOF
Package: $pkg
Version: $VERSION-$DEBREV
Architecture: all
Section: kernel
Priority: optional
Maintainer: $MAINTAINER
Depends: dkms (>= 3.0)
Recommends: linux-headers-6.12-amd64 | linux-headers-$KVER
Description: ksmbd with BPF struct_ops scheduling (DKMS source)
 A replacement ksmbd.ko (the in-kernel SMB3 server) for Debian's 6.12
 kernels, with the ksmbd_sched_ops BPF hook: per-network-namespace
 classification of connections, per-request verdicts (workqueue, zero-copy
 READ) and weighted round-robin dispatch across clients.  DKMS builds it for
 each installed 6.12 kernel that has its headers and installs it into
 /lib/modules/<version>/updates/dkms, where modprobe prefers it to the
 kernel's own ksmbd.ko.  Removing this package brings the stock module back.
 Secure Boot: DKMS signs the module with its MOK key (/var/lib/dkms/mok.key),
 which must be enrolled with mokutil --import /var/lib/dkms/mok.pub.
EOF
	cat >"$root/DEBIAN/postinst" <<EOF
#!/bin/sh
# DKMS: add, build for the installed kernels, install.  A prebuilt DKMS
# tarball in /var/lib/$NAME-dkms/ (dkms mktarball) is loaded instead.
set -e
if [ "\$1" = configure ]; then
	/usr/lib/dkms/common.postinst $NAME $VERSION /var/lib/$NAME-dkms "" "\$2"
fi
EOF
	cat >"$root/DEBIAN/prerm" <<EOF
#!/bin/sh
set -e
case "\$1" in
remove|upgrade|deconfigure)
	if dkms status -m $NAME -v $VERSION | grep -q .; then
		dkms remove -m $NAME -v $VERSION --all
	fi ;;
esac
EOF
	chmod 755 "$root/DEBIAN/postinst" "$root/DEBIAN/prerm"
	dpkg-deb --root-owner-group -Zxz --build "$root" \
		"$OUT/${pkg}_$VERSION-${DEBREV}_all.deb" >/dev/null
	log "$OUT/${pkg}_$VERSION-${DEBREV}_all.deb"
}

# check_needed BIN DEPENDS: every shared library BIN links (NEEDED) is
# shipped by a package named in DEPENDS (a Depends: value), so that the
# package cannot install without what its binary loads.
check_needed() {
	local lib p
	for lib in $(objdump -p "$1" | awk '$1 == "NEEDED" { print $2 }'); do
		p=$(dpkg -S "*/$lib" 2>/dev/null | head -n 1 | cut -d: -f1)
		[ -n "$p" ] || die "$1 links $lib, which no installed package ships"
		case ", $2," in
		*", $p,"* | *", $p ("*) ;;
		*) die "$1 links $lib of package $p, which Depends ($2) does not name" ;;
		esac
	done
}

build_tools_deb() {
	local root=$STAGE/tools pkg=$NAME doc
	local depends="libc6 (>= 2.34), libelf1, zlib1g, libtracefs1, libtraceevent1"
	rm -rf "$root"
	# The unit in the distribution's directory (/etc/systemd/system is
	# the admin's); the example config as an example, not a live file:
	# the unit does nothing until the admin writes /etc/ksmbd/ksmbd-sched.conf
	# (ConditionPathExists), and no package file sits in /etc.
	make -s -C "$TOP/tools/smb-classify" DESTDIR="$root" PREFIX=/usr \
		UNITDIR=/lib/systemd/system install >/dev/null
	mkdir -p "$root/DEBIAN" "$root/usr/share/$NAME" "$root/usr/share/doc/$pkg/examples"
	mv "$root/etc/ksmbd/ksmbd-sched.conf" "$root/usr/share/doc/$pkg/examples/"
	rmdir "$root/etc/ksmbd" "$root/etc"
	cp "$TOP/tools/smb-classify/.build/smb_classify.bpf.o" \
		"$TOP/bpf/smb_classify.bpf.c" "$root/usr/share/$NAME/"
	cp "$TOP"/bpf/*.h "$root/usr/share/$NAME/" 2>/dev/null || true
	doc=$root/usr/share/doc/$pkg
	mkdir -p "$doc/Documentation"
	cp "$TOP/README.md" "$doc/"
	cp "$TOP"/Documentation/*.rst "$doc/Documentation/"
	copyright "$doc"
	cat >"$root/DEBIAN/control" <<EOF
Package: $pkg
Version: $VERSION-$DEBREV
Architecture: amd64
Section: net
Priority: optional
Maintainer: $MAINTAINER
Depends: $depends
Recommends: $NAME-dkms (= $VERSION-$DEBREV), ksmbd-tools
Description: BPF classifier and loader for ksmbd (smb-classify)
 smb-classify attaches the reference classifier (an LPM trie of address
 prefixes and a per-class policy map) to ksmbd's ksmbd_sched_ops hook in a
 network namespace, manages its maps and shows what ksmbd does with them.
 Needs the ksmbd.ko of $NAME-dkms.  Also installs smb-classify.service
 (applies /etc/ksmbd/ksmbd-sched.conf whenever ksmbd.service runs, once
 that file exists), the man pages smb-classify(8) and ksmbd-sched.conf(5)
 and bash completion.  An example config is in
 /usr/share/doc/$NAME/examples/, the BPF object and its source in
 /usr/share/$NAME/, the documentation in /usr/share/doc/$NAME/.
EOF
	check_needed "$root/usr/sbin/smb-classify" "$depends"
	dpkg-deb --root-owner-group -Zxz --build "$root" \
		"$OUT/${pkg}_$VERSION-${DEBREV}_amd64.deb" >/dev/null
	log "$OUT/${pkg}_$VERSION-${DEBREV}_amd64.deb"
}

# A DKMS tarball of the source and ksmbd.ko for $KVER, built by dkms
# here in private trees under $OUT/dkms (not /var/lib/dkms, not
# /lib/modules), against the unpacked headers.
build_prebuilt() {
	local t=$OUT/dkms args want
	# Skipped when the package's source and the kernel are unchanged.
	want=$( (cd "$STAGE/dkms/usr/src" && find . -type f -print0 | sort -z |
		 xargs -0 sha256sum; echo "$KVER") | sha256sum | cut -d' ' -f1)
	if [ -f "$OUT/$NAME-$VERSION.dkms.tar.gz" ] &&
	   [ "$(cat "$t/.stamp" 2>/dev/null)" = "$want" ]; then
		return 0
	fi
	rm -rf "$t"
	mkdir -p "$t/tree" "$t/src" "$t/lib-modules/$KVER"
	cp -a "$STAGE/dkms/usr/src/$NAME-$VERSION" "$t/src/"
	args=(--dkmstree "$t/tree" --sourcetree "$t/src" --installtree "$t/lib-modules")
	dkms add -m $NAME -v "$VERSION" "${args[@]}" >/dev/null
	log "dkms build -k $KVER (host, against $HDR)"
	# make module's ccache: the same compiler and flags.
	CCACHE_DIR=$CACHE_DIR/ccache DEBIAN_KERNEL_USE_CCACHE=1 \
	dkms build -m $NAME -v "$VERSION" -k "$KVER" "${args[@]}" \
		--kernelsourcedir "$HDR" >"$t/build.log" 2>&1 ||
		{ cat "$t/build.log" >&2; die "dkms build failed"; }
	dkms mktarball -m $NAME -v "$VERSION" -k "$KVER" "${args[@]}" \
		--archive "$OUT/$NAME-$VERSION.dkms.tar.gz" >/dev/null
	echo "$want" >"$t/.stamp"
	log "$OUT/$NAME-$VERSION.dkms.tar.gz"
}

command -v dpkg-deb >/dev/null || die "dpkg-deb missing"
"$TOP/scripts/module.sh" build
mkdir -p "$OUT"
build_dkms_deb
build_tools_deb
if [ "${1:-}" = prebuilt ]; then
	command -v dkms >/dev/null || die "dkms missing: run 'make deps'"
	build_prebuilt
fi
