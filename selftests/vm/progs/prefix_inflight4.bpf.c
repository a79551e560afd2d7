// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* The prefix classifier with max_inflight 4: see prefix_inflight.bpf.h. */
#define PREFIX_MAX_INFLIGHT	4
#define PREFIX_OPS_NAME		prefix_mi4
#include "prefix_inflight.bpf.h"
