/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Bounds-checked header parsing that the verifier accepts and that behaves the
 * same natively. Every access goes through a cursor that refuses to move past
 * the end of the frame, so a truncated or lying header ends in an error code,
 * never an out-of-bounds read.
 */
#ifndef XNF_PARSE_H
#define XNF_PARSE_H

#include <xnf/common.h>
#include <xnf/pkt.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/in.h>
#include <linux/udp.h>
#include <linux/tcp.h>

#ifndef ETH_P_8021Q
#define ETH_P_8021Q 0x8100
#endif
#ifndef ETH_P_8021AD
#define ETH_P_8021AD 0x88A8
#endif

#define XNF_MAX_VLAN_DEPTH 2
#define XNF_MAX_IPV6_EXT_HEADERS 4

enum xnf_parse_result {
	XNF_PARSE_OK = 0,
	XNF_PARSE_MALFORMED = -1, /* truncated or inconsistent header */
};

struct xnf_vlanhdr {
	__be16 tci;
	__be16 encapsulated_proto;
};

/* ICMPv4 and ICMPv6 share this 8-byte layout (linux/icmp.h drags in libc). */
struct xnf_icmphdr {
	__u8 type;
	__u8 code;
	__sum16 checksum;
	__be32 rest;
};

struct xnf_cursor {
	void *pos;
	void *end;
	__u32 beyond; /* the frame goes on this far past end: a GSO segment's payload, a frame's further buffers */
};

/* Everything xnf_parse_headers() found; pointers are NULL where absent. */
struct xnf_headers {
	struct ethhdr *eth;
	struct iphdr *ip4;
	struct ipv6hdr *ip6;
	void *l4;             /* start of the L4 header, if one was reached */
	struct udphdr *udp;
	struct tcphdr *tcp;
	struct xnf_icmphdr *icmp; /* ICMPv4 or ICMPv6 */
	__u16 l3_proto;       /* ETH_P_* in host order, after VLAN tags */
	__u16 vlan_id[XNF_MAX_VLAN_DEPTH];
	__u16 vlan_proto[XNF_MAX_VLAN_DEPTH]; /* each tag's type, host order: ETH_P_8021Q or ETH_P_8021AD */
	__u8 vlan_depth;
	__u8 l4_proto;        /* IPPROTO_*; 0 when not IP */
	__u8 is_fragment;     /* a non-first fragment: no L4 header follows */
	__u8 more_fragments;  /* more fragments of the datagram follow: with is_fragment 0, the first (<xnf/conntrack.h>) */
	__u16 l4_len;         /* the bytes after the IP header and its extension headers, as its length field says */
	__u32 fragment_id;    /* a fragment's datagram (IPv4's identification, IPv6's), as the frame holds it */
};

/* Canonical flow key: IPv4 addresses sit in word 0, the rest is zero. */
struct xnf_5tuple {
	__u8 family; /* 4 or 6 */
	__u8 proto;
	__be16 sport;
	__be16 dport;
	__u16 pad;
	__be32 saddr[4];
	__be32 daddr[4];
};

static __always_inline void xnf_cursor_init(struct xnf_cursor *c, const void *data, const void *end)
{
	c->pos = (void *)data;
	c->end = (void *)end;
	c->beyond = 0;
}

/* Whether len bytes from start lie within the frame: readable, or in the part past the readable end (beyond). */
static __always_inline int xnf_cursor_within(const struct xnf_cursor *c, const void *start, __u32 len)
{
	if ((const char *)start + len <= (const char *)c->end)
		return 1;
	return len - (__u32)((const char *)c->end - (const char *)start) <= c->beyond;
}

/* Returns a pointer to the next len bytes and moves past them, or NULL. */
static __always_inline void *xnf_cursor_pull(struct xnf_cursor *c, __u32 len)
{
	void *p = c->pos;

	if ((char *)p + len > (char *)c->end)
		return NULL;
	c->pos = (char *)p + len;
	return p;
}

static __always_inline int xnf_parse_eth(struct xnf_cursor *c, struct xnf_headers *h)
{
	struct ethhdr *eth = xnf_cursor_pull(c, sizeof(*eth));

	if (!eth)
		return XNF_PARSE_MALFORMED;
	h->eth = eth;
	h->l3_proto = bpf_ntohs(eth->h_proto);
	/* From the tags already read (at tc, the one the kernel took out of the frame). */
	for (int i = h->vlan_depth; i < XNF_MAX_VLAN_DEPTH; i++) {
		struct xnf_vlanhdr *vlan;

		if (h->l3_proto != ETH_P_8021Q && h->l3_proto != ETH_P_8021AD)
			break;
		vlan = xnf_cursor_pull(c, sizeof(*vlan));
		if (!vlan)
			return XNF_PARSE_MALFORMED;
		h->vlan_id[i] = bpf_ntohs(vlan->tci) & 0x0fff;
		h->vlan_proto[i] = h->l3_proto;
		h->vlan_depth = i + 1;
		h->l3_proto = bpf_ntohs(vlan->encapsulated_proto);
	}
	/* More tags than we follow: what they hide cannot be inspected, so it must not pass as non-IP. */
	if (h->l3_proto == ETH_P_8021Q || h->l3_proto == ETH_P_8021AD)
		return XNF_PARSE_MALFORMED;
	return XNF_PARSE_OK;
}

static __always_inline int xnf_parse_ipv4(struct xnf_cursor *c, struct xnf_headers *h)
{
	struct iphdr *ip = xnf_cursor_pull(c, sizeof(*ip));
	__u32 hdr_len, total_len;

	if (!ip || ip->version != 4 || ip->ihl < 5)
		return XNF_PARSE_MALFORMED;
	hdr_len = ip->ihl * 4;
	total_len = bpf_ntohs(ip->tot_len);
	if (total_len < hdr_len)
		return XNF_PARSE_MALFORMED;
	/* The frame may carry link-layer padding, but never less than tot_len. */
	if (!xnf_cursor_within(c, ip, total_len))
		return XNF_PARSE_MALFORMED;
	/* Skip the options, if any (hdr_len is 20..60). */
	if (hdr_len > sizeof(*ip) && !xnf_cursor_pull(c, hdr_len - sizeof(*ip)))
		return XNF_PARSE_MALFORMED;
	h->ip4 = ip;
	h->l4_proto = ip->protocol;
	h->is_fragment = (bpf_ntohs(ip->frag_off) & 0x1fff) != 0;
	/* Taken whether fragmented or not, without a branch: a verifier follows each side of one through the whole NF. */
	h->more_fragments = (__u8)((bpf_ntohs(ip->frag_off) >> 13) & 1);
	h->fragment_id = ip->id;
	h->l4_len = (__u16)(total_len - hdr_len);
	return XNF_PARSE_OK;
}

static __always_inline int xnf_is_ipv6_ext_header(__u8 next)
{
	return next == IPPROTO_HOPOPTS || next == IPPROTO_ROUTING ||
	       next == IPPROTO_FRAGMENT || next == IPPROTO_DSTOPTS;
}

static __always_inline int xnf_parse_ipv6(struct xnf_cursor *c, struct xnf_headers *h)
{
	struct ipv6hdr *ip6 = xnf_cursor_pull(c, sizeof(*ip6));
	__u8 next;

	if (!ip6 || ip6->version != 6)
		return XNF_PARSE_MALFORMED;
	if (!xnf_cursor_within(c, ip6 + 1, bpf_ntohs(ip6->payload_len)))
		return XNF_PARSE_MALFORMED;
	h->ip6 = ip6;
	next = ip6->nexthdr;
	for (int i = 0; i < XNF_MAX_IPV6_EXT_HEADERS; i++) {
		__u8 *ext;
		__u32 ext_len;

		if (!xnf_is_ipv6_ext_header(next))
			break;
		ext = xnf_cursor_pull(c, 8);
		if (!ext)
			return XNF_PARSE_MALFORMED;
		if (next == IPPROTO_FRAGMENT) {
			/* Offset in bits 3..15 of bytes 2-3: non-zero means no L4 here; bit 0: more follow. */
			if (((ext[2] << 8 | ext[3]) & 0xfff8) != 0)
				h->is_fragment = 1;
			h->more_fragments = ext[3] & 1;
			__builtin_memcpy(&h->fragment_id, ext + 4, sizeof(h->fragment_id));
			ext_len = 8;
		} else {
			ext_len = (ext[1] + 1) * 8;
		}
		next = ext[0];
		if (ext_len > 8 && !xnf_cursor_pull(c, ext_len - 8))
			return XNF_PARSE_MALFORMED;
	}
	if (xnf_is_ipv6_ext_header(next))
		return XNF_PARSE_MALFORMED; /* more extension headers than we follow */
	h->l4_proto = next;
	/* What the extension headers took from the payload's length (a frame shorter than they was refused above). */
	h->l4_len = (__u16)(bpf_ntohs(ip6->payload_len) - (__u32)((__u8 *)c->pos - (__u8 *)(ip6 + 1)));
	return XNF_PARSE_OK;
}

static __always_inline int xnf_parse_l4(struct xnf_cursor *c, struct xnf_headers *h)
{
	if (h->is_fragment)
		return XNF_PARSE_OK;
	h->l4 = c->pos;
	switch (h->l4_proto) {
	case IPPROTO_UDP:
		h->udp = xnf_cursor_pull(c, sizeof(struct udphdr));
		return h->udp ? XNF_PARSE_OK : XNF_PARSE_MALFORMED;
	case IPPROTO_TCP: {
		struct tcphdr *tcp = xnf_cursor_pull(c, sizeof(*tcp));

		if (!tcp || tcp->doff < 5)
			return XNF_PARSE_MALFORMED;
		if (tcp->doff > 5 && !xnf_cursor_pull(c, tcp->doff * 4 - sizeof(*tcp)))
			return XNF_PARSE_MALFORMED;
		h->tcp = tcp;
		return XNF_PARSE_OK;
	}
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		h->icmp = xnf_cursor_pull(c, sizeof(struct xnf_icmphdr));
		return h->icmp ? XNF_PARSE_OK : XNF_PARSE_MALFORMED;
	default:
		return XNF_PARSE_OK; /* an L4 protocol we do not look into */
	}
}

/*
 * Parses Ethernet, up to two VLAN tags, IPv4 or IPv6 (with options and
 * extension headers) and TCP/UDP/ICMP. A non-IP frame is XNF_PARSE_OK with
 * ip4 and ip6 NULL: what to do with ARP and friends is the NF's choice.
 */
static __always_inline int xnf_parse_headers(struct xnf_pkt *pkt, struct xnf_headers *h)
{
	struct xnf_cursor c;
	int rc;

	__builtin_memset(h, 0, sizeof(*h));
#if defined(XNF_TARGET_BPF) && defined(XNF_HOOK_TC)
	/* The kernel takes a frame's outermost tag out of its bytes into the skb before tc runs: it is still the
	 * frame's first tag, and rules about VLANs see it as XDP does. */
	if (pkt->ctx->vlan_present) {
		h->vlan_id[0] = (__u16)(pkt->ctx->vlan_tci & 0x0fff);
		h->vlan_proto[0] = bpf_ntohs((__be16)pkt->ctx->vlan_proto);
		h->vlan_depth = 1;
	}
#endif
	xnf_cursor_init(&c, pkt->data, pkt->data_end);
	c.beyond = pkt->beyond;
	rc = xnf_parse_eth(&c, h);
	if (rc < 0)
		return rc;
	if (h->l3_proto == ETH_P_IP)
		rc = xnf_parse_ipv4(&c, h);
	else if (h->l3_proto == ETH_P_IPV6)
		rc = xnf_parse_ipv6(&c, h);
	else
		return XNF_PARSE_OK;
	if (rc < 0)
		return rc;
	return xnf_parse_l4(&c, h);
}

/* ICMPv6 types of neighbour discovery (RFC 4861): router and neighbour solicitation and advertisement, redirect. */
#define XNF_ND_FIRST_TYPE 133
#define XNF_ND_LAST_TYPE 137

/*
 * Whether the frame belongs to the link, never to be routed on: IPv6 multicast (ff00::/8) and link-local unicast
 * (fe80::/10) destinations, and neighbour discovery to any address (an advertisement answering a solicitation goes
 * to the solicitor's own address); IPv4 multicast (224.0.0.0/4) and the limited broadcast. An NF that routes
 * hands such frames to the local stack.
 */
static __always_inline int xnf_is_link_scope(const struct xnf_headers *h)
{
	if (h->ip6) {
		const __u8 *daddr = (const __u8 *)&h->ip6->daddr;

		if (h->icmp && h->l4_proto == IPPROTO_ICMPV6 && h->icmp->type >= XNF_ND_FIRST_TYPE &&
		    h->icmp->type <= XNF_ND_LAST_TYPE)
			return 1;
		return daddr[0] == 0xff || (daddr[0] == 0xfe && (daddr[1] & 0xc0) == 0x80);
	}
	if (h->ip4) {
		__u32 daddr = bpf_ntohl(h->ip4->daddr);

		return (daddr >> 28) == 0xe || daddr == 0xffffffff;
	}
	return 0;
}

/* Fills t from parsed headers; returns -1 when the frame is not IP. */
/* The TCP header's flags byte (FIN .. CWR, the byte after the data offset), 0 for a frame that is not TCP. */
static __always_inline __u8 xnf_tcp_flags(const struct xnf_headers *h)
{
	return h->tcp ? ((const __u8 *)h->tcp)[13] : 0;
}

static __always_inline int xnf_headers_to_5tuple(const struct xnf_headers *h, struct xnf_5tuple *t)
{
	__builtin_memset(t, 0, sizeof(*t));
	if (h->ip4) {
		t->family = 4;
		t->saddr[0] = h->ip4->saddr;
		t->daddr[0] = h->ip4->daddr;
	} else if (h->ip6) {
		t->family = 6;
		__builtin_memcpy(t->saddr, &h->ip6->saddr, 16);
		__builtin_memcpy(t->daddr, &h->ip6->daddr, 16);
	} else {
		return -1;
	}
	t->proto = h->l4_proto;
	if (h->udp) {
		t->sport = h->udp->source;
		t->dport = h->udp->dest;
	} else if (h->tcp) {
		t->sport = h->tcp->source;
		t->dport = h->tcp->dest;
	}
	return 0;
}

#endif /* XNF_PARSE_H */
