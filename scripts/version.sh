#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The project's version.  Its one source is the top entry of
# debian/changelog; everything else derives from it:
#
#   scripts/version.sh      the upstream version (0.3): smb-classify
#                           --version, the module's MODULE_VERSION
#                           ("0.3-bpf-sched"), the DKMS module version
#   scripts/version.sh -d   the Debian version (0.3-1): the packages
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
v=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)
case "${1:-}" in
-d) echo "$v" ;;
"") echo "${v%-*}" ;;
*) echo "usage: $0 [-d]" >&2; exit 2 ;;
esac
