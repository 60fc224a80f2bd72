/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Exercises the checksum helpers the way a NAT or a load balancer does: the
 * IPv4 destination becomes 198.18.9.9 and the L4 destination port 4242, with
 * incremental updates of the IPv4 and L4 checksums (the address is in the
 * pseudo-header); the TTL is decremented and the IPv4 header checksum
 * recomputed in full. Anything else passes untouched.
 */
#include <xnf/nf.h>

#define NEW_DADDR 0xc6120909u /* 198.18.9.9 */
#define NEW_DPORT 4242

static __always_inline void rewrite_l4(struct xnf_headers *h, __be32 old_daddr, __be32 new_daddr)
{
	__be16 new_dport = bpf_htons(NEW_DPORT);

	if (h->tcp) {
		xnf_csum_replace4(&h->tcp->check, old_daddr, new_daddr);
		xnf_csum_replace2(&h->tcp->check, h->tcp->dest, new_dport);
		h->tcp->dest = new_dport;
	} else if (h->udp) {
		xnf_udp_csum_replace4(h->udp, old_daddr, new_daddr);
		xnf_udp_csum_replace2(h->udp, h->udp->dest, new_dport);
		h->udp->dest = new_dport;
	}
}

static __always_inline xnf_verdict csum_rewrite(struct xnf_pkt *pkt)
{
	struct xnf_headers h;
	__be32 old_daddr, new_daddr = bpf_htonl(NEW_DADDR);

	if (xnf_parse_headers(pkt, &h) < 0)
		return XNF_DROP_MALFORMED;
	if (!h.ip4 || h.is_fragment || h.ip4->ttl <= 1)
		return XNF_PASS;
	old_daddr = h.ip4->daddr;
	rewrite_l4(&h, old_daddr, new_daddr);
	h.ip4->daddr = new_daddr;
	h.ip4->ttl--;
	xnf_ipv4_csum_update(h.ip4, pkt->data_end);
	return XNF_TX;
}
XNF_DEFINE_NF(csum_rewrite);
