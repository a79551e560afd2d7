// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The prefix classifier with max_inflight 2 and a watchdog of 3 s
 * (timeout_ms): see prefix_inflight.bpf.h.
 */
#define PREFIX_MAX_INFLIGHT	2
#define PREFIX_TIMEOUT_MS	3000
#define PREFIX_OPS_NAME		prefix_mi2t
#include "prefix_inflight.bpf.h"
