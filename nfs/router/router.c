/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * router: IPv4 and IPv6 longest-prefix-match forwarding from its own tables.
 * A forwarded packet gets its TTL or hop limit decremented (and the IPv4
 * checksum updated), the next hop's MAC as destination and the egress port's
 * MAC as source, and leaves by the route's port. Expired TTL and no route are
 * counted and dropped; "local" prefixes and non-IP frames go to the local stack.
 */
#include <xnf/nf.h>
#include "router.h"

XNF_MAP_LPM(rt4, struct rt_key4, struct rt_nexthop, RT_MAX_ROUTES);
XNF_MAP_LPM(rt6, struct rt_key6, struct rt_nexthop, RT_MAX_ROUTES);
XNF_MAP_ARRAY(rt_port_mac, struct rt_port_mac, XNF_MAX_PORTS);
XNF_COUNTER_NAMES("forwarded", "expired_ttl", "no_route", "local", "non_ip");

static __always_inline struct rt_nexthop *rt_route4(const struct iphdr *ip)
{
	struct rt_key4 key = { .prefixlen = 32 };

	__builtin_memcpy(key.addr, &ip->daddr, 4);
	return xnf_map_lookup(&rt4, &key);
}

static __always_inline struct rt_nexthop *rt_route6(const struct ipv6hdr *ip6)
{
	struct rt_key6 key = { .prefixlen = 128 };

	__builtin_memcpy(key.addr, &ip6->daddr, 16);
	return xnf_map_lookup(&rt6, &key);
}

/* Rewrites the Ethernet header for the next hop and picks the way out. */
static __always_inline xnf_verdict rt_send_to(struct xnf_pkt *pkt, struct ethhdr *eth, const struct rt_nexthop *nh)
{
	__u32 port = nh->port;
	struct rt_port_mac *src = xnf_map_lookup(&rt_port_mac, &port);

	if (src && src->set)
		__builtin_memcpy(eth->h_source, src->mac, ETH_ALEN);
	else
		__builtin_memcpy(eth->h_source, eth->h_dest, ETH_ALEN);
	__builtin_memcpy(eth->h_dest, nh->mac, ETH_ALEN);
	xnf_count_event(RT_CNT_FORWARDED);
	if (port == xnf_ingress_port(pkt))
		return XNF_TX;
	return XNF_REDIRECT(port);
}

/* Local prefixes, missing routes and routes to ports this instance lacks: the cases before forwarding. */
static __always_inline int rt_unroutable(const struct rt_nexthop *nh, xnf_verdict *verdict)
{
	if (!nh || (nh->port != RT_LOCAL_PORT && nh->port >= xnf_nports())) {
		xnf_count_event(RT_CNT_NO_ROUTE);
		*verdict = XNF_DROP;
		return 1;
	}
	if (nh->port == RT_LOCAL_PORT) {
		xnf_count_event(RT_CNT_LOCAL);
		*verdict = XNF_PASS;
		return 1;
	}
	return 0;
}

static __always_inline xnf_verdict rt_forward4(struct xnf_pkt *pkt, struct ethhdr *eth, struct iphdr *ip)
{
	struct rt_nexthop *nh = rt_route4(ip);
	xnf_verdict verdict;
	__be16 before, after;

	if (rt_unroutable(nh, &verdict))
		return verdict;
	if (ip->ttl <= 1) {
		xnf_count_event(RT_CNT_EXPIRED);
		return XNF_DROP;
	}
	/* TTL shares a 16-bit word with the protocol: update the checksum for that word */
	__builtin_memcpy(&before, &ip->ttl, 2);
	ip->ttl--;
	__builtin_memcpy(&after, &ip->ttl, 2);
	xnf_csum_replace2(&ip->check, before, after);
	return rt_send_to(pkt, eth, nh);
}

static __always_inline xnf_verdict rt_forward6(struct xnf_pkt *pkt, struct ethhdr *eth, struct ipv6hdr *ip6)
{
	struct rt_nexthop *nh = rt_route6(ip6);
	xnf_verdict verdict;

	if (rt_unroutable(nh, &verdict))
		return verdict;
	if (ip6->hop_limit <= 1) {
		xnf_count_event(RT_CNT_EXPIRED);
		return XNF_DROP;
	}
	ip6->hop_limit--;
	return rt_send_to(pkt, eth, nh);
}

static __always_inline xnf_verdict router(struct xnf_pkt *pkt)
{
	struct xnf_headers h;

	if (xnf_parse_headers(pkt, &h) < 0)
		return XNF_DROP_MALFORMED;
	if (h.ip4)
		return rt_forward4(pkt, h.eth, h.ip4);
	if (h.ip6)
		return rt_forward6(pkt, h.eth, h.ip6);
	xnf_count_event(RT_CNT_NON_IP);
	return XNF_PASS;
}
XNF_DEFINE_NF(router);
