#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make deb: the two packages an administrator installs on Debian, built
# by debian/ (debhelper, dh-dkms) with dpkg-buildpackage -b -us -uc in a
# copy of the tree, $CACHE_DIR/deb/build/ksmbd-bpf-sched-$V (the files
# git knows, committed or not); lintian checks them.
#
#   ksmbd-bpf-sched-dkms_$V_all.deb   the module source + dkms.conf in
#       /usr/src/ksmbd-bpf-sched-$V; its postinst lets DKMS build ksmbd.ko
#       for the installed 6.12 kernels and install it into
#       /lib/modules/<kver>/updates/dkms, where modprobe prefers it to
#       Debian's kernel/fs/smb/server/ksmbd.ko.  Removing the package
#       removes it: the stock ksmbd is back.
#   ksmbd-bpf-sched_$V_amd64.deb      smb-classify, the reference BPF
#       object, the unit, man pages, documentation (and -dbgsym).
#
#   scripts/deb.sh            the packages, .changes and .buildinfo into
#                             $CACHE_DIR/deb/
#   scripts/deb.sh prebuilt   also what selftests/vm/tests/91-packages.sh
#                             needs: the DKMS tarball of the package's
#                             source and ksmbd.ko for $KVER
#                             (scripts/dkms-tarball.sh), and the 0.2
#                             packages it upgrades from, with theirs
#                             (selftests/vm/fixtures/deb-0.2.sh)
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
CACHE_DIR=${CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ksmbd-bpf-sched}
export CACHE_DIR
NAME=ksmbd-bpf-sched
VERSION=$("$TOP/scripts/version.sh")
DEBVERSION=$("$TOP/scripts/version.sh" -d)
OUT=$CACHE_DIR/deb
BUILD=$OUT/build
TREE=$BUILD/$NAME-$VERSION
CHANGES=${NAME}_${DEBVERSION}_amd64.changes

log() { printf '[deb] %s\n' "$*" >&2; }
die() { printf '[deb] error: %s\n' "$*" >&2; exit 1; }

build() {
	command -v dpkg-buildpackage >/dev/null && command -v dh_dkms >/dev/null ||
		die "dpkg-buildpackage or dh_dkms missing: run 'make deps'"
	rm -rf "$BUILD"
	mkdir -p "$TREE"
	(cd "$TOP" && git ls-files -z --cached --others --exclude-standard) |
		rsync -a --from0 --files-from=- "$TOP/" "$TREE/"
	log "dpkg-buildpackage -b -us -uc in $TREE (log: $OUT/build.log)"
	(cd "$TREE" && dpkg-buildpackage -b -us -uc) >"$OUT/build.log" 2>&1 ||
		{ tail -n 40 "$OUT/build.log" >&2; die "dpkg-buildpackage failed"; }
	rm -f "$OUT"/"$NAME"*_*.deb "$OUT"/"$NAME"_*.changes "$OUT"/"$NAME"_*.buildinfo
	mv "$BUILD"/*.deb "$BUILD/$CHANGES" "$BUILD"/*.buildinfo "$OUT/"
	log "$(cd "$OUT" && echo "$NAME"*_"$DEBVERSION"_*.deb)"
	# The .changes names the .debs beside it: lintian checks them all.
	log "lintian $OUT/$CHANGES"
	lintian --info --display-experimental --pedantic --fail-on error,warning \
		"$OUT/$CHANGES" >"$OUT/lintian.log" 2>&1 ||
		{ cat "$OUT/lintian.log" >&2; die "lintian: errors or warnings"; }
	grep -v '^running with root\|^N: \|^$' "$OUT/lintian.log" >&2 || true
}

prebuilt() {
	local x=$OUT/dkms-src
	rm -rf "$x"
	dpkg-deb -x "$OUT/$NAME-dkms_${DEBVERSION}_all.deb" "$x"
	"$TOP/scripts/dkms-tarball.sh" "$x/usr/src/$NAME-$VERSION" \
		"$OUT/$NAME-$VERSION.dkms.tar.gz"
	rm -rf "$x"
	"$TOP/selftests/vm/fixtures/deb-0.2.sh"
}

build
[ "${1:-}" = prebuilt ] && prebuilt
exit 0
