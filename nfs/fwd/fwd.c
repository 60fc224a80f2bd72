/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * fwd: the container forwarder of an edge server. Port 0 is the uplink;
 * ports 1..N are the host ends of the containers' veths. From the uplink, a
 * frame goes to the container its source MAC is pinned to, else to the one
 * that holds its destination IPv4 or IPv6 address, with the container's MAC
 * as destination; anything else is the host's (passed). From a container, IP
 * goes out of the uplink to its next hop; the rest (ARP and neighbour
 * discovery for the gateway, link-local and multicast) is the host's. A VLAN of
 * the uplink may be bridged to a container port: its frames go there untagged,
 * and the port's frames leave the uplink tagged (fwd.h).
 */
#include <xnf/nf.h>
#include <xnf/rules_tables.h>
#include <xnf/vlan.h>
#include "fwd.h"

XNF_RULES_HASH(fwd_by_mac, struct fwd_mac_key, struct fwd_target, FWD_MAX_ENTRIES);
XNF_RULES_LPM(fwd_by_ip, struct fwd_ip_key, struct fwd_target, FWD_MAX_ENTRIES);
XNF_RULES_LPM(fwd_by_ip6, struct fwd_ip6_key, struct fwd_target, FWD_MAX_ENTRIES);
XNF_RULES_ARRAY(fwd_uplink_cfg, struct fwd_uplink, 1);
XNF_RULES_HASH(fwd_by_vlan, struct fwd_vlan_key, __u32, FWD_MAX_VLANS);
XNF_RULES_ARRAY(fwd_port_vlan, __u32, XNF_MAX_PORTS);
XNF_COUNTER_NAMES("to_container", "to_uplink", "fwd_to_host", "vlan_error");

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

/* The container port the frame's VLAN is bridged to, or 0 (the uplink's: none). */
static __always_inline __u32 fwd_vlan_port(const struct xnf_headers *h)
{
	struct fwd_vlan_key key = { 0 };
	__u32 *port;

	if (!h->vlan_depth || h->vlan_proto[0] != ETH_P_8021Q)
		return FWD_UPLINK_PORT;
	key.id = h->vlan_id[0];
	port = xnf_rules_lookup(fwd_by_vlan, &key);
	return port && *port < xnf_nports() ? *port : FWD_UPLINK_PORT;
}

static __always_inline xnf_verdict fwd_vlan_error(void)
{
	xnf_count_event(FWD_CNT_VLAN_ERROR);
	return XNF_DROP;
}

static __always_inline xnf_verdict fwd_untagged_to(struct xnf_pkt *pkt, __u32 port)
{
	if (xnf_vlan_pop(pkt))
		return fwd_vlan_error();
	xnf_count_event(FWD_CNT_TO_CONTAINER);
	return XNF_REDIRECT(port);
}

static __always_inline xnf_verdict fwd_tagged_to_uplink(struct xnf_pkt *pkt, __u32 vlan)
{
	if (xnf_vlan_push(pkt, ETH_P_8021Q, (__u16)vlan))
		return fwd_vlan_error();
	xnf_count_event(FWD_CNT_TO_UPLINK);
	return XNF_REDIRECT(FWD_UPLINK_PORT);
}

static __always_inline xnf_verdict fwd(struct xnf_pkt *pkt)
{
	__u32 ingress = xnf_ingress_port(pkt), port, *vlan;
	struct xnf_headers h;

	if (xnf_parse_headers(pkt, &h) < 0)
		return XNF_DROP_MALFORMED;
	if (ingress == FWD_UPLINK_PORT) {
		port = fwd_vlan_port(&h);
		if (port != FWD_UPLINK_PORT)
			return fwd_untagged_to(pkt, port);
		return fwd_from_uplink(h.eth, &h);
	}
	vlan = xnf_rules_lookup(fwd_port_vlan, &ingress);
	if (vlan && *vlan)
		return fwd_tagged_to_uplink(pkt, *vlan);
	return fwd_from_container(h.eth, &h);
}
XNF_DEFINE_NF(fwd);
