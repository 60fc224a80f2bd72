/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * memload: a memory-demand NF for the cost model. Every packet does one
 * read-modify-write of a random 64-byte line in an array of M bytes (the
 * ml_area map, sized with --map-size ml_area=M/64), then swaps the MAC
 * addresses and is sent on. A write, so that neither compiler can drop it.
 */
#include <xnf/nf.h>
#include "memload.h"

XNF_MAP_ARRAY(ml_area, struct ml_line, ML_DEFAULT_LINES);
XNF_MAP_ARRAY(ml_config, __u32, ML_NSETTINGS);

static __always_inline void ml_touch_random_line(void)
{
	__u32 slot = ML_SETTING_LINES, index, *lines = xnf_map_lookup(&ml_config, &slot);
	struct ml_line *line;

	if (!lines || !*lines)
		return;
	index = xnf_random_u32() % *lines;
	line = xnf_map_lookup(&ml_area, &index);
	if (line)
		line->word[0]++;
}

static __always_inline xnf_verdict memload(struct xnf_pkt *pkt)
{
	struct ethhdr *eth = pkt->data;

	if ((void *)(eth + 1) > pkt->data_end)
		return XNF_DROP_MALFORMED;
	ml_touch_random_line();
	xnf_swap_macs(eth);
	return xnf_forward(pkt);
}
XNF_DEFINE_NF(memload);
