/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The frame's TCP or UDP checksum after the NF changed a field it covers. The NF says which field changed from
 * what to what; the SDK keeps the checksum right in the way its path needs:
 *
 * - natively and in XDP the checksum is whole when the NF sees it (the XDP entry finishes one a local stack left
 *   unfinished, xnf/internal/csum_finish.h), and it is updated incrementally here (RFC 1624);
 * - at tc the frame is an skb that keeps its checksum state: CHECKSUM_PARTIAL (a local stack's segment, whose
 *   field holds only the pseudo-header's sum for the device or segmentation to finish), CHECKSUM_COMPLETE (the
 *   skb also carries the sum of the whole packet) or a whole checksum. Only the kernel knows which, so the
 *   changes are summed here and handed to bpf_l4_csum_replace() when the NF returns (the helper may move the
 *   frame, which would invalidate the NF's pointers if it ran in between).
 *
 * An address is part of the pseudo-header; a port is not. The IPv4 header's own checksum is always whole:
 * update it with xnf_csum_replace4() as before.
 */
#ifndef XNF_L4_CSUM_H
#define XNF_L4_CSUM_H

#include <xnf/common.h>
#include <xnf/pkt.h>
#include <xnf/parse.h>
#include <xnf/csum.h>
#include <xnf/helpers.h>   /* XNF_VERIFIED_APART */

#ifdef XNF_HOOK_TC
#ifndef BPF_F_IPV6
#define BPF_F_IPV6 (1ULL << 7) /* bpf_l4_csum_replace on IPv6: no IPv4 header checksum absorbs the change */
#endif

/* Adds a 32-bit change (from -> to, in one's complement) to an unfolded sum. */
static __always_inline __u32 xnf__csum_diff_add(__u32 sum, __be32 from, __be32 to)
{
	__u64 s = (__u64)sum + (__u16)~(from & 0xffff) + (__u16)~(from >> 16) + (to & 0xffff) + (to >> 16);

	s = (s & 0xffffffff) + (s >> 32);
	return (__u32)s;
}

/* Notes where the checksum field is (the first report of a frame decides). */
static __always_inline void xnf__csum_note_field(struct xnf_pkt *pkt, const struct xnf_headers *h)
{
	void *field = h->tcp ? (void *)&h->tcp->check : (void *)&h->udp->check;

	pkt->csum_offset = (__u16)((char *)field - (char *)pkt->data);
	pkt->csum_flags = (__u16)((h->udp ? BPF_F_MARK_MANGLED_0 : 0) | (h->ip6 ? BPF_F_IPV6 : 0));
}
#endif

/* A 32-bit word of the pseudo-header (an IPv4 address, or one word of an IPv6 one) changed from -> to. */
static __always_inline void xnf_l4_csum_addr_changed(struct xnf_pkt *pkt, const struct xnf_headers *h,
						     __be32 from, __be32 to)
{
	if (!h->tcp && !h->udp)
		return; /* ICMPv4's checksum covers no pseudo-header */
#ifdef XNF_HOOK_TC
	xnf__csum_note_field(pkt, h);
	pkt->csum_pseudo = xnf__csum_diff_add(pkt->csum_pseudo, from, to);
#else
	if (h->tcp)
		xnf_csum_replace4(&h->tcp->check, from, to);
	else
		xnf_udp_csum_replace4(h->udp, from, to);
#endif
}

/* A 16-bit field of the TCP or UDP header (a port) changed from -> to. */
static __always_inline void xnf_l4_csum_field_changed(struct xnf_pkt *pkt, const struct xnf_headers *h,
						      __be16 from, __be16 to)
{
	if (!h->tcp && !h->udp)
		return;
#ifdef XNF_HOOK_TC
	xnf__csum_note_field(pkt, h);
	pkt->csum_fields = xnf__csum_diff_add(pkt->csum_fields, from, to);
#else
	if (h->tcp)
		xnf_csum_replace2(&h->tcp->check, from, to);
	else
		xnf_udp_csum_replace2(h->udp, from, to);
#endif
}

#ifdef XNF_HOOK_TC
/* One summed change through bpf_l4_csum_replace (size 0: `to` is the change itself). 0, or the helper's error. */
static __always_inline long xnf__l4_csum_apply_sum(xnf_ctx *ctx, __u32 offset, __u32 sum, __u64 flags)
{
	long err;

	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	if (!sum || sum == 0xffff)
		return 0; /* no change, in one's complement */
	err = bpf_l4_csum_replace(ctx, offset, 0, sum, flags);
	if (err && (flags & BPF_F_IPV6)) /* a kernel before 6.16 has no BPF_F_IPV6 */
		err = bpf_l4_csum_replace(ctx, offset, 0, sum, flags & ~BPF_F_IPV6);
	return err;
}

/* The sum of the frame's readable bytes after its Ethernet header, folded to 16 bits (not complemented). A global
 * function: the verifier checks its loop once, not once per way the NF reached it. */
XNF_VERIFIED_APART int xnf__readable_sum(xnf_ctx *ctx)
{
	void *data, *end;
	__u32 sum;

	if (!ctx)
		return 0;
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	if (data + ETH_HLEN > end)
		return 0;
	sum = xnf_csum_partial(data + ETH_HLEN, (__u32)(end - (data + ETH_HLEN)), end, 0);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (int)sum;
}

/* Where the NF starts writing (or goes on after moving the frame's start): the bytes' sum, for a complete skb. */
static __always_inline void xnf__complete_sum_start(struct xnf_pkt *pkt)
{
	if (pkt->complete)
		pkt->sum_before = (__u32)xnf__readable_sum(pkt->ctx);
}

/* Whether the checksum field the NF's changes are about holds 0 (UDP over IPv4 sent without a checksum). */
static __always_inline int xnf__l4_field_is_zero(const struct xnf_pkt *pkt)
{
	__u16 field = 1;

	bpf_skb_load_bytes(pkt->ctx, pkt->csum_offset, &field, sizeof(field));
	return field == 0;
}

static __always_inline __u32 xnf__fold16(__u64 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u32)sum;
}

/*
 * What the NF wrote itself, added into a complete skb's sum. Not what its reported changes are about to make
 * up for: a port's change is undone in the sum by its checksum field's (which bpf_l4_csum_replace leaves out of
 * the skb's sum), and so is an IPv6 address's; an IPv4 address's is undone by the IPv4 header checksum, and the
 * helper adds its field's change itself.
 */
static __always_inline void xnf__complete_sum_settle(struct xnf_pkt *pkt)
{
	__u32 after, reported, diff;

	if (!pkt->complete)
		return;
	after = (__u32)xnf__readable_sum(pkt->ctx);
	reported = xnf__fold16((__u64)pkt->csum_fields + ((pkt->csum_flags & BPF_F_IPV6) ? pkt->csum_pseudo : 0));
	if (pkt->csum_offset && (pkt->csum_flags & BPF_F_MARK_MANGLED_0) && xnf__l4_field_is_zero(pkt))
		reported = 0;   /* UDP without a checksum keeps none: nothing makes up for the port's change */
	diff = xnf__fold16((__u64)after + (0xffff & ~pkt->sum_before) + (0xffff & ~reported));
	pkt->sum_before = after;
	if (diff && diff != 0xffff)
		bpf_csum_update(pkt->ctx, diff);
}

/*
 * Applies the changes the NF reported, the way the skb's checksum state needs (the kernel knows it): a partial
 * checksum follows the pseudo-header only, a whole one every change, a complete skb's sum too. Every pointer into
 * the frame is stale afterwards. 0, or -1 when the kernel could not (the frame must not go on).
 */
static __always_inline int xnf__l4_csum_apply(struct xnf_pkt *pkt)
{
	__u32 offset = pkt->csum_offset;

	xnf__complete_sum_settle(pkt);
	if (!offset)
		return 0;
	pkt->csum_offset = 0;
	if (xnf__l4_csum_apply_sum(pkt->ctx, offset, pkt->csum_pseudo, pkt->csum_flags | BPF_F_PSEUDO_HDR) ||
	    xnf__l4_csum_apply_sum(pkt->ctx, offset, pkt->csum_fields, pkt->csum_flags))
		return -1;
	pkt->csum_pseudo = 0;
	pkt->csum_fields = 0;
	return 0;
}
#endif

#endif /* XNF_L4_CSUM_H */
