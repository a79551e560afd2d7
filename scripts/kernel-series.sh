#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Turn kernel/series (edits in kernel/patches + the new files under
# kernel/fs and kernel/include that each patch adds) into an upstream-style
# git series on Debian's linux-source-6.12, and write it with
# 'git format-patch' to $OUT (default $CACHE_DIR/series).
#
#   BUILD_EACH=1  also build every patch twice and stop at the first
#                 that fails: ksmbd built in (bzImage, O= tree
#                 $CACHE_DIR/build-series) and ksmbd as a module
#                 (CONFIG_SMB_SERVER=m: vmlinux + modules, so modpost
#                 rejects any symbol the base does not export; O= tree
#                 $CACHE_DIR/build-series-m).  Both start from the
#                 in-tree kernel's .config; ccache and the O= trees make
#                 every build after the first incremental.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
CACHE_DIR=${CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ksmbd-bpf-sched}
SRC=$CACHE_DIR/src/linux
WT=$CACHE_DIR/series-tree
OUT=${OUT:-$CACHE_DIR/series}
OBJ=$CACHE_DIR/build-series
OBJM=$CACHE_DIR/build-series-m
export CCACHE_DIR=${CCACHE_DIR:-$CACHE_DIR/ccache} CCACHE_BASEDIR=$WT
export KBUILD_BUILD_TIMESTAMP=2026-01-01 KBUILD_BUILD_USER=ksmbd-bpf-sched \
	KBUILD_BUILD_HOST=build

[ -d "$SRC/.git" ] || { echo "kernel-series: run 'make kernel-src' first" >&2; exit 1; }
git -C "$SRC" worktree prune
if [ ! -d "$WT" ]; then
	git -C "$SRC" worktree add -q --detach "$WT" base
fi
git -C "$WT" checkout -q --detach base
git -C "$WT" reset -q --hard base
git -C "$WT" clean -fdqx

# build_one N OBJDIR y|m TARGET...: build patch N with ksmbd built in (y)
# or as a module (m) in OBJDIR; exit at the first failure.
build_one() {
	local n=$1 obj=$2 how=$3
	shift 3
	mkdir -p "$obj"
	cp "$CACHE_DIR/build/.config" "$obj/.config"
	if [ "$how" = m ]; then
		# The in-tree kernel is built without module support.
		"$WT/scripts/config" --file "$obj/.config" --enable MODULES \
			--enable MODULE_UNLOAD --module SMB_SERVER
	fi
	make -s -C "$WT" O="$obj" olddefconfig >/dev/null
	grep -q "^CONFIG_SMB_SERVER=$how\$" "$obj/.config" ||
		{ echo "[series] $obj/.config: CONFIG_SMB_SERVER is not $how" >&2; exit 1; }
	make -s -C "$WT" O="$obj" CC="ccache gcc" -j"$(($(nproc) + 1))" \
		"$@" >/dev/null 2>"$obj/build-$n.log" ||
		{ echo "[series] patch $n does not build with SMB_SERVER=$how: $obj/build-$n.log" >&2; exit 1; }
	echo "[series] $n builds with SMB_SERVER=$how"
}

n=0
while read -r patch newfiles; do
	case "$patch" in ''|'#'*) continue ;; esac
	n=$((n + 1))
	p=$TOP/kernel/patches/$patch
	git -C "$WT" apply --whitespace=nowarn "$p"
	for f in $newfiles; do
		mkdir -p "$WT/$(dirname "$f")"
		cp "$TOP/kernel/$f" "$WT/$f"
	done
	# Subject without the [PATCH i/n] tag, then the body up to '---'.
	msg=$(sed -n '/^Subject: /{s/^Subject: \(\[PATCH[^]]*\] \)\{0,1\}//;p}' "$p")
	body=$(sed -n '/^Subject: /,/^---$/p' "$p" | sed '1d;$d')
	git -C "$WT" add -A -f .
	git -C "$WT" -c user.name="$(sed -n 's/^From: \(.*\) <.*/\1/p' "$p")" \
		-c user.email="$(sed -n 's/^From: .*<\(.*\)>/\1/p' "$p")" \
		commit -q -m "$msg" -m "$body"
	echo "[series] $n: $msg"
	if [ -n "${BUILD_EACH:-}" ]; then
		build_one "$n" "$OBJ" y bzImage
		build_one "$n" "$OBJM" m vmlinux modules
		[ -f "$OBJM/fs/smb/server/ksmbd.ko" ] ||
			{ echo "[series] patch $n: no ksmbd.ko in $OBJM" >&2; exit 1; }
	fi
done < "$TOP/kernel/series"

rm -rf "$OUT"
git -C "$WT" format-patch -q --cover-letter -o "$OUT" base..HEAD
echo "[series] $n patches in $OUT"
