#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Turn kernel/series (edits in kernel/patches + the new files under
# kernel/fs that each patch adds) into an upstream-style git series on
# Debian's linux-source-6.12, and write it with 'git format-patch' to
# $OUT (default $CACHE_DIR/series).
#
# kernel/fs holds the new files as the whole series leaves them.  A
# patch that changes a file an earlier patch added has that change in
# kernel/deltas/<its name>; the state of the new files after patch N is
# kernel/fs with the deltas of the patches after N reverse-applied (and
# without the files those patches add).  The series' last commit must
# equal what scripts/kernel.sh applies (kernel/fs copied, kernel/patches
# applied), or the script fails.
#
#   scripts/kernel-series.sh check
#                 only derive every patch's new files from kernel/fs and
#                 check the deltas (each applies exactly, touches only
#                 files an earlier patch added, names a listed patch);
#                 no kernel tree needed, seconds (make check runs it)
#   BUILD_EACH=1  also build every patch twice and stop at the first
#                 that fails: ksmbd built in (bzImage, O= tree
#                 $CACHE_DIR/build-series) and ksmbd as a module
#                 (CONFIG_SMB_SERVER=m: vmlinux + modules, so modpost
#                 rejects any symbol the base does not export; O= tree
#                 $CACHE_DIR/build-series-m).  Both start from the
#                 in-tree kernel's .config; ccache and the O= trees make
#                 every build after the first incremental.
#                 BUILD_ONLY="3 4" builds only those patches (the series
#                 is still made, and checked, whole).
#   CHECKPATCH=1  also run checkpatch.pl --strict over every patch of
#                 the series in $OUT, as scripts/checkpatch.sh does
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

DELTAS=$TOP/kernel/deltas

die() { echo "[series] $*" >&2; exit 1; }

# The patches of kernel/series, in order, and the new files of each.
PATCHES=() NEWFILES=()
while read -r patch newfiles; do
	case "$patch" in ''|'#'*) continue ;; esac
	PATCHES+=("$patch")
	NEWFILES+=("$newfiles")
done < "$TOP/kernel/series"
N=${#PATCHES[@]}

# derive_states DIR: DIR/K (K = 1..N) gets the new files as patch K
# leaves them: DIR/N is kernel/fs, DIR/K-1 is DIR/K
# with patch K's delta reverse-applied and patch K's new files removed.
# Then every delta is applied forward again, on DIR/K-1 plus patch K's
# new files, and must give DIR/K exactly.
derive_states() {
	local dir=$1 k j d f touched before
	for d in "$DELTAS"/*; do
		[ -e "$d" ] || continue
		case " ${PATCHES[*]} " in *" $(basename "$d") "*) ;; *)
			die "kernel/deltas/$(basename "$d") names no patch of kernel/series" ;;
		esac
	done
	mkdir -p "$dir/$N"
	cp -a "$TOP/kernel/fs" "$dir/$N/"
	for ((k = N; k > 1; k--)); do
		rm -rf "$dir/$((k - 1))"
		cp -a "$dir/$k" "$dir/$((k - 1))"
		d=$DELTAS/${PATCHES[k - 1]}
		if [ -f "$d" ]; then
			# Only files that an earlier patch added.
			before=" ${NEWFILES[*]:0:k-1} "
			touched=$(cd "$dir/$k" && git apply --numstat "$d" | cut -f3)
			for f in $touched; do
				case "$before" in *" $f "*) ;; *)
					die "kernel/deltas/${PATCHES[k - 1]} changes $f, which no earlier patch adds" ;;
				esac
			done
			(cd "$dir/$((k - 1))" && git apply -R "$d") ||
				die "kernel/deltas/${PATCHES[k - 1]} does not reverse-apply to kernel/fs and the later deltas"
		fi
		for f in ${NEWFILES[k - 1]}; do
			rm -f "$dir/$((k - 1))/$f"
		done
	done
	for ((k = 1; k < N; k++)); do
		j=$dir/check
		rm -rf "$j"
		cp -a "$dir/$k" "$j"
		for f in ${NEWFILES[k]}; do
			cp "$dir/$((k + 1))/$f" "$j/$f"
		done
		d=$DELTAS/${PATCHES[k]}
		if [ -f "$d" ]; then
			(cd "$j" && git apply "$d") ||
				die "kernel/deltas/${PATCHES[k]} does not apply after patch $k"
		fi
		diff -r "$j" "$dir/$((k + 1))" >/dev/null ||
			die "patch $((k + 1)): its delta and kernel/fs disagree"
	done
	rm -rf "$dir/check"
}

STATES=$(mktemp -d "${TMPDIR:-/tmp}/ksmbd-bpf-sched-states.XXXXXX")
# shellcheck disable=SC2064
trap "rm -rf '$STATES'" EXIT
derive_states "$STATES"
[ -n "${KEEP_STATES:-}" ] && { rm -rf "$KEEP_STATES"; cp -a "$STATES" "$KEEP_STATES"; }
if [ "${1:-}" = check ]; then
	echo "[series] kernel/deltas: $(find "$DELTAS" -type f 2>/dev/null | wc -l) deltas; every patch's new files derive from kernel/fs"
	exit 0
fi

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
	echo "[series] $n builds with SMB_SERVER=$how ($(date -u +%T))"
}

for ((n = 1; n <= N; n++)); do
	patch=${PATCHES[n - 1]}
	p=$TOP/kernel/patches/$patch
	git -C "$WT" apply --whitespace=nowarn "$p"
	# Every new file as this patch leaves it (added now or changed now).
	(cd "$STATES/$n" && find fs -type f) | while read -r f; do
		mkdir -p "$WT/$(dirname "$f")"
		cmp -s "$STATES/$n/$f" "$WT/$f" || cp "$STATES/$n/$f" "$WT/$f"
	done
	# Subject without the [PATCH i/n] tag, then the body up to '---'.
	msg=$(sed -n '/^Subject: /{s/^Subject: \(\[PATCH[^]]*\] \)\{0,1\}//;p}' "$p")
	body=$(sed -n '/^Subject: /,/^---$/p' "$p" | sed '1d;$d')
	git -C "$WT" add -A -f .
	git -C "$WT" -c user.name="$(sed -n 's/^From: \(.*\) <.*/\1/p' "$p")" \
		-c user.email="$(sed -n 's/^From: .*<\(.*\)>/\1/p' "$p")" \
		commit -q -m "$msg" -m "$body"
	echo "[series] $n: $msg"
	if [ -n "${BUILD_EACH:-}" ] &&
	   { [ -z "${BUILD_ONLY:-}" ] || [[ " $BUILD_ONLY " == *" $n "* ]]; }; then
		build_one "$n" "$OBJ" y bzImage
		build_one "$n" "$OBJM" m vmlinux modules
		[ -f "$OBJM/fs/smb/server/ksmbd.ko" ] ||
			{ echo "[series] patch $n: no ksmbd.ko in $OBJM" >&2; exit 1; }
	fi
done

# The series must end where scripts/kernel.sh apply ends (what make
# kernel, make module and the DKMS package build): base + every new
# file of kernel/fs + every patch of kernel/patches.
idx=$STATES/index
GIT_INDEX_FILE=$idx git -C "$WT" read-tree base
(cd "$TOP/kernel" && find fs -type f | sort) | while read -r f; do
	GIT_INDEX_FILE=$idx git -C "$WT" update-index --add --cacheinfo \
		"100644,$(git -C "$WT" hash-object -w "$TOP/kernel/$f"),$f"
done
for p in "$TOP"/kernel/patches/*.patch; do
	GIT_INDEX_FILE=$idx git -C "$WT" apply --cached --whitespace=nowarn "$p"
done
want=$(GIT_INDEX_FILE=$idx git -C "$WT" write-tree)
[ "$want" = "$(git -C "$WT" rev-parse 'HEAD^{tree}')" ] ||
	die "the series' last tree differs from kernel/fs + kernel/patches:
$(git -C "$WT" diff --stat "$want" 'HEAD^{tree}')"
echo "[series] its last tree is kernel/fs + kernel/patches exactly ($want)"

rm -rf "$OUT"
git -C "$WT" format-patch -q --cover-letter -o "$OUT" base..HEAD
echo "[series] $N patches in $OUT"

if [ -n "${CHECKPATCH:-}" ]; then
	# The classes scripts/checkpatch.sh ignores; the TRACE_EVENT() layout
	# ones only in the patch that adds a trace header.
	rc=0
	for p in "$OUT"/0*.patch; do
		case $p in *0000-cover-letter.patch) continue ;; esac
		ign=CAMELCASE,FILE_PATH_CHANGES,SPDX_LICENSE_TAG
		grep -q '^+++ b/.*_trace\.h$' "$p" &&
			ign=$ign,OPEN_ENDED_LINE,PARENTHESIS_ALIGNMENT
		(cd "$WT" && perl scripts/checkpatch.pl --strict --quiet \
			--ignore "$ign" "$p") || { rc=1; echo "[series] checkpatch: $(basename "$p")" >&2; }
	done
	[ $rc = 0 ] || exit 1
	echo "[series] checkpatch --strict: every patch clean"
fi
