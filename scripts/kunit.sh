#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The dispatcher's KUnit suite (kernel/fs/smb/server/ksmbd_sched_disp_test.c)
# on UML, with the kernel's own runner:
#
#   scripts/kunit.sh [FILTER_GLOB]    e.g. 'ksmbd_sched_disp.debt_*'
#
# The patched tree comes from scripts/kernel.sh apply; it is copied to
# $KUNIT_DIR/src by content (rsync -c, not by time), so that the files
# that did not change keep their mtimes and the UML build in
# $KUNIT_DIR/build stays incremental.  Then
#
#   tools/testing/kunit/kunit.py run --arch=um --kunitconfig=fs/smb/server
#
# configures (fs/smb/server/.kunitconfig), builds, boots and prints the
# KTAP results; the exit status is the suite's.  Extra kunit.py options
# go in KUNIT_ARGS (e.g. KUNIT_ARGS=--raw_output=all).
#
# Layout (default $CACHE_DIR = ~/.cache/ksmbd-bpf-sched):
#   $CACHE_DIR/src/linux   the patched tree (scripts/kernel.sh)
#   $KUNIT_DIR/src         its copy for the UML build ($CACHE_DIR/kunit)
#   $KUNIT_DIR/build       the UML O= tree
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
CACHE_DIR=${CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ksmbd-bpf-sched}
KUNIT_DIR=${KUNIT_DIR:-$CACHE_DIR/kunit}
JOBS=${JOBS:-$(($(nproc) + 1))}
export CACHE_DIR

log() { printf '[kunit] %s\n' "$*" >&2; }

"$TOP/scripts/kernel.sh" apply
mkdir -p "$KUNIT_DIR/src" "$KUNIT_DIR/build"
log "syncing $CACHE_DIR/src/linux to $KUNIT_DIR/src (by content)"
rsync -rlc --delete --exclude=/.git --exclude=/.applied \
	--exclude=/.ksmbd-bpf-sched-base \
	"$CACHE_DIR/src/linux/" "$KUNIT_DIR/src/"

# Parts of UML's default configuration that the suite does not use, off
# to keep the first build short (from an empty cache on 2 cores: 177 s
# instead of 244 s).  The tree's .kunitconfig stays the upstream one.
trim=()
for opt in IPV6 HID WIRELESS ETHTOOL_NETLINK INET_DIAG NETDEVICES; do
	trim+=(--kconfig_add "CONFIG_$opt=n")
done

cd "$KUNIT_DIR/src"
# shellcheck disable=SC2086
exec python3 tools/testing/kunit/kunit.py run --arch=um \
	--kunitconfig=fs/smb/server "${trim[@]}" --build_dir="$KUNIT_DIR/build" \
	--jobs="$JOBS" --timeout=300 ${KUNIT_ARGS:-} "$@"
