# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
# bash completion for smb-classify(8): commands, options, and from the
# running state the classes (policy del/set, prefix add, user add, share
# add, class set), the prefixes (prefix del), users (user del), shares
# (share del) and classes with a reservation or limit (class del), and
# the ksmbd events (trace).

_smb_classify_netns()
{
	local i
	for (( i = 1; i < COMP_CWORD; i++ )); do
		if [[ ${COMP_WORDS[i]} == -n || ${COMP_WORDS[i]} == --netns ]]; then
			printf -- '-n %s' "${COMP_WORDS[i + 1]}"
			return
		fi
	done
}

# The classes of the running policy: prefix, user, share, class list and
# policy show.
_smb_classify_classes()
{
	local what
	for what in prefix user share class; do
		# shellcheck disable=SC2046
		smb-classify $(_smb_classify_netns) -j $what list 2>/dev/null |
			grep -o '"class":[0-9]*' | cut -d: -f2
	done
	# shellcheck disable=SC2046
	smb-classify $(_smb_classify_netns) -j policy show 2>/dev/null |
		grep -o '"class":[0-9]*' | cut -d: -f2
}

_smb_classify_prefixes()
{
	# shellcheck disable=SC2046
	smb-classify $(_smb_classify_netns) -j prefix list 2>/dev/null |
		grep -o '"prefix":"[^"]*"' | cut -d'"' -f4
}

# The names of "user list" or "share list" ($1), for "user del" and
# "share del"; names with a space or a quote are left out.
_smb_classify_names()
{
	# shellcheck disable=SC2046
	smb-classify $(_smb_classify_netns) -j "$1" list 2>/dev/null |
		grep -o "\"$1\":\"[^\" ]*\"" | cut -d'"' -f4
}

# The classes of "class list", for "class del".
_smb_classify_qos_classes()
{
	# shellcheck disable=SC2046
	smb-classify $(_smb_classify_netns) -j class list 2>/dev/null |
		grep -o '"class":[0-9]*' | cut -d: -f2
}

# The words of "class set CLASS ..." not given yet ($@: those given).
_smb_classify_qos_words()
{
	local w g left=""
	for w in reservation-iops reservation-bytes limit-iops limit-bytes \
		burst scope; do
		for g in "$@"; do
			[[ $g == "$w" ]] && continue 2
		done
		left+="$w "
	done
	echo "$left"
}

# The ksmbd tracepoints, for "trace EVENT...".
_smb_classify_events()
{
	local d
	for d in /sys/kernel/tracing/events/ksmbd/ksmbd_*/; do
		[[ -d $d ]] && basename "$d"
	done
}

_smb_classify()
{
	local cur prev words=() i cmd="" sub=""
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	local opts="-j --json -p --pretty -n --netns -c --count -o --output
		--dry-run -d --debug -V --version -h --help"

	case $prev in
	-n|--netns)
		COMPREPLY=( $(compgen -W "$(ip netns list 2>/dev/null | cut -d' ' -f1)" -- "$cur") )
		return ;;
	-o|--output)
		COMPREPLY=( $(compgen -W "text json openmetrics kernel" -- "$cur") )
		return ;;
	-c|--count)
		return ;;
	esac
	for (( i = 1; i < COMP_CWORD; i++ )); do
		case ${COMP_WORDS[i]} in
		-n|--netns|-o|--output|-c|--count) (( i++ )) ;;
		-*) ;;
		*) words+=("${COMP_WORDS[i]}") ;;
		esac
	done
	cmd=${words[0]:-}
	sub=${words[1]:-}
	if [[ $cur == -* ]]; then
		COMPREPLY=( $(compgen -W "$opts" -- "$cur") )
		return
	fi
	case ${#words[@]} in
	0)
		COMPREPLY=( $(compgen -W "load replace unload status clients prefix
			policy user share class apply dump trace help" -- "$cur") )
		return ;;
	1)
		case $cmd in
		prefix|user|share) COMPREPLY=( $(compgen -W "add del list help" -- "$cur") ) ;;
		policy) COMPREPLY=( $(compgen -W "set del show help" -- "$cur") ) ;;
		class) COMPREPLY=( $(compgen -W "set del list help" -- "$cur") ) ;;
		load|replace|apply) COMPREPLY=( $(compgen -f -- "$cur") ) ;;
		trace) COMPREPLY=( $(compgen -W "$(_smb_classify_events) filter" -- "$cur") ) ;;
		esac
		return ;;
	esac
	case $cmd/$sub in
	prefix/del*)
		(( ${#words[@]} == 2 )) &&
			COMPREPLY=( $(compgen -W "$(_smb_classify_prefixes)" -- "$cur") ) ;;
	user/del*|share/del*)
		(( ${#words[@]} == 2 )) &&
			COMPREPLY=( $(compgen -W "$(_smb_classify_names "$cmd")" -- "$cur") ) ;;
	prefix/add|user/add|share/add)
		if (( ${#words[@]} == 3 )); then
			COMPREPLY=( $(compgen -W "$(_smb_classify_classes | sort -un)" -- "$cur") )
		elif (( ${#words[@]} > 3 )) && [[ $prev != weight ]]; then
			COMPREPLY=( $(compgen -W "weight per-peer" -- "$cur") )
		fi ;;
	policy/set|policy/del*)
		if (( ${#words[@]} == 2 )); then
			COMPREPLY=( $(compgen -W "$(_smb_classify_classes | sort -un)" -- "$cur") )
		elif [[ $sub == set && $prev != *-min ]]; then
			COMPREPLY=( $(compgen -W "splice-min unbound-min" -- "$cur") )
		elif [[ $prev == *-min ]]; then
			COMPREPLY=( $(compgen -W "off 4K 64K 256K 1M" -- "$cur") )
		fi ;;
	class/set)
		if (( ${#words[@]} == 2 )); then
			COMPREPLY=( $(compgen -W "$(_smb_classify_classes | sort -un)" -- "$cur") )
		else
			case $prev in
			reservation-iops|limit-iops) COMPREPLY=( $(compgen -W "100 1000 10000" -- "$cur") ) ;;
			reservation-bytes|limit-bytes) COMPREPLY=( $(compgen -W "1M 10M 20M 100M 1G" -- "$cur") ) ;;
			burst) COMPREPLY=( $(compgen -W "100 250 500 1000" -- "$cur") ) ;;
			scope) COMPREPLY=( $(compgen -W "dedicated aggregated" -- "$cur") ) ;;
			*) (( ${#words[@]} % 2 == 1 )) &&
				COMPREPLY=( $(compgen -W "$(_smb_classify_qos_words "${words[@]:3}")" -- "$cur") ) ;;
			esac
		fi ;;
	class/del*)
		(( ${#words[@]} == 2 )) &&
			COMPREPLY=( $(compgen -W "$(_smb_classify_qos_classes)" -- "$cur") ) ;;
	load/*|replace/*)
		COMPREPLY=( $(compgen -W "max-inflight" -- "$cur") ) ;;
	trace/*)
		COMPREPLY=( $(compgen -W "$(_smb_classify_events) filter" -- "$cur") ) ;;
	esac
}
complete -F _smb_classify smb-classify
