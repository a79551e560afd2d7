# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
# bash completion for smb-classify(8): commands, options, and from the
# running state the classes (policy del/set, prefix add) and the prefixes
# (prefix del), and the ksmbd events (trace).

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

# The classes of the running policy: prefix list and policy show.
_smb_classify_classes()
{
	# shellcheck disable=SC2046
	smb-classify $(_smb_classify_netns) -j prefix list 2>/dev/null |
		grep -o '"class":[0-9]*' | cut -d: -f2
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
			policy apply dump trace help" -- "$cur") )
		return ;;
	1)
		case $cmd in
		prefix) COMPREPLY=( $(compgen -W "add del list help" -- "$cur") ) ;;
		policy) COMPREPLY=( $(compgen -W "set del show help" -- "$cur") ) ;;
		load|replace|apply) COMPREPLY=( $(compgen -f -- "$cur") ) ;;
		trace) COMPREPLY=( $(compgen -W "$(_smb_classify_events) filter" -- "$cur") ) ;;
		esac
		return ;;
	esac
	case $cmd/$sub in
	prefix/del*)
		(( ${#words[@]} == 2 )) &&
			COMPREPLY=( $(compgen -W "$(_smb_classify_prefixes)" -- "$cur") ) ;;
	prefix/add)
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
	load/*|replace/*)
		COMPREPLY=( $(compgen -W "max-inflight" -- "$cur") ) ;;
	trace/*)
		COMPREPLY=( $(compgen -W "$(_smb_classify_events) filter" -- "$cur") ) ;;
	esac
}
complete -F _smb_classify smb-classify
