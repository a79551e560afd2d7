#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# checkpatch.pl --strict over the kernel side: the new files and the
# series of edits.  Two classes of CHECK are expected and ignored:
#  - CAMELCASE: ksmbd's SMB2 wire structs use the protocol's field names
#    (MS-SMB2), e.g. hdr->NextCommand;
#  - OPEN_ENDED_LINE / PARENTHESIS_ALIGNMENT in the trace header: the
#    TRACE_EVENT() layout every include/trace/events/ header uses.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
CACHE_DIR=${CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ksmbd-bpf-sched}
CP=$CACHE_DIR/src/linux/scripts/checkpatch.pl
[ -f "$CP" ] || { echo "checkpatch: run 'make kernel-src' first" >&2; exit 1; }
rc=0
# Relative paths, as checkpatch sees them in a patch; its cache file
# (.checkpatch-camelcase.*) is gitignored.
cd "$TOP/kernel"
for f in $(find fs -type f -name '*.[ch]' | sort); do
	ign=CAMELCASE
	case $f in *_trace.h) ign=$ign,OPEN_ENDED_LINE,PARENTHESIS_ALIGNMENT ;; esac
	perl "$CP" --root "$CACHE_DIR/src/linux" --strict --quiet --ignore "$ign" \
		--ignore FILE_PATH_CHANGES,SPDX_LICENSE_TAG --file "$f" || rc=1
done
cd "$CACHE_DIR/src/linux"
for p in "$TOP"/kernel/patches/*.patch; do
	[ -e "$p" ] || continue
	perl "$CP" --root "$CACHE_DIR/src/linux" --strict --quiet --ignore CAMELCASE,MISSING_SIGN_OFF,COMMIT_MESSAGE "$p" || rc=1
done
[ $rc = 0 ] && echo "checkpatch: clean (new files and kernel/patches)"
exit $rc
