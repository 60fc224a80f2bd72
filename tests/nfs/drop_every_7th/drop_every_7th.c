/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Injected loss with a known answer: swaps MACs and sends back every frame
 * but each 7th, which it drops. The count is per CPU: with one generator
 * thread every frame meets the same counter, so N frames lose exactly N / 7.
 */
#include <xnf/nf.h>

#define EVERY 7

XNF_MAP_PERCPU_ARRAY(seen, __u64, 1);

static __always_inline xnf_verdict drop_every_7th(struct xnf_pkt *pkt)
{
	struct ethhdr *eth = pkt->data;
	__u32 zero = 0;
	__u64 *count = xnf_map_lookup(&seen, &zero);

	if ((void *)(eth + 1) > pkt->data_end || !count)
		return XNF_DROP_MALFORMED;
	if (++*count % EVERY == 0)
		return XNF_DROP;
	xnf_swap_macs(eth);
	return XNF_TX;
}
XNF_DEFINE_NF(drop_every_7th);
