#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel's attach semantics of ksmbd_sched_ops through libbpf alone:
# -EBUSY for a second link in a netns, link update, validation of the ops
# data, per-netns links, close detaches, BPF_LINK_DETACH frees the netns
# (an update of the detached link: -ENOLINK), a struct_ops map without a
# link is refused (-EOPNOTSUPP), so are a sleepable program (-EINVAL) and
# one writing to its context (verifier, -EACCES), a netns exiting with
# its link attached.  See attach_test.c.
# Then, through the loader: a task with every capability but
# CAP_NET_ADMIN passes the BPF core's own checks (CAP_BPF, CAP_SYS_ADMIN)
# and is refused by ksmbd, which wants CAP_NET_ADMIN over the netns
# (ns_capable(net->user_ns, ...), in reg() and update()): its load fails
# with EPERM and attaches nothing; its replace fails with EPERM and the
# attached program, name and link id, stays.
# Then a BPF token delegated into a user namespace (token_test.c): on
# Debian's kernel, with ksmbd a module, 6.12 gives a token no module BTF,
# so libbpf cannot load it (ESRCH); with ksmbd built in (VM_KERNEL=tiny), the
# attach to the initial netns fails with EPERM and the attach to a netns
# of the user namespace's own succeeds.
# vm-timeout: 180

set -euo pipefail
# shellcheck source=../lib.sh
source "${VM_DIR:?run me inside the VM: selftests/vm/run $0}/lib.sh"
# shellcheck source=../testlib-sched.sh
source "$VM_DIR/testlib-sched.sh"
sched_need_built
trap sched_cleanup EXIT

if "$SCHED_ATTACH_TEST"; then
	vm_pass "attach_test"
else
	vm_fail "attach_test (exit status $?)"
fi
vm_check "nothing attached after attach_test" test "$(sched_proc attached)" = 0

# ---- CAP_NET_ADMIN over the netns ------------------------------------------
# no_net_admin CMD...: CMD as root without CAP_NET_ADMIN in any set.
no_net_admin() {
	setpriv --inh-caps=-net_admin --ambient-caps=-net_admin \
		--bounding-set=-net_admin -- "$@"
}
vm_check "setpriv drops CAP_NET_ADMIN, keeps CAP_BPF and CAP_SYS_ADMIN" \
	no_net_admin sh -c '! capsh --has-p=cap_net_admin 2>/dev/null &&
		capsh --has-p=cap_bpf && capsh --has-p=cap_sys_admin'
rc=0
out=$(no_net_admin smb-classify -j load 2>&1) || rc=$?
echo "load without CAP_NET_ADMIN: exit $rc: $out"
vm_check "load without CAP_NET_ADMIN: refused, permission denied" \
	sched_jq '.error | test("permission denied")' "$out"
vm_check "load without CAP_NET_ADMIN: nothing attached" \
	test "$(sched_proc attached)" = 0 -a "$rc" != 0
smb-classify load >/dev/null
link=$(sched_proc link_id)
rc=0
out=$(no_net_admin smb-classify -j replace "$SCHED_CONST_OBJ" 2>&1) || rc=$?
echo "replace without CAP_NET_ADMIN: exit $rc: $out"
vm_check "replace without CAP_NET_ADMIN: refused, permission denied" \
	sched_jq '.error | test("permission denied")' "$out"
vm_check "replace without CAP_NET_ADMIN: smb_prefix stays, link id $link" \
	test "$(sched_proc name)" = smb_prefix -a "$(sched_proc link_id)" = "$link" -a "$rc" != 0
vm_check "replace with CAP_NET_ADMIN: const_class" \
	smb-classify replace "$SCHED_CONST_OBJ"
vm_check "... same link id" test "$(sched_proc name)" = const_class -a "$(sched_proc link_id)" = "$link"
smb-classify unload >/dev/null
vm_check "nothing attached before token_test" test "$(sched_proc attached)" = 0

# ---- a BPF token in a user namespace (token_test.c) -------------------------
if "$SCHED_TOKEN_TEST"; then
	vm_pass "token_test"
else
	vm_fail "token_test (exit status $?)"
fi
vm_check "nothing attached at the end" test "$(sched_proc attached)" = 0
vm_finish
