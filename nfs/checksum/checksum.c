/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * checksum: a CPU-demand NF for the cost model. Computes the TCP or UDP
 * checksum of every packet from scratch (pseudo-header, header and payload)
 * `repeat` times, writes it, swaps the MAC addresses and sends the frame on.
 * With a correct checksum on the way in, only the MACs change; repeat 0 is
 * plain header parsing plus macswap, the baseline of the curve.
 */
#include <xnf/nf.h>
#include "checksum.h"

/*
 * What one computation needs, kept in a per-CPU slot rather than on the
 * stack: read back from a map, the offsets are plain numbers to the verifier,
 * so it checks the loop once, not once per header layout that leads to it.
 */
struct ck_job {
	__u32 l4_offset;
	__u32 l4_len;
	__u32 pseudo_sum; /* the pseudo-header's share, computed once */
	__u32 is_udp;
};

XNF_MAP_ARRAY(ck_config, __u32, CK_NSETTINGS);
XNF_MAP_PERCPU_ARRAY(ck_jobs, struct ck_job, 1);
XNF_COUNTER_NAMES("recomputed", "not_l4");

static long ck_compute_once(__u32 index, void *ctx)
{
	__u32 zero = 0, offset, len, sum;
	struct ck_job *job = xnf_map_lookup(&ck_jobs, &zero);
	void *data, *data_end;
	__sum16 *check;
	__u8 *l4;
	__u16 folded;

	if (!job)
		return 1;
	xnf_pkt_bounds(ctx, &data, &data_end);
	offset = job->l4_offset & (XNF_CSUM_MAX_BYTES - 1);
	len = job->l4_len;
	l4 = (__u8 *)data + offset;
	check = (__sum16 *)(l4 + (job->is_udp ? offsetof(struct udphdr, check) : offsetof(struct tcphdr, check)));
	if ((void *)(check + 1) > data_end)
		return 1;
	*check = 0;
	/* A segment that goes on past the first buffer (a jumbo frame) is summed through the frame's bytes. */
	if (len <= XNF_CSUM_MAX_BYTES && l4 + len <= (__u8 *)data_end)
		sum = xnf_csum_partial(l4, len, data_end, job->pseudo_sum);
	else if (xnf_frame_sum(ctx, offset, len, job->pseudo_sum, &sum))
		return 1;
	xnf_pkt_bounds(ctx, &data, &data_end);
	check = (__sum16 *)((__u8 *)data + offset +
			    (job->is_udp ? offsetof(struct udphdr, check) : offsetof(struct tcphdr, check)));
	if ((void *)(check + 1) > data_end)
		return 1;
	folded = xnf_csum_fold(sum);
	/*
	 * UDP sends a computed zero as all ones: zero means "no checksum" (RFC 768).
	 * Arithmetic, not a branch: a branch on the sum would make the verifier
	 * track every partial sum exactly and explore each loop many times over.
	 */
	*check = (__sum16)(folded | (0xffffu * (job->is_udp & (((__u32)folded - 1) >> 31))));
	return 0;
}

/* Length of the L4 segment by the IP header; -1 if the frame (every buffer of it) is shorter than that. */
static __always_inline int ck_l4_length(const struct xnf_pkt *pkt, const struct xnf_headers *h, __u32 *len)
{
	__u32 ip_len;

	if (h->ip4) {
		ip_len = bpf_ntohs(h->ip4->tot_len);
		if (ip_len < (__u32)((char *)h->l4 - (char *)h->ip4))
			return -1;
		*len = ip_len - (__u32)((char *)h->l4 - (char *)h->ip4);
	} else if (h->ip6) {
		ip_len = bpf_ntohs(h->ip6->payload_len);
		if (ip_len < (__u32)((char *)h->l4 - (char *)(h->ip6 + 1)))
			return -1;
		*len = ip_len - (__u32)((char *)h->l4 - (char *)(h->ip6 + 1));
	} else {
		return -1;
	}
	return (__u32)((char *)h->l4 - (char *)pkt->data) + *len > xnf_frame_len(pkt) ? -1 : 0;
}

/* Sum of count 16-bit words at words: addresses, already bounds-checked by the parser. */
static __always_inline __u32 ck_sum_words(const __u16 *words, __u32 count)
{
	__u32 sum = 0;

	for (__u32 i = 0; i < count; i++)
		sum += words[i];
	return sum;
}

static __always_inline __u32 ck_pseudo_sum(const struct xnf_headers *h, __u32 l4_len)
{
	__u32 sum = bpf_htons((__u16)h->l4_proto) + bpf_htons((__u16)l4_len);

	/* Two separate paths: the verifier loses track of a pointer chosen between two headers. */
	if (h->ip4)
		return sum + ck_sum_words((const __u16 *)&h->ip4->saddr, 4);
	if (h->ip6)
		return sum + ck_sum_words((const __u16 *)&h->ip6->saddr, 16);
	return sum;
}

static __always_inline int ck_prepare(struct xnf_pkt *pkt, const struct xnf_headers *h)
{
	__u32 zero = 0, len;
	struct ck_job *job = xnf_map_lookup(&ck_jobs, &zero);

	/* A GSO segment's checksum is the kernel's to finish per segment: one computed over it would be wrong. */
	if (!job || xnf_frame_is_segment(pkt) || ck_l4_length(pkt, h, &len) < 0)
		return -1;
	job->l4_offset = (__u32)((char *)h->l4 - (char *)pkt->data);
	job->l4_len = len;
	job->is_udp = h->udp != NULL;
	job->pseudo_sum = ck_pseudo_sum(h, len);
	return 0;
}

static __always_inline xnf_verdict checksum(struct xnf_pkt *pkt)
{
	__u32 slot = CK_SETTING_REPEAT, *repeat;
	struct xnf_headers h;

	if (xnf_parse_headers(pkt, &h) < 0)
		return XNF_DROP_MALFORMED;
	if (!h.udp && !h.tcp) {
		xnf_count_event(CK_CNT_NOT_L4);
	} else {
		repeat = xnf_map_lookup(&ck_config, &slot);
		if (repeat && *repeat) {
			if (ck_prepare(pkt, &h) < 0)
				return XNF_DROP_MALFORMED;
			xnf_loop(*repeat < CK_MAX_REPEAT ? *repeat : CK_MAX_REPEAT, ck_compute_once, pkt);
			xnf_count_event(CK_CNT_RECOMPUTED);
		}
	}
	/* The parser checked the Ethernet header, but the verifier needs to see it again past the loop. */
	if ((void *)(h.eth + 1) > pkt->data_end)
		return XNF_DROP_MALFORMED;
	xnf_swap_macs(h.eth);
	return xnf_forward(pkt);
}
XNF_DEFINE_NF(checksum);
