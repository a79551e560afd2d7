#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Turn kernel/series (edits in kernel/patches + the new files under
# kernel/fs and kernel/include that each patch adds) into an upstream-style
# git series on Debian's linux-source-6.12, and write it with
# 'git format-patch' to $OUT (default $CACHE_DIR/series).
#
#   BUILD_EACH=1  also build bzImage after every patch (separate O= tree
#                 under $CACHE_DIR/build-series; ccache makes it quick
#                 after the first time) and stop at the first that fails.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
CACHE_DIR=${CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ksmbd-bpf-sched}
SRC=$CACHE_DIR/src/linux
WT=$CACHE_DIR/series-tree
OUT=${OUT:-$CACHE_DIR/series}
OBJ=$CACHE_DIR/build-series
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
		mkdir -p "$OBJ"
		cp "$CACHE_DIR/build/.config" "$OBJ/.config"
		make -s -C "$WT" O="$OBJ" olddefconfig >/dev/null
		make -s -C "$WT" O="$OBJ" CC="ccache gcc" -j"$(($(nproc) + 1))" \
			bzImage >/dev/null 2>"$OBJ/build-$n.log" ||
			{ echo "[series] patch $n does not build: $OBJ/build-$n.log" >&2; exit 1; }
		echo "[series] $n builds"
	fi
done < "$TOP/kernel/series"

rm -rf "$OUT"
git -C "$WT" format-patch -q --cover-letter -o "$OUT" base..HEAD
echo "[series] $n patches in $OUT"
