/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The packet as an NF sees it: a bounds-checked window onto the frame. */
#ifndef XNF_PKT_H
#define XNF_PKT_H

#include <xnf/common.h>

/* Room every path keeps in front of a received frame for headers an NF pushes (xnf/frame_start.h): XDP's
 * XDP_PACKET_HEADROOM, and the same in the user-space runtime's frames. */
#define XNF_PKT_HEADROOM 256

struct xnf_pkt {
	void *data;
	void *data_end;
#ifdef XNF_TARGET_BPF
	struct xdp_md *ctx;
#else
	__u32 ingress_port;
	__u32 rx_queue;
	void *frame_start; /* the buffer's first byte: data may move back to it, no further (NULL: not at all) */
#endif
};

#ifdef XNF_TARGET_BPF
/* The packet of an XDP context. */
static __always_inline struct xnf_pkt xnf_pkt_of(struct xdp_md *ctx)
{
	struct xnf_pkt pkt = {
		.data = (void *)(long)ctx->data,
		.data_end = (void *)(long)ctx->data_end,
		.ctx = ctx,
	};

	return pkt;
}
#endif

static __always_inline __u32 xnf_pkt_len(const struct xnf_pkt *pkt)
{
	return (__u32)((char *)pkt->data_end - (char *)pkt->data);
}

/*
 * The frame's bounds read afresh. In BPF they come straight from the context,
 * so code reached from many paths (a bpf_loop callback) starts from one
 * verifier state instead of one per path; natively they are the same fields.
 */
static __always_inline void xnf_pkt_bounds(const struct xnf_pkt *pkt, void **data, void **data_end)
{
#ifdef XNF_TARGET_BPF
	*data = (void *)(long)pkt->ctx->data;
	*data_end = (void *)(long)pkt->ctx->data_end;
#else
	*data = pkt->data;
	*data_end = pkt->data_end;
#endif
}

#endif /* XNF_PKT_H */
