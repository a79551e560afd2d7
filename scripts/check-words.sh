#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check-words.sh - the repository speaks of the software only.
#
# Greps every tracked file (git ls-files) for words that belong to how the
# project was worked on rather than to what it is, prints file:line:text of
# each hit and exits 1 if there is any.  A rule is cited by its source
# (MS-SMB2 section, RFC, kernel documentation, commit) or by the test that
# shows it, never by a tracker's numbering.
#
#   scripts/check-words.sh [PATHSPEC...]    (default: the whole tree)
#
# CHECK_WORDS_EXCLUDE: extended regex of paths to skip (e.g. while another
# change is cleaning them).
set -u
cd "$(dirname "$0")/.." || exit 2

# The patterns (grep -E; case-insensitive unless marked):
patterns=(
	# Spelled with a bracket each, so that this file does not match
	# itself or speak of those words.
	'\bagen[t]s?\b'			# who did the work
	'\bhelpe[r]s?'"'"'?s? (agen[t]s?|sessio[n])'	# ditto
	'\bsessio[n]s?'"'"'s (helpe[r]|agen[t])'	# ditto
	'\bhelpe[r]'"'"'s (test )?VM\b'		# ditto
	'\bthe brie[f]\b|being edite[d] now'	# the work's own plan and state
	'\bseeds?/|\bseed [0-9]{3}\b|\bseed'"'"'s\b'	# the project's briefing notes
	'\bissues? [0-9]+'			# tracker numbering
	'\bpoints? [0-9]+(-[0-9]+)? of (the )?issue'	# ditto
	'\b(of|in) the issu[e]\b|\bpoint [0-9]+'"'"'s\b|^\W*point [0-9]+\b'	# ditto
	'\b(dispatch(er)?|read) v[0-9]\b'		# history labels for rewrites
	'\bstop [0-9]+\b'			# work-log milestones
	'\b(loader|tools|cost)[0-9]+\b'		# branch names of the work log
	'DESIGN\.md'				# a file that is not in the repository
	'(^|[^[:alnum:]_.~-])/(root|work)/'	# the build machine's paths
)
# Case-sensitive: case ids of the original test plan (C1 to C13).
cs_patterns=(
	'\b[Cc]ases? C[0-9]+\b|\bC(1[0-3]|[1-9])\b'
)

join() { local IFS='|'; echo "$*"; }
re=$(join "${patterns[@]}")
cs_re=$(join "${cs_patterns[@]}")

files=$(git ls-files -- "$@" | grep -v '^scripts/check-words\.sh$')
if [ -n "${CHECK_WORDS_EXCLUDE:-}" ]; then
	files=$(echo "$files" | grep -Ev -- "$CHECK_WORDS_EXCLUDE")
fi
[ -n "$files" ] || exit 0

hits=$( { echo "$files" | tr '\n' '\0' | xargs -0 grep -nIHiE -- "$re"
	  echo "$files" | tr '\n' '\0' | xargs -0 grep -nIHE -- "$cs_re"; } |
	sort -t: -k1,1 -k2,2n -u)
if [ -n "$hits" ]; then
	echo "$hits"
	echo "check-words: $(echo "$hits" | wc -l) hit(s); see the list in $0" >&2
	exit 1
fi
exit 0
