/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Unfinished checksums, kernel side of the entry point (bpf_glue.h).
 *
 * A Linux stack that sends into a device offering checksum offload without
 * being hardware (a veth: every container's interface) leaves the TCP or UDP
 * checksum unfinished: the skb says CHECKSUM_PARTIAL, and the field holds
 * only the sum of the pseudo-header, for the "hardware" to complete. XDP
 * sees the bytes, not the flag. XDP_PASS keeps the skb and its flag; a frame
 * sent on with XDP_TX, a redirect or a copy into an AF_XDP socket loses
 * them, and its receiver drops it as corrupt.
 *
 * So, while the runtime says a port's peer may send such frames
 * (xnf_finish_csum), the entry point finishes the checksum before the NF
 * runs: an NF always sees whole checksums and may update them incrementally.
 * Where the frame keeps its skb afterwards (XDP_PASS; XDP_TX and redirects in
 * skb mode), the field is given back the pseudo-header's sum of the headers
 * as the NF left them: what the skb's flag promises whoever finishes it.
 *
 * A frame counts as unfinished when its field equals its pseudo-header's sum.
 * A whole checksum has that value once in 65,536 frames; finishing it then
 * computes the same value again, and giving it back restores it.
 */
#if !defined(XNF_INTERNAL_OK) && !defined(XNF__FROM_SDK)
#error "xnf/internal/ is xnf's own glue, not the NF API: include <xnf/nf.h>"
#endif
#ifndef XNF_CSUM_FINISH_H
#define XNF_CSUM_FINISH_H

/* Whether to look for unfinished checksums at all: set by the runtime from its port checks, and changed
 * while running when a peer's checksum offload changes. 0 costs one array load per frame. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 1);
} xnf_finish_csum SEC(".maps");

/* An unfinished segment, as one number for the summing function: its offset (its headers lie in the first page),
 * its length (up to 64 KiB: a jumbo frame's segment lies in further buffers too) and whether it is UDP. */
#define XNF__SEG_OFFSET_BITS 12 /* below XNF_CSUM_MAX_BYTES (4096) */
#define XNF__SEG_LEN_BITS 17
#define XNF__SEG_MAX_LEN ((1u << XNF__SEG_LEN_BITS) - 1)
#define XNF__SEG_UDP (1u << (XNF__SEG_OFFSET_BITS + XNF__SEG_LEN_BITS))

/* Where a TCP or UDP checksum lives and what it covers. */
struct xnf__l4_csum {
	__sum16 *field;
	__u32 l4_offset; /* from the frame's start */
	__u32 l4_len;
	__u32 pseudo;    /* the pseudo-header's sum, unfolded */
	__u8 udp;
};

/* 1 and *c for a TCP or UDP segment (not a later fragment) whose headers parse and that the summing loop
 * covers; 0 otherwise. */
static __always_inline int xnf__l4_csum_of(struct xnf_pkt *pkt, struct xnf__l4_csum *c)
{
	struct xnf_headers h;
	__u32 sum = 0, end;

	if (xnf_parse_headers(pkt, &h) < 0)
		return 0;
	if (h.udp)
		c->field = &h.udp->check;
	else if (h.tcp)
		c->field = &h.tcp->check;
	else
		return 0;
	c->udp = h.udp != NULL;
	c->l4_offset = (__u32)((char *)h.l4 - (char *)pkt->data);
	if (h.ip4) {
		end = bpf_ntohs(h.ip4->tot_len) + (__u32)((char *)h.ip4 - (char *)pkt->data);
		sum = xnf__sum_words32(sum, h.ip4->saddr);
		sum = xnf__sum_words32(sum, h.ip4->daddr);
	} else if (h.ip6) {
		end = bpf_ntohs(h.ip6->payload_len) + sizeof(*h.ip6) + (__u32)((char *)h.ip6 - (char *)pkt->data);
		for (int i = 0; i < 4; i++) {
			sum = xnf__sum_words32(sum, h.ip6->saddr.in6_u.u6_addr32[i]);
			sum = xnf__sum_words32(sum, h.ip6->daddr.in6_u.u6_addr32[i]);
		}
	} else {
		return 0;
	}
	c->l4_len = end - c->l4_offset;
	if (c->l4_offset >= XNF_CSUM_MAX_BYTES || c->l4_len > XNF__SEG_MAX_LEN)
		return 0; /* headers past a page, or longer than IP carries: not a segment any stack sends */
	c->pseudo = sum + bpf_htons((__u16)h.l4_proto) + bpf_htons((__u16)c->l4_len);
	return 1;
}

static __always_inline int xnf__finish_csum_on(void)
{
	__u32 zero = 0, *on = bpf_map_lookup_elem(&xnf_finish_csum, &zero);

	return on && *on;
}

/*
 * The frame's unfinished TCP or UDP segment, or 0 if it has none. The verifier checks each of these global
 * functions once on its own: inlined, the header layouts the parser can meet times the summing loop's ways
 * out would multiply the NF's states past the verifier's limit.
 */
XNF_VERIFIED_APART int xnf__unfinished_segment(struct xdp_md *ctx)
{
	struct xnf_pkt pkt;
	struct xnf__l4_csum c;

	if (!ctx)
		return 0;
	xnf_pkt_init(&pkt, ctx);
	if (!xnf__l4_csum_of(&pkt, &c) || *c.field != (__sum16)(__u16)~xnf_csum_fold(c.pseudo))
		return 0;
	return (int)(c.l4_offset | c.l4_len << XNF__SEG_OFFSET_BITS | (c.udp ? XNF__SEG_UDP : 0));
}

/*
 * Finishes it as the hardware would: the field holds the pseudo-header's sum, so the checksum is the
 * complement of the segment's sum, field included. Offset and length come in as plain numbers: the loop is
 * checked once. A UDP checksum that computes to zero is sent as all ones (RFC 768); arithmetic, not a branch
 * on the sum, which would make the verifier follow every partial sum.
 */
XNF_VERIFIED_APART int xnf__finish_segment(struct xdp_md *ctx, __u32 segment)
{
	__u32 offset = segment & (XNF_CSUM_MAX_BYTES - 1);
	__u32 len = (segment >> XNF__SEG_OFFSET_BITS) & XNF__SEG_MAX_LEN, udp = !!(segment & XNF__SEG_UDP), sum;
	__u8 *data, *data_end, *l4;
	__sum16 *field;
	__u16 folded;

	if (!ctx)
		return 0;
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	l4 = data + offset;
	field = (__sum16 *)(l4 + (udp ? offsetof(struct udphdr, check) : offsetof(struct tcphdr, check)));
	if ((void *)(field + 1) > (void *)data_end)
		return 0;
	/* A segment in the first buffer is summed in place; one that goes on into further buffers (a jumbo frame)
	 * chunk by chunk, through the kernel's helpers. */
	if (len <= XNF_CSUM_MAX_BYTES && l4 + len <= data_end)
		sum = xnf_csum_partial(l4, len, data_end, 0);
	else if (xnf__frame_sum_ctx(ctx, offset, len, 0, &sum))
		return 0;
	folded = xnf_csum_fold(sum);
	*field = (__sum16)(folded | (0xffffu * (udp & (((__u32)folded - 1) >> 31))));
	return 1;
}

/* The skb of a frame that was unfinished goes on with its CHECKSUM_PARTIAL flag: give the field back the
 * pseudo-header's sum of the headers as they are now. Global, as above. */
XNF_VERIFIED_APART int xnf__unfinish_csum(struct xdp_md *ctx)
{
	struct xnf_pkt pkt;
	struct xnf__l4_csum c;

	if (!ctx)
		return 0;
	xnf_pkt_init(&pkt, ctx);
	if (!xnf__l4_csum_of(&pkt, &c))
		return 0;
	*c.field = (__sum16)(__u16)~xnf_csum_fold(c.pseudo);
	return 1;
}

/* Finishes the frame's checksum if its sender left it unfinished: 1 if it did. The caller takes the
 * frame's pointers from ctx afterwards. The switch is read here, so that no subprogram runs while it is off. */
static __always_inline int xnf__finish_csum(struct xdp_md *ctx)
{
	int segment;

	if (!xnf__finish_csum_on())
		return 0;
	segment = xnf__unfinished_segment(ctx);

	return segment && xnf__finish_segment(ctx, (__u32)segment);
}

/* After the verdict: the action, with the field given back where the frame keeps its skb. */
static __always_inline int xnf__settle_csum(struct xdp_md *ctx, int finished, int action)
{
	if (finished && (action == XDP_PASS || (xnf_cfg.skb_mode && (action == XDP_TX || action == XDP_REDIRECT))))
		xnf__unfinish_csum(ctx);
	return action;
}

#endif /* XNF_CSUM_FINISH_H */
