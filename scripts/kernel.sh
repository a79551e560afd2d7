#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Prepare and build the patched kernel outside the checkout.
#
#   scripts/kernel.sh source   extract Debian's linux-source-6.12 once (git base)
#   scripts/kernel.sh apply    reset the tree to the base, copy kernel/ new files,
#                              apply kernel/patches/*.patch (skipped when unchanged)
#   scripts/kernel.sh config   tinyconfig + kernel/config/vm.config (+ debug.config
#                              when KDEBUG=1), skipped when the fragments are unchanged
#   scripts/kernel.sh build    bzImage with ccache (incremental)
#   scripts/kernel.sh tools    libbpf.a + headers and bpftool from the same tree
#   scripts/kernel.sh all      all of the above, in order
#   scripts/kernel.sh check-patches
#                              git apply --check of kernel/patches, in order,
#                              on Debian's 6.12 base (a scratch index: the
#                              tree is not touched); seconds
#
# Layout under $CACHE_DIR (default ~/.cache/ksmbd-bpf-sched):
#   src/linux      the source tree (a git repo whose first commit is Debian's)
#   build/         O= object tree, .config, bzImage, vmlinux
#   libbpf/        libbpf.a and include/bpf/*.h
#   bpftool/       bpftool
#   ccache/        compiler cache
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
CACHE_DIR=${CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ksmbd-bpf-sched}
SRC=$CACHE_DIR/src/linux
OBJ=$CACHE_DIR/build${KDEBUG:+-debug}
TARBALL=${KERNEL_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
JOBS=${JOBS:-$(($(nproc) + 1))}
export CCACHE_DIR=${CCACHE_DIR:-$CACHE_DIR/ccache}
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-5G}
export CCACHE_COMPILERCHECK=content
export CCACHE_NOHASHDIR=1
export CCACHE_BASEDIR=$SRC
# Kernel builds embed timestamps; keep them fixed so ccache hits.
export KBUILD_BUILD_TIMESTAMP=${KBUILD_BUILD_TIMESTAMP:-2026-01-01}
export KBUILD_BUILD_USER=ksmbd-bpf-sched KBUILD_BUILD_HOST=build

log() { printf '[kernel] %s\n' "$*" >&2; }
die() { printf '[kernel] error: %s\n' "$*" >&2; exit 1; }

hash_of() { (cd "$TOP" && find "$@" -type f -print0 | sort -z |
		xargs -0 sha256sum) | sha256sum | cut -d' ' -f1; }

do_source() {
	[ -f "$SRC/.ksmbd-bpf-sched-base" ] && return 0
	[ -f "$TARBALL" ] || die "$TARBALL missing: run 'make deps' (apt linux-source-6.12)"
	log "extracting $TARBALL (once)"
	rm -rf "$SRC" "$SRC.tmp"
	mkdir -p "$SRC.tmp"
	tar -C "$SRC.tmp" --strip-components=1 -xf "$TARBALL"
	git -C "$SRC.tmp" init -q
	git -C "$SRC.tmp" -c core.autocrlf=false add -f -A .
	git -C "$SRC.tmp" -c user.name=base -c user.email=base@localhost \
		commit -q -m "Debian linux-source-6.12 (base)"
	git -C "$SRC.tmp" tag base
	touch "$SRC.tmp/.ksmbd-bpf-sched-base"
	mv "$SRC.tmp" "$SRC"
}

do_apply() {
	do_source
	local h
	h=$(hash_of kernel/fs kernel/patches)
	if [ "$(cat "$SRC/.applied" 2>/dev/null)" = "$h" ]; then
		return 0
	fi
	log "applying kernel/ to the tree"
	rm -f "$SRC/.applied"
	git -C "$SRC" reset -q --hard base
	git -C "$SRC" clean -fdqx -e .ksmbd-bpf-sched-base
	(cd "$TOP/kernel" && find fs -type f) | while read -r f; do
		mkdir -p "$SRC/$(dirname "$f")"
		cp "$TOP/kernel/$f" "$SRC/$f"
	done
	for p in "$TOP"/kernel/patches/*.patch; do
		[ -e "$p" ] || continue
		git -C "$SRC" apply --whitespace=nowarn "$p" ||
			die "patch $(basename "$p") does not apply"
	done
	echo "$h" > "$SRC/.applied"
}

do_config() {
	local h frags
	frags="kernel/config/vm.config"
	[ -n "${KDEBUG:-}" ] && frags="$frags kernel/config/debug.config"
	# shellcheck disable=SC2086
	h=$(hash_of $frags)
	if [ -f "$OBJ/.config" ] && [ "$(cat "$OBJ/.config-hash" 2>/dev/null)" = "$h" ]; then
		return 0
	fi
	log "configuring $OBJ (tinyconfig + $frags)"
	mkdir -p "$OBJ"
	make -s -C "$SRC" O="$OBJ" tinyconfig >/dev/null
	# shellcheck disable=SC2086
	(cd "$TOP" && KCONFIG_CONFIG="$OBJ/.config" \
		"$SRC/scripts/kconfig/merge_config.sh" -m -O "$OBJ" "$OBJ/.config" $frags) >/dev/null
	make -s -C "$SRC" O="$OBJ" olddefconfig >/dev/null
	# Every line of the fragments must have survived olddefconfig.
	local missing=0 line
	# shellcheck disable=SC2086
	while read -r line; do
		case "$line" in ''|'#'*) continue ;; esac
		if [ "${line#*=}" = n ]; then
			grep -q "^${line%%=*}=" "$OBJ/.config" && { log "not unset: $line"; missing=1; }
		else
			grep -qx "$line" "$OBJ/.config" || { log "not set: $line"; missing=1; }
		fi
	done < <(cd "$TOP" && cat $frags)
	[ $missing = 0 ] || die "config fragment did not apply"
	echo "$h" > "$OBJ/.config-hash"
}

do_build() {
	command -v ccache >/dev/null || die "ccache missing: run 'make deps'"
	log "building bzImage in $OBJ (-j$JOBS)"
	make -s -C "$SRC" O="$OBJ" CC="ccache gcc" HOSTCC="ccache gcc" \
		-j"$JOBS" bzImage
	log "kernel: $OBJ/arch/x86/boot/bzImage"
}

do_tools() {
	local out=$CACHE_DIR
	mkdir -p "$out/libbpf/obj" "$out/bpftool"
	make -s -C "$SRC/tools/lib/bpf" OUTPUT="$out/libbpf/obj/" \
		CC="ccache gcc" -j"$JOBS" "$out/libbpf/obj/libbpf.a" >/dev/null
	make -s -C "$SRC/tools/lib/bpf" OUTPUT="$out/libbpf/obj/" \
		DESTDIR="$out/libbpf" prefix= install_headers >/dev/null
	# bpftool's own BPF skeletons (prog profile, pids) are not needed;
	# CLANG=false alone is not enough: the clang-bpf-co-re feature test
	# may still report "on" and the build then runs "false" on them.
	make -s -C "$SRC/tools/bpf/bpftool" OUTPUT="$out/bpftool/" \
		CLANG=false feature-clang-bpf-co-re=0 -j"$JOBS" >/dev/null 2>&1 ||
	make -C "$SRC/tools/bpf/bpftool" OUTPUT="$out/bpftool/" CLANG=false \
		feature-clang-bpf-co-re=0 -j1
}

do_check_patches() {
	do_source
	local idx p n=0
	idx=$(mktemp "${TMPDIR:-/tmp}/ksmbd-bpf-sched-index.XXXXXX")
	# shellcheck disable=SC2064
	trap "rm -f '$idx'" RETURN
	GIT_INDEX_FILE=$idx git -C "$SRC" read-tree base
	for p in "$TOP"/kernel/patches/*.patch; do
		[ -e "$p" ] || continue
		# --cached: applied to the scratch index, so each patch is
		# checked on top of the ones before it.
		GIT_INDEX_FILE=$idx git -C "$SRC" apply --cached --whitespace=nowarn "$p" ||
			die "patch $(basename "$p") does not apply to the 6.12 base"
		n=$((n + 1))
	done
	log "kernel/patches: $n apply to Debian's linux-source-6.12 base"
	check_series
}

# kernel/series must name every patch, in the order of kernel/patches,
# and every new file under kernel/fs exactly once
# (scripts/kernel-series.sh adds only the files it names).
check_series() {
	local listed want
	listed=$(sed -e 's/#.*//' "$TOP/kernel/series" | awk 'NF { print $1 }')
	want=$(cd "$TOP/kernel/patches" && ls -- *.patch)
	[ "$listed" = "$want" ] ||
		die "kernel/series does not list kernel/patches in order"
	listed=$(sed -e 's/#.*//' "$TOP/kernel/series" |
		awk '{ for (i = 2; i <= NF; i++) print $i }' | sort)
	want=$(cd "$TOP/kernel" && find fs -type f | sort)
	[ "$listed" = "$want" ] ||
		die "kernel/series and the files under kernel/fs differ:
$(diff <(echo "$listed") <(echo "$want") | grep '^[<>]')"
	log "kernel/series: every patch and new file listed"
}

case "${1:-all}" in
source) do_source ;;
apply) do_apply ;;
config) do_apply; do_config ;;
build) do_apply; do_config; do_build ;;
tools) do_source; do_tools ;;
all) do_apply; do_config; do_build; do_tools ;;
check-patches) do_check_patches ;;
*) die "usage: $0 source|apply|config|build|tools|all|check-patches" ;;
esac
