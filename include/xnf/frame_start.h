/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Moving the frame's start: room for headers pushed in front (a tunnel's encapsulation) or headers taken off
 * (its decapsulation), with the same limits on both paths.
 */
#ifndef XNF_FRAME_START_H
#define XNF_FRAME_START_H

#include <xnf/common.h>
#include <xnf/pkt.h>
#include <linux/if_ether.h>

/*
 * Moves the start of the frame by delta bytes: a negative delta makes room for -delta bytes in front (their
 * content is undefined until written), a positive one takes the first delta bytes off. 0, or -1 with the frame
 * unchanged when the room in front (at least XNF_PKT_HEADROOM on every path) is too small or less than an
 * Ethernet header would remain. pkt's bounds are fresh afterwards; every pointer into the frame taken before the
 * call is stale (the verifier insists on it), so parse again from pkt->data.
 */
static __always_inline int xnf_frame_move_start(struct xnf_pkt *pkt, int delta)
{
#ifdef XNF_TARGET_BPF
	if (bpf_xdp_adjust_head(pkt->ctx, delta))
		return -1;
	pkt->data = (void *)(long)pkt->ctx->data;
	pkt->data_end = (void *)(long)pkt->ctx->data_end;
	return 0;
#else
	char *start = (char *)pkt->data + delta;

	if (!pkt->frame_start || start < (char *)pkt->frame_start || (char *)pkt->data_end - start < ETH_HLEN)
		return -1;
	pkt->data = start;
	return 0;
#endif
}

#endif /* XNF_FRAME_START_H */
