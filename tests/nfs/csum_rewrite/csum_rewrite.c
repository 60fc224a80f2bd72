/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Exercises the checksum helpers the way a NAT or a load balancer does: the
 * IPv4 destination becomes 198.18.9.9 and the L4 destination port 4242, with
 * the L4 checksum told what changed (xnf/l4_csum.h: the address is in the
 * pseudo-header, the port is not); the TTL is decremented and the IPv4 header
 * checksum recomputed in full. Anything else passes untouched.
 */
#include <xnf/nf.h>

#define NEW_DADDR 0xc6120909u /* 198.18.9.9 */
#define NEW_DPORT 4242

static __always_inline void rewrite_l4(struct xnf_pkt *pkt, struct xnf_headers *h, __be32 old_daddr,
				       __be32 new_daddr)
{
	__be16 new_dport = bpf_htons(NEW_DPORT);

	xnf_l4_csum_addr_changed(pkt, h, old_daddr, new_daddr);
	if (h->tcp) {
		xnf_l4_csum_field_changed(pkt, h, h->tcp->dest, new_dport);
		h->tcp->dest = new_dport;
	} else if (h->udp) {
		xnf_l4_csum_field_changed(pkt, h, h->udp->dest, new_dport);
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
	rewrite_l4(pkt, &h, old_daddr, new_daddr);
	h.ip4->daddr = new_daddr;
	h.ip4->ttl--;
	xnf_ipv4_csum_update(h.ip4, pkt->data_end);
	return XNF_TX;
}
XNF_DEFINE_NF(csum_rewrite);
