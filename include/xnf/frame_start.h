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
#ifdef XNF_HOOK_TC
#include <xnf/l4_csum.h>
#endif

/*
 * Moves the start of the frame by delta bytes: a negative delta makes room for -delta bytes in front (their
 * content is undefined until written), a positive one takes the first delta bytes off. 0, or -1 with the frame
 * unchanged when the room in front (at least XNF_PKT_HEADROOM on every path) is too small or less than an
 * Ethernet header would remain. pkt's bounds are fresh afterwards; every pointer into the frame taken before the
 * call is stale (the verifier insists on it), so parse again from pkt->data.
 *
 * At tc the frame may be a GSO segment (up to 64 KiB that the kernel cuts into frames after the NF): headers
 * pushed or taken off in front would be copied unchanged into every frame it becomes, lengths and all, so the
 * move is refused (-1) and the NF says what becomes of the segment. A CHECKSUM_COMPLETE skb's sum (a NIC's; veths
 * make none) is not carried across a move: run an NF that moves frames from such NICs in XDP.
 */
/*
 * Whether the frame is a segment the kernel cuts into frames after the NF: at tc, a GSO skb (a local stack's TCP
 * segment of up to 64 KiB). Its start cannot move (xnf_frame_move_start refuses): headers pushed in front would be
 * copied unchanged, lengths and all, into every frame it becomes. Never natively or in XDP, where a frame is a
 * frame.
 */
static __always_inline int xnf_frame_is_segment(const struct xnf_pkt *pkt)
{
#ifdef XNF_HOOK_TC
	return pkt->ctx->gso_size != 0;
#else
	return 0;
#endif
}

#ifdef XNF_HOOK_TC
/* Takes the first delta bytes off: bpf_skb_adjust_room() removes bytes after the Ethernet header, so the bytes
 * that become the new Ethernet header are read first and written over the old one. */
static __always_inline int xnf__skb_pull_front(xnf_ctx *ctx, int delta)
{
	__u8 eth[ETH_HLEN];

	if (bpf_skb_load_bytes(ctx, (__u32)delta, eth, ETH_HLEN) ||
	    bpf_skb_adjust_room(ctx, -delta, BPF_ADJ_ROOM_MAC, 0))
		return -1;
	return bpf_skb_store_bytes(ctx, 0, eth, ETH_HLEN, 0) ? -1 : 0;
}
#endif

static __always_inline int xnf_frame_move_start(struct xnf_pkt *pkt, int delta)
{
#ifdef XNF_HOOK_TC
	xnf_ctx *ctx = pkt->ctx;

	if (ctx->gso_size || (delta > 0 && ctx->len < (__u32)delta + ETH_HLEN) || xnf__l4_csum_apply(pkt))
		return -1;
	if (delta < 0 && bpf_skb_change_head(ctx, (__u32)-delta, 0))
		return -1;
	if (delta > 0 && xnf__skb_pull_front(ctx, delta))
		return -1;
	xnf_pkt_init(pkt, ctx);   /* the helpers above kept a complete skb's sum: count from here */
	xnf__complete_sum_start(pkt);
	return 0;
#elif defined(XNF_TARGET_BPF)
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
