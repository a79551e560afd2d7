# SPDX-License-Identifier: GPL-2.0
#
# ksmbd-bpf-sched: BPF-controlled scheduling for ksmbd.
#
#   make deps          install build and test dependencies (apt, as root)
#   make deps-build    only those of the build (make module, tools, deb)
#   make kernel        extract linux-source-6.12, apply kernel/, build (cached)
#   make module        ksmbd.ko for Debian's 6.12 kernel (out of tree, cached)
#   make tools         libbpf, bpftool, the BPF classifier and smb-classify
#   make deb           the DKMS package (ksmbd.ko) and the smb-classify package
#                      (debian/, dpkg-buildpackage -b; lintian), in
#                      $(CACHE_DIR)/deb
#   make check         the repository's words (scripts/check-words.sh), host
#                      unit tests (cmocka), the dispatcher's KUnit suite on
#                      UML, kernel/patches apply, kernel/deltas derive from
#                      kernel/fs; seconds once built
#   make kunit         the dispatcher's KUnit suite alone (scripts/kunit.sh;
#                      the first run builds a UML kernel, minutes)
#   make test          check + the VM suite (real ksmbd, real SMB clients) on
#                      Debian's kernel with our ksmbd.ko (VM_KERNEL=tiny or
#                      KDEBUG=1: the in-tree kernel, ksmbd built in); the
#                      KUnit suite runs at nice 19 beside the VM suite
#   make check-host    check without the KUnit suite
#   make test-debug    the VM suite on the KASAN/lockdep kernel (KDEBUG=1)
#   make demo          boot the VM and show classification of real clients
#   make bench         A/B benchmarks in one VM boot each (ratios)
#   make stress        bounded stress runs in the VM (cost shares, server cost, WRITE flood,
#                      fault injection, smbtorture wide and lease)
#   make checkpatch    checkpatch.pl --strict over kernel/
#   make kernel-series the upstream-style patch series (BUILD_EACH=1 builds
#                      every step, CHECKPATCH=1 checks every patch)
#   make install       install smb-classify, its man pages, bash completion,
#                      smb-classify.service and an example config if there
#                      is none (PREFIX=/usr/local)
#   make clean         remove build outputs in the checkout
#   make help          this text
#
# Build outputs of the kernel, libbpf and bpftool live in $(CACHE_DIR),
# outside the checkout; ccache sits behind the compiler.

CACHE_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/ksmbd-bpf-sched
export CACHE_DIR

TOP        := $(abspath .)
KSRC       := $(CACHE_DIR)/src/linux
KOBJ       := $(CACHE_DIR)/build
BZIMAGE    := $(KOBJ)/arch/x86/boot/bzImage
LIBBPF_DIR := $(CACHE_DIR)/libbpf
BPFTOOL    := $(CACHE_DIR)/bpftool/bpftool
CLANG      ?= clang-19
export LIBBPF_DIR BPFTOOL CLANG

# The VM's kernel: stock = Debian's linux-image-6.12.117+deb12-amd64 with
# our ksmbd.ko (make module); tiny = the in-tree tinyconfig kernel, ksmbd
# built in (make kernel), always with KDEBUG=1 (KASAN, lockdep).
ifneq ($(KDEBUG),)
VM_KERNEL ?= tiny
else
VM_KERNEL ?= stock
endif
export VM_KERNEL
ifeq ($(VM_KERNEL),tiny)
VM_KERNEL_DEP := kernel
DEMO_KERNEL_DEP := kernel
else
VM_KERNEL_DEP := vm-stock
DEMO_KERNEL_DEP := module
endif

# Debian packages the build needs (make module, tools, deb: debian/control's
# Build-Depends and what make module and deb run) ...
BUILD_DEPS := linux-source-6.12 build-essential bc bison flex libelf-dev \
	libssl-dev dwarves ccache clang-19 llvm-19 zlib1g-dev libcap-dev \
	pkg-config rsync cpio xz-utils kmod git python3 libtracefs-dev \
	libtraceevent-dev python3-docutils debhelper dh-dkms dkms lintian
# ... and those only the tests need: the VM and what runs in it (the guest
# shares the host's root filesystem), the clients, the storage model,
# cmocka.
TEST_DEPS := qemu-system-x86 ksmbd-tools smbclient cifs-utils fio \
	libcmocka-dev iproute2 procps jq samba-testsuite python3-impacket \
	python3-prometheus-client systemd libfuse3-dev fuse3

.PHONY: all deps deps-build kernel kernel-src module deb vm-stock libbpf tools bpf check check-host \
	test vmtest demo bench help clean install checkpatch kernel-series \
	test-debug stress kunit

all: kernel tools

help:
	@sed -n '3,/^$$/p' Makefile | sed -n '/^#/s/^# \{0,1\}//p'

# install_deps PACKAGES: apt-get install those not installed yet (as root).
define install_deps
	@missing=$$(for p in $(1); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | \
		grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "[deps] installing:" $$missing; \
		if [ "$$(id -u)" != 0 ]; then echo "[deps] run as root (apt-get)"; exit 1; fi; \
		apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends $$missing >/dev/null; \
	fi
endef

deps:
	$(call install_deps,$(BUILD_DEPS) $(TEST_DEPS))

deps-build:
	$(call install_deps,$(BUILD_DEPS))

kernel-src: deps-build
	scripts/kernel.sh apply

kernel: deps-build
	scripts/kernel.sh build

# Debian's headers/kbuild/image are fetched with apt-get download and
# unpacked into $(CACHE_DIR)/debian; nothing is installed on the host.
module: deps-build libbpf
	scripts/module.sh all

# make module + the packages; vm-stock also the DKMS tarballs and the 0.2
# packages of the package test (91-packages).
deb: module tools
	scripts/deb.sh

vm-stock: module tools
	scripts/deb.sh prebuilt

libbpf: deps-build
	scripts/kernel.sh tools

tools: libbpf
	$(MAKE) -C tools/smb-classify

bpf: tools

# Paths check-words.sh skips (extended regex); empty: the whole tree.
CHECK_WORDS_EXCLUDE ?=

check: check-host
	scripts/kunit.sh

# check without the KUnit suite (make test runs that beside the VM suite).
check-host: deps tools
	CHECK_WORDS_EXCLUDE='$(CHECK_WORDS_EXCLUDE)' scripts/check-words.sh
	$(MAKE) -C selftests/unit run
	$(MAKE) -C tools/smb-classify verify-unit
	scripts/kernel.sh check-patches
	scripts/kernel-series.sh check
	scripts/abi-compare.sh

kunit: deps-build
	scripts/kunit.sh

# On the stock kernel make deps installed every dependency of the tests:
# a test that skips fails (VM_SKIP_FAILS).  The suite is shared among
# VM_JOBS boots of the VM that run at the same time (selftests/vm/README.md,
# run-suite): 2 on a machine of 2 CPUs or more, where one TCG guest leaves
# part of the host idle.
VM_JOBS ?= $(if $(filter 1,$(shell nproc)),1,2)
vmtest: deps $(VM_KERNEL_DEP) tools
	$(MAKE) -C selftests/vm
	VM_JOBS=$(VM_JOBS) VM_SKIP_FAILS=$(if $(filter stock,$(VM_KERNEL)),1,0) selftests/vm/run-suite

# make test: check-host, then the KUnit suite at nice 19 beside the VM
# suite.  From an empty cache the KUnit suite is mostly the build of its
# UML kernel (about 3 minutes on 2 cores alone); at nice 19 it takes
# little from the guests, and from an empty cache it ended 1-2 minutes
# after the VM suite.  Its output is
# printed after the VM suite's, from $(CACHE_DIR)/kunit-test.log; make
# test fails if either fails.  The tree is patched (kernel-src) first:
# the two must not patch it at the same time.
test: check-host kernel-src
	@log='$(CACHE_DIR)/kunit-test.log'; \
	nice -n 19 scripts/kunit.sh >"$$log" 2>&1 & kpid=$$!; \
	rc=0; $(MAKE) vmtest || rc=$$?; \
	krc=0; wait $$kpid || krc=$$?; \
	echo "== KUnit (scripts/kunit.sh), run beside the VM suite: exit $$krc"; \
	if [ $$krc = 0 ]; then grep -E '^\[[0-9:]+\] (Testing complete|Elapsed time)' "$$log"; \
	else tail -n 60 "$$log"; fi; \
	echo "== make test: VM suite exit $$rc, KUnit exit $$krc"; \
	[ $$rc = 0 ] && [ $$krc = 0 ]

# The whole VM suite on the debug kernel (kernel/config/debug.config:
# KASAN, lockdep, list and object debugging, hung tasks, fault injection),
# built in $(CACHE_DIR)/build-debug; timeouts scaled (TEST_TIMEOUT_SCALE).
test-debug: deps tools
	KDEBUG=1 scripts/kernel.sh build
	$(MAKE) -C selftests/vm
	KDEBUG=1 VM_KERNEL=tiny VM_JOBS=1 selftests/vm/run-suite

# Stress runs, each bounded in count and time, on loopback in the VM; too
# long for make test.  STRESS="79-write-flood ..." picks some.
stress: deps $(DEMO_KERNEL_DEP) tools
	$(MAKE) -C selftests/vm
	selftests/vm/run-suite $(or $(addprefix selftests/vm/stress/,$(addsuffix .sh,$(STRESS))),selftests/vm/stress/*.sh)

demo: deps $(DEMO_KERNEL_DEP) tools
	selftests/vm/run selftests/vm/demo.sh

# Every bench runs on Debian's kernel with our ksmbd.ko (what admins run;
# FUSE for the dispatch benches' storage model; the recorded READ
# numbers are of it too).  VM_KERNEL=tiny is possible for read-splice.sh
# and for selftests/bench/run with BENCH_STORAGE=tmpfs.
bench: deps module tools
	$(MAKE) -C selftests/vm
	VM_KERNEL=stock selftests/bench/run
	VM_KERNEL=stock selftests/bench/cost-clients.sh
	VM_KERNEL=stock selftests/bench/read-splice.sh
	VM_KERNEL=stock selftests/bench/hostile.sh

checkpatch: kernel-src
	scripts/checkpatch.sh

kernel-series: kernel-src
	scripts/kernel-series.sh

install: tools
	$(MAKE) -C tools/smb-classify install

clean:
	$(MAKE) -C tools/smb-classify clean
	$(MAKE) -C selftests/unit clean
	$(MAKE) -C selftests/vm clean
