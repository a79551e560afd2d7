// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The prefix classifier with max_inflight 1 and a watchdog of 1 s
 * (timeout_ms, its least): see prefix_inflight.bpf.h.
 */
#define PREFIX_MAX_INFLIGHT	1
#define PREFIX_TIMEOUT_MS	1000
#define PREFIX_OPS_NAME		prefix_mi1t
#include "prefix_inflight.bpf.h"
