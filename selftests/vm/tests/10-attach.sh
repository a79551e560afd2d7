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
vm_finish
