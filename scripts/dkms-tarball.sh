#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/dkms-tarball.sh SRCDIR TARBALL: a DKMS tarball (dkms mktarball)
# of the DKMS source SRCDIR (a /usr/src/<module>-<version> with its
# dkms.conf) and its ksmbd.ko for $KVER, built here by dkms against the
# unpacked headers of scripts/module.sh, in private trees beside TARBALL
# (not /var/lib/dkms, not /lib/modules).  Placed where the package's
# postinst looks (dh_dkms: /usr/share/<module>-dkms/), DKMS loads it
# instead of compiling: the VM test does, compiling under TCG is slow.
# Skipped when the source and the kernel are unchanged.
set -euo pipefail

CACHE_DIR=${CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ksmbd-bpf-sched}
KVER=${KVER:-6.12.117+deb12-amd64}
HDR=$CACHE_DIR/debian/root/usr/src/linux-headers-$KVER

log() { printf '[dkms-tarball] %s\n' "$*" >&2; }
die() { printf '[dkms-tarball] error: %s\n' "$*" >&2; exit 1; }

(($# == 2)) || die "usage: $0 SRCDIR TARBALL"
src=$(cd "$1" && pwd)
tarball=$2
command -v dkms >/dev/null || die "dkms missing: run 'make deps'"
[ -d "$HDR" ] || die "no $HDR: run 'make module'"
name=$(sed -n 's/^PACKAGE_NAME="\(.*\)"/\1/p' "$src/dkms.conf")
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$src/dkms.conf")
[ "${src##*/}" = "$name-$version" ] ||
	die "$src: dkms.conf says $name-$version"
t=${tarball%.dkms.tar.gz}.dkms
want=$( (cd "$src" && find . -type f -print0 | sort -z | xargs -0 sha256sum;
	 echo "$KVER") | sha256sum | cut -d' ' -f1)
if [ -f "$tarball" ] && [ "$(cat "$t/.stamp" 2>/dev/null)" = "$want" ]; then
	exit 0
fi
rm -rf "$t"
mkdir -p "$t/tree" "$t/src" "$t/lib-modules/$KVER"
cp -a "$src" "$t/src/"
args=(--dkmstree "$t/tree" --sourcetree "$t/src" --installtree "$t/lib-modules")
dkms add -m "$name" -v "$version" "${args[@]}" >/dev/null
log "dkms build $name/$version -k $KVER (host, against $HDR)"
# make module's ccache: the same compiler and flags.
CCACHE_DIR=$CACHE_DIR/ccache DEBIAN_KERNEL_USE_CCACHE=1 \
dkms build -m "$name" -v "$version" -k "$KVER" "${args[@]}" \
	--kernelsourcedir "$HDR" >"$t/build.log" 2>&1 ||
	{ cat "$t/build.log" >&2; die "dkms build failed"; }
dkms mktarball -m "$name" -v "$version" -k "$KVER" "${args[@]}" \
	--archive "$tarball" >/dev/null
echo "$want" >"$t/.stamp"
log "$tarball"
