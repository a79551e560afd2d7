#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# smbtorture smb2.lease (leases on) on Debian's ksmbd.ko, ours with
# nothing attached and ours attached, compared by test name with the
# baseline: 90-smbtorture-wide with TEST_TORTURE_SUITES=smb2.lease.  On
# its own because, run after the other suites, the lease suite's session
# teardown crashes Debian's 6.12.117 ksmbd itself (see 90).
# vm-timeout: 3600

export TEST_TORTURE_SUITES=${TEST_TORTURE_SUITES:-smb2.lease}
exec "${VM_DIR:?run me inside the VM: selftests/vm/run $0}/stress/90-smbtorture-wide.sh"
