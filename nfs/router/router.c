/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * router: IPv4 and IPv6 longest-prefix-match forwarding. A forwarded packet
 * gets its TTL or hop limit decremented (and the IPv4 checksum updated), the
 * next hop's MAC as destination and the egress port's MAC as source, and
 * leaves by the route's port. Expired TTL and no route are counted and
 * dropped; "local" prefixes, link-scope destinations (neighbour discovery,
 * link-local, multicast) and non-IP frames go to the local stack.
 *
 * Routes come from its own tables, or with "fib kernel" (--fib kernel) from
 * the host's: bpf_fib_lookup in XDP, and in user space a mirror of the host's
 * routes and neighbours that router_control.c keeps up to date.
 */
#include <xnf/nf.h>
#include <xnf/rules_tables.h>
#include "router.h"

#define RT_MAX_NEIGH 65536

XNF_RULES_LPM(rt4, struct rt_key4, struct rt_nexthop, RT_MAX_ROUTES);
XNF_RULES_LPM(rt6, struct rt_key6, struct rt_nexthop, RT_MAX_ROUTES);
XNF_RULES_ARRAY(rt_port_mac, struct rt_port_mac, XNF_MAX_PORTS);
XNF_RULES_ARRAY(rt_config, __u32, RT_NSETTINGS);
XNF_MAP_LPM(rt_kfib4, struct rt_key4, struct rt_kernel_route, RT_MAX_ROUTES);
XNF_MAP_LPM(rt_kfib6, struct rt_key6, struct rt_kernel_route, RT_MAX_ROUTES);
XNF_MAP_HASH_GROWING(rt_kneigh, struct rt_neigh_key, struct rt_neigh, RT_MAX_NEIGH);
XNF_MAP_ARRAY(rt_kport_mac, struct rt_port_mac, XNF_MAX_PORTS);
XNF_COUNTER_NAMES("forwarded", "expired_ttl", "no_route", "local", "non_ip", "to_kernel");

/* The way out of a forwarded packet: port, next hop's MAC, and our source MAC if known. */
struct rt_way {
	struct rt_nexthop nh;
	struct rt_port_mac source;
};

/* ---------------------------------------------------------------- own tables */

static __always_inline struct rt_nexthop *rt_route4(const struct iphdr *ip)
{
	struct rt_key4 key = { .prefixlen = 32 };

	__builtin_memcpy(key.addr, &ip->daddr, 4);
	return xnf_rules_lookup(rt4, &key);
}

static __always_inline struct rt_nexthop *rt_route6(const struct ipv6hdr *ip6)
{
	struct rt_key6 key = { .prefixlen = 128 };

	__builtin_memcpy(key.addr, &ip6->daddr, 16);
	return xnf_rules_lookup(rt6, &key);
}

/* By our own tables: 1 with *way, or 0 with *verdict (local prefixes, no route, a port we lack). */
static __always_inline int rt_own_way(const struct xnf_headers *h, struct rt_way *way, xnf_verdict *verdict)
{
	struct rt_nexthop *nh = h->ip4 ? rt_route4(h->ip4) : h->ip6 ? rt_route6(h->ip6) : NULL;
	struct rt_port_mac *source;

	if (!nh || (nh->port != RT_LOCAL_PORT && nh->port >= xnf_nports())) {
		xnf_count_event(RT_CNT_NO_ROUTE);
		*verdict = XNF_DROP;
		return 0;
	}
	if (nh->port == RT_LOCAL_PORT) {
		xnf_count_event(RT_CNT_LOCAL);
		*verdict = XNF_PASS;
		return 0;
	}
	way->nh = *nh;
	source = xnf_rules_lookup(rt_port_mac, &way->nh.port);
	if (source)
		way->source = *source;
	return 1;
}

/* ---------------------------------------------------------------- the host's table */

static __always_inline void rt_to_kernel(xnf_verdict *verdict)
{
	xnf_count_event(RT_CNT_TO_KERNEL);
	*verdict = XNF_PASS;
}

static __always_inline void rt_unreachable(xnf_verdict *verdict)
{
	xnf_count_event(RT_CNT_NO_ROUTE);
	*verdict = XNF_DROP;
}

#ifdef XNF_TARGET_BPF
#define RT_AF_INET 2
#define RT_AF_INET6 10

static __always_inline int rt_kernel_way(struct xnf_pkt *pkt, const struct xnf_headers *h, struct rt_way *way,
					 xnf_verdict *verdict)
{
	struct bpf_fib_lookup fib;
	long rc;

	__builtin_memset(&fib, 0, sizeof(fib));
	fib.ifindex = pkt->ctx->ingress_ifindex;
	if (h->ip4) {
		fib.family = RT_AF_INET;
		fib.tos = h->ip4->tos;
		fib.l4_protocol = h->ip4->protocol;
		fib.tot_len = bpf_ntohs(h->ip4->tot_len);
		fib.ipv4_src = h->ip4->saddr;
		fib.ipv4_dst = h->ip4->daddr;
	} else if (h->ip6) {
		fib.family = RT_AF_INET6;
		fib.flowinfo = *(__be32 *)h->ip6 & bpf_htonl(0x0fffffff);
		fib.l4_protocol = h->ip6->nexthdr;
		fib.tot_len = bpf_ntohs(h->ip6->payload_len);
		__builtin_memcpy(fib.ipv6_src, &h->ip6->saddr, 16);
		__builtin_memcpy(fib.ipv6_dst, &h->ip6->daddr, 16);
	} else {
		rt_to_kernel(verdict);
		return 0;
	}
	rc = xnf_fib_lookup(pkt, &fib);
	if (rc == BPF_FIB_LKUP_RET_BLACKHOLE || rc == BPF_FIB_LKUP_RET_UNREACHABLE ||
	    rc == BPF_FIB_LKUP_RET_PROHIBIT) {
		rt_unreachable(verdict);
		return 0;
	}
	/* No neighbour yet, local, forwarding off, out of an interface we do not hold: the stack's job. */
	if (rc != BPF_FIB_LKUP_RET_SUCCESS || !xnf_port_of_ifindex(fib.ifindex, &way->nh.port)) {
		rt_to_kernel(verdict);
		return 0;
	}
	__builtin_memcpy(way->nh.mac, fib.dmac, ETH_ALEN);
	__builtin_memcpy(way->source.mac, fib.smac, ETH_ALEN);
	way->source.set = 1;
	return 1;
}
#else
static __always_inline struct rt_kernel_route *rt_kernel_route(const struct xnf_headers *h)
{
	if (h->ip4) {
		struct rt_key4 key = { .prefixlen = 32 };

		__builtin_memcpy(key.addr, &h->ip4->daddr, 4);
		return xnf_map_lookup(&rt_kfib4, &key);
	}
	struct rt_key6 key = { .prefixlen = 128 };

	__builtin_memcpy(key.addr, &h->ip6->daddr, 16);
	return xnf_map_lookup(&rt_kfib6, &key);
}

/* The mirror of the host's table and neighbours, with bpf_fib_lookup's answers. */
static __always_inline int rt_kernel_way(struct xnf_pkt *pkt, const struct xnf_headers *h, struct rt_way *way,
					 xnf_verdict *verdict)
{
	struct rt_kernel_route *route = h->ip4 || h->ip6 ? rt_kernel_route(h) : NULL;
	struct rt_neigh_key next = { .family = h->ip4 ? 4 : 6 };
	struct rt_port_mac *source;
	struct rt_neigh *neigh;

	if (route && route->kind == RT_KROUTE_DROP) {
		rt_unreachable(verdict);
		return 0;
	}
	if (!route || route->kind != RT_KROUTE_UNICAST || route->port >= xnf_nports()) {
		rt_to_kernel(verdict);
		return 0;
	}
	if (route->has_gateway)
		__builtin_memcpy(next.addr, route->gateway, sizeof(next.addr));
	else if (h->ip4)
		next.addr[0] = h->ip4->daddr;
	else
		__builtin_memcpy(next.addr, &h->ip6->daddr, 16);
	neigh = xnf_map_lookup(&rt_kneigh, &next);
	if (!neigh) {
		rt_to_kernel(verdict);
		return 0;
	}
	way->nh.port = route->port;
	__builtin_memcpy(way->nh.mac, neigh->mac, ETH_ALEN);
	source = xnf_map_lookup(&rt_kport_mac, &way->nh.port);
	if (source)
		way->source = *source;
	return 1;
}
#endif

static __always_inline int rt_fib_kernel(void)
{
	__u32 slot = RT_SETTING_FIB_KERNEL, *on = xnf_rules_lookup(rt_config, &slot);

	return on && *on;
}

/* ---------------------------------------------------------------- forwarding */

/* 0 when the packet may not live another hop; else one hop less, checksum kept right. */
static __always_inline int rt_take_hop(const struct xnf_headers *h)
{
	__be16 before, after;

	if (h->ip4) {
		if (h->ip4->ttl <= 1)
			return 0;
		/* TTL shares a 16-bit word with the protocol: update the checksum for that word */
		__builtin_memcpy(&before, &h->ip4->ttl, 2);
		h->ip4->ttl--;
		__builtin_memcpy(&after, &h->ip4->ttl, 2);
		xnf_csum_replace2(&h->ip4->check, before, after);
		return 1;
	}
	if (!h->ip6 || h->ip6->hop_limit <= 1)
		return 0;
	h->ip6->hop_limit--;
	return 1;
}

static __always_inline xnf_verdict rt_send(struct xnf_pkt *pkt, const struct xnf_headers *h, const struct rt_way *way)
{
	struct ethhdr *eth = h->eth;

	if (!rt_take_hop(h)) {
		xnf_count_event(RT_CNT_EXPIRED);
		return XNF_DROP;
	}
	/* Without a MAC for the port, the frame leaves from the one it was sent to. */
	if (way->source.set)
		__builtin_memcpy(eth->h_source, way->source.mac, ETH_ALEN);
	else
		__builtin_memcpy(eth->h_source, eth->h_dest, ETH_ALEN);
	__builtin_memcpy(eth->h_dest, way->nh.mac, ETH_ALEN);
	xnf_count_event(RT_CNT_FORWARDED);
	if (way->nh.port == xnf_ingress_port(pkt))
		return XNF_TX;
	return XNF_REDIRECT(way->nh.port);
}

static __always_inline xnf_verdict router(struct xnf_pkt *pkt)
{
	struct xnf_headers h;
	struct rt_way way;
	xnf_verdict verdict;
	int found;

	if (xnf_parse_headers(pkt, &h) < 0)
		return XNF_DROP_MALFORMED;
	if (!h.ip4 && !h.ip6) {
		xnf_count_event(RT_CNT_NON_IP);
		return XNF_PASS;
	}
	/* Neighbour discovery, link-local and multicast: this host's, whatever the routes say. */
	if (xnf_is_link_scope(&h)) {
		xnf_count_event(RT_CNT_LOCAL);
		return XNF_PASS;
	}
	__builtin_memset(&way, 0, sizeof(way));
	found = rt_fib_kernel() ? rt_kernel_way(pkt, &h, &way, &verdict) : rt_own_way(&h, &way, &verdict);
	if (!found)
		return verdict;
	return rt_send(pkt, &h, &way);
}
XNF_DEFINE_NF(router);
