/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The packet as an NF sees it: a bounds-checked window onto the frame. */
#ifndef XNF_PKT_H
#define XNF_PKT_H

#include <xnf/common.h>

/* Room every path keeps in front of a received frame for headers an NF pushes (xnf/frame_start.h): XDP's
 * XDP_PACKET_HEADROOM, and the same in the user-space runtime's frames. */
#define XNF_PKT_HEADROOM 256

#ifdef XNF_TARGET_BPF
/*
 * The kernel hook the NF's kernel build runs at: XDP (the driver's receive, a frame in a buffer) or, built
 * with XNF_HOOK_TC, tc ingress (the skb layer: the frame keeps its skb, its checksum state and, for a GSO
 * segment of up to 64 KiB, its size). Both contexts have data, data_end and ingress_ifindex, which is all an NF
 * reads of them.
 */
#ifdef XNF_HOOK_TC
typedef struct __sk_buff xnf_ctx;
#else
typedef struct xdp_md xnf_ctx;
#endif
#endif

/* The buffers of a frame after its first, natively (an AF_XDP frame of several descriptors): a frame has at most
 * as many as an skb may have fragments (MAX_SKB_FRAGS). */
#define XNF_MAX_FRAGS 17
struct xnf_frags {
	__u32 n;
	struct xnf_frag {
		void *data;
		__u32 len;
	} frag[XNF_MAX_FRAGS];
};

struct xnf_pkt {
	void *data;
	void *data_end;
	/* Bytes of the frame after data_end that the NF cannot read through data: at tc outside the skb's linear
	 * part (a GSO payload), at XDP and natively in the further buffers of a multi-buffer frame (a jumbo
	 * frame: xnf/frame_bytes.h reads them). */
	__u32 beyond;
#ifdef XNF_TARGET_BPF
	xnf_ctx *ctx;
#ifdef XNF_HOOK_TC
	/* Changes to what the frame's TCP or UDP checksum covers (xnf/csum.h), summed as the NF reports them and
	 * applied through the kernel's helpers when it returns: the skb's checksum state decides how. */
	__u32 csum_pseudo;  /* changes to the pseudo-header (addresses) */
	__u32 csum_fields;  /* changes to fields of the segment itself (ports) */
	__u16 csum_offset;  /* the checksum field's offset in the frame; 0: nothing to apply */
	__u16 csum_flags;   /* BPF_F_MARK_MANGLED_0 for UDP, BPF_F_IPV6 for IPv6 */
	/* A CHECKSUM_COMPLETE skb (a NIC's, which sums every frame it receives) carries the sum of its bytes after
	 * the Ethernet header: what the NF writes there itself is added into it when it returns (xnf/l4_csum.h). */
	__u32 complete;
	__u32 sum_before;   /* the readable bytes' sum when the NF got the frame, or last moved its start */
#endif
#else
	__u32 ingress_port;
	__u32 rx_queue;
	void *frame_start; /* the buffer's first byte: data may move back to it, no further (NULL: not at all) */
	const struct xnf_frags *frags; /* where the beyond bytes are; NULL when there are none */
#endif
};

#ifdef XNF_TARGET_BPF
#ifndef XNF_HOOK_TC
/* Written by the loader before load (xnf/nf.h): whether the program takes multi-buffer frames is in it. */
extern const volatile struct xnf_config xnf_cfg;

/* The frame's whole length. Only a program loaded to take multi-buffer frames can meet one: any other's frame is
 * its first buffer, and needs no helper call to say so. */
static __always_inline __u32 xnf__xdp_frame_len(struct xdp_md *ctx)
{
	if (xnf_cfg.frags)
		return (__u32)bpf_xdp_get_buff_len(ctx);
	return (__u32)(ctx->data_end - ctx->data);
}
#endif

/* The packet of a hook's context. */
static __always_inline void xnf_pkt_init(struct xnf_pkt *pkt, xnf_ctx *ctx)
{
	pkt->data = (void *)(long)ctx->data;
	pkt->data_end = (void *)(long)ctx->data_end;
	pkt->ctx = ctx;
#ifndef XNF_HOOK_TC
	pkt->beyond = xnf__xdp_frame_len(ctx) - (__u32)(pkt->data_end - pkt->data);
#else
	pkt->beyond = ctx->len - (__u32)(pkt->data_end - pkt->data);
	pkt->csum_pseudo = 0;
	pkt->csum_fields = 0;
	pkt->csum_offset = 0;
	pkt->csum_flags = 0;
	/* bpf_csum_update answers only for a CHECKSUM_COMPLETE skb; adding 0 changes nothing. */
	pkt->complete = bpf_csum_update(ctx, 0) >= 0;
	pkt->sum_before = 0;
#endif
}
#endif

/* The bytes readable through data: the first buffer of a multi-buffer frame. */
static __always_inline __u32 xnf_pkt_len(const struct xnf_pkt *pkt)
{
	return (__u32)((char *)pkt->data_end - (char *)pkt->data);
}

/* The frame's whole length, every buffer of it (at tc: the skb's, a GSO segment's whole payload). */
static __always_inline __u32 xnf_frame_len(const struct xnf_pkt *pkt)
{
	__u32 len = xnf_pkt_len(pkt) + pkt->beyond;

	/* Cut to 32 bits here, where the verifier sees it: the compiler would turn len - (p - data) into
	 * len + data - p and cut after the sum, and pointer math with a value of no lower bound is refused. */
	xnf_barrier_var(len);
	return len;
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
