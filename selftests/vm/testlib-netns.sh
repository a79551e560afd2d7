# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers of the tests whose clients live in another network namespace
# (tests/51-netns-veth.sh, tests/52-netns-del-read.sh), on top of lib.sh
# and testlib-sched.sh: a netns joined to the initial one by a veth pair
# (the traffic stays inside the VM), smbclient run in it, and cleanup.
# 6.12 ksmbd serves the initial netns only (/proc/net/ksmbd_sched
# "serves"), so the server stays there and the clients move.
# Source after testlib-sched.sh.

NETNS_NAMES=()
NETNS_HOST_DEVS=()

# netns_veth NS HOSTDEV NSDEV HOSTADDR/LEN NSADDR/LEN [HOST6/LEN NS6/LEN]:
# a new netns NS with lo up and NSDEV, the peer of HOSTDEV in the
# initial netns, both up with the addresses given (IPv6 without DAD, so
# they are usable at once).  Then waits until ksmbd listens on HOSTDEV:
# it opens one listener per interface when the interface comes up.
netns_veth() {
	local ns=$1 hd=$2 nd=$3
	ip netns add "$ns"
	NETNS_NAMES+=("$ns")
	ip link add "$hd" type veth peer name "$nd" netns "$ns"
	NETNS_HOST_DEVS+=("$hd")
	ip addr add "$4" dev "$hd"
	ip -n "$ns" addr add "$5" dev "$nd"
	if [[ -n ${6:-} ]]; then
		ip addr add "$6" dev "$hd" nodad
		ip -n "$ns" addr add "$7" dev "$nd" nodad
	fi
	ip -n "$ns" link set lo up
	ip -n "$ns" link set "$nd" up
	ip link set "$hd" up
	if ! vm_poll 30 netns_listening "$hd"; then
		echo "FAIL: ksmbd does not listen on $hd after 30 s"
		return 1
	fi
}

# netns_listening DEV: some socket listens on TCP port 445 bound to DEV.
netns_listening() {
	[[ -n $(ss -Hltn dev "$1" '( sport = :445 )' 2>/dev/null) ]]
}

# netns_dev_gone DEV: no interface DEV in the initial netns (a veth
# disappears with its peer's netns).
netns_dev_gone() { ! ip link show "$1" >/dev/null 2>&1; }

# netns_smbclient NS DEST CMD...: one unsigned smbclient session from NS
# to //DEST/share running CMD (smbclient -c).
netns_smbclient() {
	local ns=$1 dest=$2
	shift 2
	ip netns exec "$ns" smbclient "//$dest/$SMB_SHARE" "${sched_auth[@]}" \
		-m SMB3 --option='client signing = if_required' -c "$*"
}

# netns_cleanup: delete the test's namespaces (their processes first)
# and the host ends of their veth pairs.  Safe to call twice.
netns_cleanup() {
	local ns d p
	for ns in "${NETNS_NAMES[@]}"; do
		[[ -e /run/netns/$ns ]] || continue
		for p in $(ip netns pids "$ns" 2>/dev/null); do
			kill -KILL "$p" 2>/dev/null || true
		done
		smb-classify -n "$ns" unload >/dev/null 2>&1 || true
		ip netns del "$ns" 2>/dev/null || true
	done
	for d in "${NETNS_HOST_DEVS[@]}"; do
		ip link del "$d" 2>/dev/null || true
	done
	NETNS_NAMES=()
	NETNS_HOST_DEVS=()
	return 0
}
