/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * fwd: the container forwarder of an edge server. Port 0 is the uplink;
 * ports 1..N are the host ends of the containers' veths. From the uplink, a
 * frame goes to the container its source MAC is pinned to, else to the one
 * that holds its destination IPv4 or IPv6 address, with the container's MAC
 * as destination; anything else is the host's (passed). From a container, IP
 * goes out of the uplink to its next hop; the rest (ARP and neighbour
 * discovery for the gateway, link-local and multicast) is the host's.
 */
#include <xnf/nf.h>
#include <xnf/rules_tables.h>
#include "fwd.h"

XNF_RULES_HASH(fwd_by_mac, struct fwd_mac_key, struct fwd_target, FWD_MAX_ENTRIES);
XNF_RULES_LPM(fwd_by_ip, struct fwd_ip_key, struct fwd_target, FWD_MAX_ENTRIES);
XNF_RULES_LPM(fwd_by_ip6, struct fwd_ip6_key, struct fwd_target, FWD_MAX_ENTRIES);
XNF_RULES_ARRAY(fwd_uplink_cfg, struct fwd_uplink, 1);
XNF_COUNTER_NAMES("to_container", "to_uplink", "fwd_to_host");

static __always_inline struct fwd_target *fwd_container_for(struct ethhdr *eth, const struct xnf_headers *h)
{
	struct fwd_mac_key mac = { 0 };
	struct fwd_target *t;

	__builtin_memcpy(mac.mac, eth->h_source, ETH_ALEN);
	t = xnf_rules_lookup(fwd_by_mac, &mac);
	if (t || xnf_is_link_scope(h))
		return t;
	if (h->ip4) {
		struct fwd_ip_key key = { .prefixlen = 32 };

		__builtin_memcpy(key.addr, &h->ip4->daddr, 4);
		return xnf_rules_lookup(fwd_by_ip, &key);
	}
	if (h->ip6) {
		struct fwd_ip6_key key = { .prefixlen = 128 };

		__builtin_memcpy(key.addr, &h->ip6->daddr, 16);
		return xnf_rules_lookup(fwd_by_ip6, &key);
	}
	return NULL;
}

static __always_inline xnf_verdict fwd_to_host(void)
{
	xnf_count_event(FWD_CNT_TO_HOST);
	return XNF_PASS;
}

static __always_inline xnf_verdict fwd_from_uplink(struct ethhdr *eth, const struct xnf_headers *h)
{
	struct fwd_target *t = fwd_container_for(eth, h);

	if (!t || t->port == FWD_UPLINK_PORT || t->port >= xnf_nports())
		return fwd_to_host();
	__builtin_memcpy(eth->h_dest, t->mac, ETH_ALEN);
	xnf_count_event(FWD_CNT_TO_CONTAINER);
	return XNF_REDIRECT(t->port);
}

static __always_inline xnf_verdict fwd_from_container(struct ethhdr *eth, const struct xnf_headers *h)
{
	__u32 zero = 0;
	struct fwd_uplink *up = xnf_rules_lookup(fwd_uplink_cfg, &zero);

	if ((!h->ip4 && !h->ip6) || xnf_is_link_scope(h))
		return fwd_to_host();
	if (up && up->set) {
		__builtin_memcpy(eth->h_dest, up->next_hop, ETH_ALEN);
		__builtin_memcpy(eth->h_source, up->source, ETH_ALEN);
	}
	xnf_count_event(FWD_CNT_TO_UPLINK);
	return XNF_REDIRECT(FWD_UPLINK_PORT);
}

static __always_inline xnf_verdict fwd(struct xnf_pkt *pkt)
{
	struct xnf_headers h;

	if (xnf_parse_headers(pkt, &h) < 0)
		return XNF_DROP_MALFORMED;
	if (xnf_ingress_port(pkt) == FWD_UPLINK_PORT)
		return fwd_from_uplink(h.eth, &h);
	return fwd_from_container(h.eth, &h);
}
XNF_DEFINE_NF(fwd);
