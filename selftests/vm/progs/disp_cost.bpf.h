/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* Shared by progs/disp_cost.bpf.c and its loader, dispcost.c. */
#ifndef DISP_COST_H
#define DISP_COST_H

#define DC_SLOTS	4
/* 8 exact buckets below 8 ns, then 8 per power of two up to 2^40 ns */
#define DC_BUCKETS	304

struct dc_stat {
	__u64 calls;
	__u64 ns;
	__u64 hist[DC_BUCKETS];
};

#endif
