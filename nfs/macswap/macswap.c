/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* macswap: swaps source and destination MAC and sends the frame back out. */
#include <xnf/nf.h>

static __always_inline xnf_verdict macswap(struct xnf_pkt *pkt)
{
	struct ethhdr *eth = pkt->data;

	if ((void *)(eth + 1) > pkt->data_end)
		return XNF_DROP_MALFORMED;
	xnf_swap_macs(eth);
	return XNF_TX;
}
XNF_DEFINE_NF(macswap);
