/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * macswap's work without its transmit: swaps the MACs, then drops. A yardstick
 * for forwarding benchmarks: it receives and touches every frame as macswap
 * does (so the frame's cache line moves to the worker's core and back to the
 * receiving core when the frame is reused), and sends nothing.
 */
#include <xnf/nf.h>

static __always_inline xnf_verdict swap_drop(struct xnf_pkt *pkt)
{
	struct ethhdr *eth = pkt->data;

	if ((void *)(eth + 1) > pkt->data_end)
		return XNF_DROP_MALFORMED;
	xnf_swap_macs(eth);
	return XNF_DROP;
}
XNF_DEFINE_NF(swap_drop);
