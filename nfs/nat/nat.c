/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * nat: a stateful NAT44 (source NAT, "masquerade") between an inside port and an outside port.
 *
 * Out (a frame on the inside port): TCP, UDP and ICMP echo requests from inside get a public address (the one the
 * inside host is paired with, of up to NAT_MAX_PUBLIC) as their source and a public port (the echo identifier for
 * ICMP) in place of theirs. An inside endpoint keeps one public
 * port for every remote it talks to (endpoint-independent mapping), its own port where the pool has it free; the
 * frame leaves by the outside port towards the gateway. In (a frame on the outside port to the public address):
 * a public port leads back to its inside endpoint, but only for a remote that endpoint has sent to
 * (address-and-port-dependent filtering); ICMP errors about a translated flow are translated back, inner header
 * included, both ways. Checksums are updated incrementally.
 *
 * Mappings, bindings and sessions end after an idle time per protocol; a sweeper removes them (nat_control.c).
 * Traffic that is not to be translated (ARP, IPv6, frames to the box's own addresses, other protocols) goes to
 * the local stack.
 */
#include <xnf/nf.h>
#include <xnf/rules_tables.h>
#include "nat.h"
#include "prefix6.h"

XNF_MAP_HASH(nat_mappings, struct nat_endpoint, struct nat_mapping, NAT_DEFAULT_MAPPINGS);
XNF_MAP_HASH(nat_bindings, struct nat_public_key, struct nat_binding, NAT_DEFAULT_MAPPINGS);
XNF_MAP_HASH(nat_sessions, struct nat_session_key, struct nat_session, NAT_DEFAULT_SESSIONS);
/* What the rules and their commit step write, in two generations: a reload puts the whole file in force at once
 * (xnf/rules_tables.h), public slots, forwards read backwards and inside prefixes with it. */
XNF_RULES_ARRAY(nat_config, __u32, NAT_NSETTINGS);
XNF_RULES_ARRAY(nat_settings, struct nat_settings, 1);
XNF_RULES_ARRAY(nat_public, struct nat_public, NAT_MAX_PUBLIC);
XNF_RULES_HASH(nat_public_set, struct nat_local_addr, struct nat_public_ports, NAT_MAX_PUBLIC);
XNF_RULES_HASH(nat_public_index, struct nat_local_addr, __u32, NAT_MAX_PUBLIC);
XNF_RULES_ARRAY(nat_outside, struct nat_outside, 1);
XNF_RULES_HASH(nat_forwards, struct nat_public_key, struct nat_forward, NAT_MAX_FORWARDS);
XNF_RULES_HASH(nat_forward_back, struct nat_endpoint, struct nat_forward_back, NAT_MAX_FORWARDS);
XNF_RULES_LPM(nat_inside, struct nat_inside_prefix, __u32, NAT_MAX_INSIDE_PREFIXES);
/* The rules' inside prefixes; the commit step brings nat_inside (what frames are matched against) to them in an
 * order that never leaves a source untranslated that the rules before or after a single rule's change translate. */
XNF_RULES_HASH(nat_inside_rules, struct nat_inside_prefix, __u32, NAT_MAX_INSIDE_PREFIXES);
/* The settings in force for the frame this CPU (worker) runs: read from nat_settings once as it starts, so that every
 * later read is a plain one rather than a lookup through the rules' generations. */
XNF_MAP_PERCPU_ARRAY(nat_frame_settings, struct nat_settings, 1);
/* What the start step reads from the box: */
XNF_MAP_ARRAY(nat_port_mac, struct nat_port_mac, XNF_MAX_PORTS);
XNF_MAP_HASH(nat_local, struct nat_local_addr, __u32, NAT_MAX_LOCAL_ADDRS);
XNF_COUNTER_NAMES("new_mapping", "new_session", "out", "in", "filtered", "not_mapped", "pool_full", "table_full",
		  "icmp_error_in", "forward_in", "hairpin", "fragment", "untranslated", "icmp_error_out", "prefix6_out",
		  "prefix6_in", "untranslatable");

#define ICMP_ECHO_REPLY 0
#define ICMP_UNREACHABLE 3
#define ICMP_ECHO_REQUEST 8
#define ICMP_TIME_EXCEEDED 11

/* As the frame starts: the settings in force, into this CPU's copy. */
static __always_inline void nat_take_settings(void)
{
	__u32 zero = 0;
	struct nat_settings *in_force = xnf_rules_lookup(nat_settings, &zero);
	struct nat_settings *frame = xnf_map_lookup(&nat_frame_settings, &zero);

	if (!frame)
		return;
	if (in_force)
		__builtin_memcpy(frame, in_force, sizeof(*frame));
	else
		__builtin_memset(frame, 0, sizeof(*frame));
}

static __always_inline __u32 nat_setting(__u32 slot)
{
	__u32 zero = 0;
	struct nat_settings *frame = xnf_map_lookup(&nat_frame_settings, &zero);

	return frame && slot < NAT_NSETTINGS ? frame->value[slot] : 0;
}

static __always_inline __u64 nat_timeout_ns(__u8 proto, __u32 closing)
{
	__u32 slot = nat_timeout_slot(proto, closing), seconds = nat_setting(slot);

	return (__u64)(seconds ? seconds : nat_default_timeout_s(slot)) * 1000000000ull;
}

/* The address is one of the box's own (read at start): its traffic is the local stack's. */
static __always_inline int nat_is_local(__be32 addr)
{
	struct nat_local_addr key = { .addr = addr };

	return xnf_map_lookup(&nat_local, &key) != NULL;
}

/* The public address in a slot (0: none there). */
static __always_inline __be32 nat_public_addr(__u32 slot)
{
	struct nat_public *pub = xnf_rules_lookup(nat_public, &slot);

	return pub ? pub->addr : 0;
}

/* The slot of a public address, or -1 when the address is none of the NAT's. */
static __always_inline int nat_public_slot(__be32 addr)
{
	struct nat_local_addr key = { .addr = addr };
	__u32 *slot = xnf_rules_lookup(nat_public_index, &key);

	return slot ? (int)*slot : -1;
}

/* The port a frame's protocol translates: TCP and UDP ports, the ICMP echo identifier; 0: not translated. */
static __always_inline __be16 *nat_port_field(struct xnf_headers *h, int source, __u8 echo_type)
{
	if (h->tcp)
		return source ? &h->tcp->source : &h->tcp->dest;
	if (h->udp)
		return source ? &h->udp->source : &h->udp->dest;
	if (h->icmp && h->icmp->type == echo_type)
		return (__be16 *)&h->icmp->rest;
	return 0;
}

/* A TCP or UDP port's value (0 for anything else): the remote's end of a session. */
static __always_inline __be16 nat_port_value(const struct xnf_headers *h, int source)
{
	if (h->tcp)
		return source ? h->tcp->source : h->tcp->dest;
	if (h->udp)
		return source ? h->udp->source : h->udp->dest;
	return 0;
}

/* ICMP's checksum is always whole (no offload finishes it) and covers the echo identifier, not a pseudo-header. */
static __always_inline void nat_port_replace(struct xnf_pkt *pkt, struct xnf_headers *h, __be16 *port, __be16 new)
{
	if (h->icmp)
		xnf_csum_replace2(&h->icmp->checksum, *port, new);
	else
		xnf_l4_csum_field_changed(pkt, h, *port, new);
	*port = new;
}

/* Out of the given port, from its own MAC (where known), to next_hop. */
static __always_inline xnf_verdict nat_send(const struct xnf_pkt *pkt, struct ethhdr *eth, __u32 port,
					    const __u8 *next_hop)
{
	struct nat_port_mac *own = xnf_map_lookup(&nat_port_mac, &port);

	if (own && own->set)
		__builtin_memcpy(eth->h_source, own->mac, ETH_ALEN);
	else
		__builtin_memcpy(eth->h_source, eth->h_dest, ETH_ALEN);
	__builtin_memcpy(eth->h_dest, next_hop, ETH_ALEN);
	return port == xnf_ingress_port(pkt) ? XNF_TX : XNF_REDIRECT(port);
}

/* The search for a free public port, one candidate per call (a bpf_loop callback verified once). */
struct nat_claim {
	struct nat_public_key key;
	struct nat_binding binding;
	__u64 timeout_ns, closing_timeout_ns;
	__u32 lo, span, start, found;
};

static long nat_try_port(__u32 i, void *ctx)
{
	struct nat_claim *c = ctx;
	struct nat_binding *held;

	if (!c->span)
		return 1;
	c->key.port = bpf_htons((__u16)(c->lo + (c->start + i) % c->span));
	if (xnf_rules_lookup(nat_forwards, &c->key))
		return 0;   /* a port forward's */
	if (!xnf_map_update(&nat_bindings, &c->key, &c->binding, BPF_NOEXIST)) {
		c->found = 1;
		return 1;
	}
	held = xnf_map_lookup(&nat_bindings, &c->key);
	if (held && held->inside.addr == c->binding.inside.addr && held->inside.port == c->binding.inside.port &&
	    held->inside.proto == c->binding.inside.proto) {
		/* Another CPU (or worker) claimed it for the same endpoint a moment ago: both walk the same ports in
		 * the same order, so both agree on this one. */
		held->last_seen_ns = c->binding.last_seen_ns;
		c->found = 1;
		return 1;
	}
	if (held && xnf_idle_past(c->binding.last_seen_ns, held->last_seen_ns,
				  held->closing ? c->closing_timeout_ns : c->timeout_ns)) {
		/* A binding over: taken over, as the sweeper would have freed it. */
		xnf_map_delete(&nat_bindings, &c->key);
		if (!xnf_map_update(&nat_bindings, &c->key, &c->binding, BPF_NOEXIST)) {
			c->found = 1;
			return 1;
		}
	}
	return 0;
}

/* The slot of the public address an inside host's mappings take: paired (RFC 4787 REQ-2), the host's address
 * modulo the slots in use, the next slot in use where that one is empty. */
static __always_inline struct nat_public *nat_paired_pool(__be32 inside_addr, __u32 *slot)
{
	__u32 slots = nat_setting(NAT_SETTING_PUBLIC_SLOTS), first;
	xnf_rules_table_t public = xnf_rules_table(nat_public);
	struct nat_public *pool;

	if (!public || !slots || slots > NAT_MAX_PUBLIC)
		return 0;
	first = bpf_ntohl(inside_addr) % slots;
	for (__u32 i = 0; i < NAT_MAX_PUBLIC; i++) {
		*slot = (first + i) % slots;
		pool = xnf_rules_table_lookup(public, slot);
		if (pool && pool->addr)
			return pool;
	}
	return 0;
}

/* A public port for the inside endpoint on its paired address (its slot in *slot): its own port where the pool has
 * it free (as Linux keeps it), else the next free one from a place its hash picks. 0 when none of NAT_PORT_TRIES is
 * free. */
static __always_inline __be16 nat_claim_port(const struct nat_endpoint *in, const __u8 *mac, __u64 now, __u32 *slot)
{
	struct nat_public *pool = nat_paired_pool(in->addr, slot);
	struct nat_claim c;
	__u32 own;

	if (!pool || pool->port_hi < pool->port_lo)
		return 0;
	__builtin_memset(&c, 0, sizeof(c));
	c.key.proto = in->proto;
	c.key.addr_index = (__u8)*slot;
	c.binding.inside = *in;
	__builtin_memcpy(c.binding.mac, mac, ETH_ALEN);
	c.binding.last_seen_ns = now;
	c.timeout_ns = nat_timeout_ns(in->proto, 0);
	c.closing_timeout_ns = nat_timeout_ns(in->proto, 1);
	c.lo = pool->port_lo;
	c.span = (__u32)pool->port_hi - pool->port_lo + 1;
	own = bpf_ntohs(in->port);
	c.start = own >= c.lo && own - c.lo < c.span ? own - c.lo : (in->addr ^ (own * 2654435761u)) % c.span;
	xnf_loop(NAT_PORT_TRIES, nat_try_port, &c);
	return c.found ? c.key.port : 0;
}

/* The inside endpoint's mapping while it holds: the binding behind its public port still its own, and its address
 * still in the rules (one that left them leaves its mappings to be made afresh). *binding: that binding. */
static __always_inline struct nat_mapping *nat_mapping_held(const struct nat_endpoint *in,
							    struct nat_binding **binding)
{
	struct nat_mapping *mapping = xnf_map_lookup(&nat_mappings, in);
	struct nat_public_key key = { .proto = in->proto };

	if (!mapping)
		return 0;
	key.port = mapping->public_port;
	key.addr_index = mapping->addr_index;
	*binding = xnf_map_lookup(&nat_bindings, &key);
	if (!*binding || (*binding)->inside.addr != in->addr || (*binding)->inside.port != in->port ||
	    !nat_public_addr(mapping->addr_index))
		return 0;
	return mapping;
}

/* The inside endpoint's public port (its address's slot in *slot): its mapping while it holds, else a new one. */
static __always_inline __be16 nat_public_port(const struct nat_endpoint *in, const __u8 *mac, __u64 now, __u32 *slot)
{
	struct nat_public_key key = { .proto = in->proto };
	struct nat_mapping *mapping, fresh;
	struct nat_binding *binding;

	mapping = nat_mapping_held(in, &binding);
	if (mapping) {
		xnf_stamp(&mapping->last_seen_ns, now);
		xnf_stamp(&binding->last_seen_ns, now);
		*slot = mapping->addr_index;
		return mapping->public_port;
	}
	__builtin_memset(&fresh, 0, sizeof(fresh));
	fresh.public_port = nat_claim_port(in, mac, now, slot);
	if (!fresh.public_port) {
		xnf_count_event(NAT_CNT_POOL_FULL);
		return 0;
	}
	fresh.addr_index = (__u8)*slot;
	fresh.last_seen_ns = now;
	if (xnf_map_update(&nat_mappings, in, &fresh, BPF_ANY)) {
		key.port = fresh.public_port;
		key.addr_index = fresh.addr_index;
		xnf_map_delete(&nat_bindings, &key);
		xnf_count_event(NAT_CNT_TABLE_FULL);
		return 0;
	}
	xnf_count_event(NAT_CNT_NEW_MAPPING);
	return fresh.public_port;
}

/* Notes that the inside endpoint talks to the remote: the remote may answer from now on. */
static __always_inline int nat_touch_session(const struct nat_endpoint *in, __be32 remote_addr, __be16 remote_port,
					     __u64 now)
{
	struct nat_session_key key;
	struct nat_session *session, fresh = { .last_seen_ns = now };

	__builtin_memset(&key, 0, sizeof(key));
	key.inside = *in;
	key.remote_addr = remote_addr;
	key.remote_port = remote_port;
	session = xnf_map_lookup(&nat_sessions, &key);
	if (session) {
		xnf_stamp(&session->last_seen_ns, now);
		return 0;
	}
	if (xnf_map_update(&nat_sessions, &key, &fresh, BPF_ANY)) {
		xnf_count_event(NAT_CNT_TABLE_FULL);
		return -1;
	}
	xnf_count_event(NAT_CNT_NEW_SESSION);
	return 0;
}

/* The frame's source becomes the public address and port (port: the field that holds the source port). */
static __always_inline void nat_set_source(struct xnf_pkt *pkt, struct xnf_headers *h, __be16 *port, __be32 public_addr,
					   __be16 public_port)
{
	struct iphdr *ip = h->ip4;
	__be32 old = ip->saddr;

	ip->saddr = public_addr;
	xnf_csum_replace4(&ip->check, old, public_addr);
	xnf_l4_csum_addr_changed(pkt, h, old, public_addr);
	nat_port_replace(pkt, h, port, public_port);
}

/* TCP: a FIN or RST puts the connection's session and its endpoint's binding on the closing idle time, a SYN takes
 * them off it. */
static __always_inline void nat_track_tcp(const struct xnf_headers *h, const struct nat_endpoint *in,
					  __be32 remote_addr, __be16 remote_port, __be16 public_port, __u32 slot)
{
	struct nat_public_key public_key = { .port = public_port, .proto = IPPROTO_TCP, .addr_index = (__u8)slot };
	struct nat_session_key key;
	struct nat_session *session;
	struct nat_binding *binding;
	__u32 closing;

	if (!h->tcp || !(h->tcp->fin || h->tcp->rst || h->tcp->syn))
		return;
	closing = h->tcp->fin || h->tcp->rst;
	__builtin_memset(&key, 0, sizeof(key));
	key.inside = *in;
	key.remote_addr = remote_addr;
	key.remote_port = remote_port;
	session = xnf_map_lookup(&nat_sessions, &key);
	if (session)
		session->closing = closing;
	binding = xnf_map_lookup(&nat_bindings, &public_key);
	if (binding && binding->inside.addr == in->addr && binding->inside.port == in->port)
		binding->closing = closing;
}

/* The public port an inside endpoint's frame leaves from (its address's slot in *slot): its port forward's (on the
 * first slot's address), or its mapping's with the session to the remote noted; 0 when it gets none (counted). */
static __always_inline __be16 nat_source_port(const struct xnf_headers *h, const struct nat_endpoint *in,
					      __be32 remote_addr, __be16 remote_dport, __u64 now, __u32 *slot)
{
	struct nat_forward_back *back = xnf_rules_lookup(nat_forward_back, in);
	__be16 public_port, remote_port;

	if (back) {
		*slot = 0;
		return back->public_port;
	}
	public_port = nat_public_port(in, h->eth->h_source, now, slot);
	/* An echo's identifier names both ends: the remote's "port" is the identifier it answers to. */
	remote_port = h->icmp ? public_port : remote_dport;
	if (!public_port || nat_touch_session(in, remote_addr, remote_port, now))
		return 0;
	nat_track_tcp(h, in, remote_addr, remote_port, public_port, *slot);
	return public_port;
}

/* Where an ICMP error's inner header keeps what the NAT changed: the flow's public port, the remote's port, the
 * inner checksum (0: not in the frame) and whether that checksum covers the addresses. */
struct nat_inner {
	__be16 *port, *remote_port, *check;
	int pseudo;
};

/* The inner frame's fields, as far as the ICMP error carries them (8 bytes past its IP header at least). */
static __always_inline int nat_inner_fields(const struct xnf_pkt *pkt, const struct iphdr *inner, struct nat_inner *f)
{
	__be16 *l4 = (__be16 *)(inner + 1);

	if ((void *)(l4 + 4) > pkt->data_end)
		return -1;
	f->port = l4;
	f->remote_port = l4 + 1;
	f->check = 0;
	f->pseudo = 1;
	if (inner->protocol == IPPROTO_UDP) {
		f->check = l4 + 3;
	} else if (inner->protocol == IPPROTO_TCP) {
		if ((void *)(l4 + 9) <= pkt->data_end)
			f->check = l4 + 8;
	} else if (inner->protocol == IPPROTO_ICMP && *(__u8 *)l4 == ICMP_ECHO_REQUEST) {
		/* An echo's identifier stands for both ports (offset 4); its checksum covers no addresses. */
		f->port = l4 + 2;
		f->remote_port = l4 + 2;
		f->check = l4 + 1;
		f->pseudo = 0;
	} else {
		return -1;
	}
	return 0;
}

/* Rewrites a 16-bit field inside the ICMP message, and the message's checksum with it. */
static __always_inline void nat_icmp_set2(struct xnf_headers *h, __be16 *field, __be16 value)
{
	xnf_csum_replace2(&h->icmp->checksum, *field, value);
	*field = value;
}

/* The public port an inside endpoint holds now (its port forward's, or its mapping's while the binding is its own),
 * without touching anything; 0 if it holds none. */
static __always_inline __be16 nat_public_port_held(const struct nat_endpoint *in, __u32 *slot)
{
	struct nat_forward_back *back = xnf_rules_lookup(nat_forward_back, in);
	struct nat_binding *binding;
	struct nat_mapping *mapping;

	*slot = 0;
	if (back)
		return back->public_port;
	mapping = nat_mapping_held(in, &binding);
	if (!mapping)
		return 0;
	*slot = mapping->addr_index;
	return mapping->public_port;
}

/*
 * An ICMP error from inside about a frame that came in translated (the inside host's port unreachable, a
 * fragmentation needed): its inner header is that frame as the inside host got it, to the inside endpoint, which
 * goes back to what the remote sent, to the public address and port; the error leaves from the public address, so
 * the remote's application and path-MTU discovery see it as they would without the NAT.
 */
static __always_inline xnf_verdict nat_icmp_error_out(const struct xnf_pkt *pkt, struct xnf_headers *h,
						      const struct nat_outside *outside)
{
	struct iphdr *ip = h->ip4, *inner = (struct iphdr *)(h->icmp + 1);
	struct nat_endpoint in;
	struct nat_inner f;
	__be16 public_port;
	__be32 public_addr;
	__sum16 check;
	__u32 slot;

	if ((void *)(inner + 1) > pkt->data_end || inner->ihl != 5 || inner->daddr != ip->saddr ||
	    nat_inner_fields(pkt, inner, &f) || !f.pseudo)
		goto untranslated;
	__builtin_memset(&in, 0, sizeof(in));
	in.addr = inner->daddr;
	in.port = *f.remote_port;   /* the inner frame came to the inside endpoint: its destination port */
	in.proto = inner->protocol;
	public_port = nat_public_port_held(&in, &slot);
	public_addr = nat_public_addr(slot);
	if (!public_port || !public_addr)
		goto untranslated;
	if (f.check && *f.check) {   /* a UDP checksum of 0 is none */
		check = *f.check;
		xnf_csum_replace4(&check, in.addr, public_addr);
		xnf_csum_replace2(&check, in.port, public_port);
		nat_icmp_set2(h, f.check, check);
	}
	nat_icmp_set2(h, f.remote_port, public_port);
	check = inner->check;
	xnf_csum_replace4(&check, in.addr, public_addr);
	nat_icmp_set2(h, &inner->check, check);
	xnf_csum_replace4(&h->icmp->checksum, in.addr, public_addr);
	inner->daddr = public_addr;
	ip->saddr = public_addr;
	xnf_csum_replace4(&ip->check, in.addr, public_addr);
	xnf_count_event(NAT_CNT_ICMP_ERROR_OUT);
	return nat_send(pkt, h->eth, outside->port, outside->gateway_mac);
untranslated:
	xnf_count_event(NAT_CNT_UNTRANSLATED);
	return XNF_PASS;
}

/* Whether a source on the inside port is one to translate: any, unless the rules name inside prefixes. The count is
 * read as it is now, not from the frame's copy, right before the prefixes: a single rule's change sets the two in an
 * order that is safe only for reads made so (nat_control.c, commit_inside); a count copied as the frame started
 * let a source out untranslated while its prefix was deleted (test_rule_churn). */
static __always_inline int nat_inside_source(__be32 saddr)
{
	struct nat_inside_prefix key = { .prefixlen = 32, .addr = saddr };
	struct nat_settings *in_force;
	__u32 zero = 0;

	in_force = xnf_rules_lookup(nat_settings, &zero);
	return !(in_force && in_force->value[NAT_SETTING_INSIDE_PREFIXES]) || xnf_rules_lookup(nat_inside, &key);
}

static __always_inline xnf_verdict nat_untranslated(void)
{
	xnf_count_event(NAT_CNT_UNTRANSLATED);
	return XNF_PASS;
}

/* A frame the rules say to translate that the NAT cannot (no outside, no public address, no inside port, a protocol
 * without ports): dropped, as the stack would forward it with the inside source (issue 69, row 9). */
static __always_inline xnf_verdict nat_untranslatable(void)
{
	xnf_count_event(NAT_CNT_UNTRANSLATABLE);
	return XNF_DROP;
}

/* For the box itself or its link: the stack takes these as they are and never forwards them. */
static __always_inline int nat_for_the_box(const struct xnf_headers *h)
{
	return xnf_is_link_scope(h) || nat_is_local(h->ip4->daddr);
}

/* A frame from inside, to be translated out (outside: the rules' outside, if given; some public address must be). */
static __always_inline xnf_verdict nat_out(struct xnf_pkt *pkt, struct xnf_headers *h,
					   const struct nat_outside *outside)
{
	int translating = outside && outside->set && nat_setting(NAT_SETTING_PUBLIC_SLOTS);
	struct iphdr *ip = h->ip4;
	struct nat_endpoint in;
	__be16 *port, public_port;
	__be32 public_addr;
	__u32 slot = 0;

	if (nat_for_the_box(h))
		return nat_untranslated();
	if (!translating)
		return nat_untranslatable();
	if (h->icmp && (h->icmp->type == ICMP_UNREACHABLE || h->icmp->type == ICMP_TIME_EXCEEDED))
		return nat_icmp_error_out(pkt, h, outside);
	port = nat_port_field(h, 1, ICMP_ECHO_REQUEST);
	if (!port)
		return nat_untranslatable();
	__builtin_memset(&in, 0, sizeof(in));
	in.addr = ip->saddr;
	in.port = *port;
	in.proto = h->l4_proto;
	public_port = nat_source_port(h, &in, ip->daddr, nat_port_value(h, 0), xnf_now_coarse_ns(), &slot);
	if (!public_port)
		return XNF_DROP;   /* counted where the port was refused */
	public_addr = nat_public_addr(slot);
	if (!public_addr)
		return nat_untranslatable();   /* its slot's address deleted while the frame ran */
	nat_set_source(pkt, h, port, public_addr, public_port);
	xnf_count_event(NAT_CNT_OUT);
	return nat_send(pkt, h->eth, outside->port, outside->gateway_mac);
}

/* The binding behind a public port of the address in slot, still in use. */
static __always_inline struct nat_binding *nat_binding_for(__be16 public_port, __u8 proto, __u32 slot, __u64 now)
{
	struct nat_public_key key = { .port = public_port, .proto = proto, .addr_index = (__u8)slot };
	struct nat_binding *binding = xnf_map_lookup(&nat_bindings, &key);

	if (!binding || xnf_idle_past(now, binding->last_seen_ns, nat_timeout_ns(proto, binding->closing)))
		return 0;
	return binding;
}

/* The remote has been sent to by the inside endpoint, lately. */
static __always_inline int nat_session_open(const struct nat_endpoint *in, __be32 remote_addr, __be16 remote_port,
					    __u64 now)
{
	struct nat_session_key key;
	struct nat_session *session;

	__builtin_memset(&key, 0, sizeof(key));
	key.inside = *in;
	key.remote_addr = remote_addr;
	key.remote_port = remote_port;
	session = xnf_map_lookup(&nat_sessions, &key);
	if (!session || xnf_idle_past(now, session->last_seen_ns, nat_timeout_ns(in->proto, session->closing)))
		return 0;
	xnf_stamp(&session->last_seen_ns, now);
	return 1;
}

/* Out of the inside port, to the inside host's MAC. */
static __always_inline xnf_verdict nat_deliver(const struct xnf_pkt *pkt, struct ethhdr *eth, const __u8 *mac)
{
	__u32 inside = nat_setting(NAT_SETTING_INSIDE_PORT);

	return nat_send(pkt, eth, inside ? inside - 1 : xnf_ingress_port(pkt), mac);
}


/*
 * An ICMP error from outside about a translated flow, from a remote the flow went to: its inner header is the
 * flow's frame as it left (from the public address and port), which goes back to what the inside host sent.
 * Every byte changed inside the ICMP message changes its checksum too.
 */
static __always_inline xnf_verdict nat_icmp_error_in(const struct xnf_pkt *pkt, struct xnf_headers *h, __u64 now)
{
	struct iphdr *ip = h->ip4, *inner = (struct iphdr *)(h->icmp + 1);
	struct nat_binding *binding;
	struct nat_inner f;
	__be32 public_addr;
	__sum16 check;

	if ((void *)(inner + 1) > pkt->data_end || inner->ihl != 5 || inner->saddr != ip->daddr ||
	    nat_inner_fields(pkt, inner, &f))
		goto unmapped;
	binding = nat_binding_for(*f.port, inner->protocol, (__u32)nat_public_slot(ip->daddr), now);
	if (!binding)
		goto unmapped;
	if (!nat_session_open(&binding->inside, inner->daddr, *f.remote_port, now)) {
		xnf_count_event(NAT_CNT_FILTERED);
		return XNF_DROP;
	}
	public_addr = inner->saddr;
	if (f.check && (*f.check || !f.pseudo)) {   /* a UDP checksum of 0 is none */
		check = *f.check;
		if (f.pseudo)
			xnf_csum_replace4(&check, public_addr, binding->inside.addr);
		xnf_csum_replace2(&check, *f.port, binding->inside.port);
		nat_icmp_set2(h, f.check, check);
	}
	nat_icmp_set2(h, f.port, binding->inside.port);
	check = inner->check;
	xnf_csum_replace4(&check, public_addr, binding->inside.addr);
	nat_icmp_set2(h, &inner->check, check);
	xnf_csum_replace4(&h->icmp->checksum, public_addr, binding->inside.addr);
	inner->saddr = binding->inside.addr;
	ip->daddr = binding->inside.addr;
	xnf_csum_replace4(&ip->check, public_addr, binding->inside.addr);
	xnf_count_event(NAT_CNT_ICMP_ERROR_IN);
	return nat_deliver(pkt, h->eth, binding->mac);
unmapped:
	xnf_count_event(NAT_CNT_NOT_MAPPED);
	return XNF_PASS;
}

/* To the inside endpoint, out of the inside port to its host's MAC. */
static __always_inline xnf_verdict nat_rewrite_in(struct xnf_pkt *pkt, struct xnf_headers *h, __be16 *port,
						  const struct nat_endpoint *inside, const __u8 *mac)
{
	struct iphdr *ip = h->ip4;
	__be32 old = ip->daddr;

	ip->daddr = inside->addr;
	xnf_csum_replace4(&ip->check, old, inside->addr);
	xnf_l4_csum_addr_changed(pkt, h, old, inside->addr);
	nat_port_replace(pkt, h, port, inside->port);
	return nat_deliver(pkt, h->eth, mac);
}

/* A public port no one inside holds: a port forward's (on the first slot's address), from any remote, or the box's
 * own. */
static __always_inline xnf_verdict nat_forward_in(struct xnf_pkt *pkt, struct xnf_headers *h, __be16 *port,
						  __u32 slot)
{
	struct nat_public_key key = { .port = *port, .proto = h->l4_proto, .addr_index = (__u8)slot };
	struct nat_forward *forward;

	forward = xnf_rules_lookup(nat_forwards, &key);
	if (!forward) {
		xnf_count_event(NAT_CNT_NOT_MAPPED);
		return XNF_PASS;
	}
	xnf_count_event(NAT_CNT_FORWARD_IN);
	return nat_rewrite_in(pkt, h, port, &forward->inside, forward->mac);
}

/* A frame to the public address in slot. */
static __always_inline xnf_verdict nat_in(struct xnf_pkt *pkt, struct xnf_headers *h, __u32 slot)
{
	struct iphdr *ip = h->ip4;
	struct nat_binding *binding;
	__be16 *port, remote_port;
	__u64 now = xnf_now_coarse_ns();   /* idle times are seconds */

	if (h->icmp && (h->icmp->type == ICMP_UNREACHABLE || h->icmp->type == ICMP_TIME_EXCEEDED))
		return nat_icmp_error_in(pkt, h, now);
	port = nat_port_field(h, 0, ICMP_ECHO_REPLY);
	binding = port ? nat_binding_for(*port, h->l4_proto, slot, now) : 0;
	if (!binding && port && !h->icmp)
		return nat_forward_in(pkt, h, port, slot);
	if (!binding) {
		xnf_count_event(NAT_CNT_NOT_MAPPED);
		return XNF_PASS;   /* the box's own traffic, or an identifier no one inside holds */
	}
	remote_port = h->icmp ? *port : nat_port_value(h, 1);
	if (!nat_session_open(&binding->inside, ip->saddr, remote_port, now)) {
		xnf_count_event(NAT_CNT_FILTERED);
		return XNF_DROP;
	}
	xnf_stamp(&binding->last_seen_ns, now);
	nat_track_tcp(h, &binding->inside, ip->saddr, remote_port, *port, slot);
	xnf_count_event(NAT_CNT_IN);
	return nat_rewrite_in(pkt, h, port, &binding->inside, binding->mac);
}

/*
 * Hairpinning (RFC 4787 REQ-9): an inside host addressing another by its public address and port (a mapping, or a
 * port forward) is translated both ways, as if it came from outside: its source to its own public address and
 * port, its destination to the other inside endpoint, and sent back out of the inside port.
 */
static __always_inline xnf_verdict nat_hairpin(struct xnf_pkt *pkt, struct xnf_headers *h, __u32 to_slot)
{
	struct nat_public_key key = { .proto = h->l4_proto, .addr_index = (__u8)to_slot };
	__be32 public_addr = h->ip4->daddr, own_addr;
	__u32 own_slot = 0;
	struct iphdr *ip = h->ip4;
	struct nat_binding *binding;
	struct nat_forward *forward;
	struct nat_endpoint in, to;
	__be16 *sport, *dport, public_port;
	__u64 now = xnf_now_coarse_ns();   /* idle times are seconds */
	__u8 mac[ETH_ALEN];

	sport = nat_port_field(h, 1, ICMP_ECHO_REQUEST);
	dport = nat_port_field(h, 0, ICMP_ECHO_REQUEST);
	if (!sport || !dport || h->icmp) {
		xnf_count_event(NAT_CNT_NOT_MAPPED);
		return XNF_PASS;   /* the box's own public address, asked from inside */
	}
	key.port = *dport;
	binding = nat_binding_for(*dport, h->l4_proto, to_slot, now);
	forward = binding ? 0 : xnf_rules_lookup(nat_forwards, &key);
	if (!binding && !forward) {
		xnf_count_event(NAT_CNT_NOT_MAPPED);
		return XNF_PASS;
	}
	__builtin_memset(&in, 0, sizeof(in));
	in.addr = ip->saddr;
	in.port = *sport;
	in.proto = h->l4_proto;
	public_port = nat_source_port(h, &in, public_addr, *dport, now, &own_slot);
	own_addr = nat_public_addr(own_slot);
	if (!public_port || !own_addr)
		return XNF_DROP;
	if (binding) {
		if (!nat_session_open(&binding->inside, own_addr, public_port, now)) {
			xnf_count_event(NAT_CNT_FILTERED);
			return XNF_DROP;
		}
		xnf_stamp(&binding->last_seen_ns, now);
		to = binding->inside;
		__builtin_memcpy(mac, binding->mac, ETH_ALEN);
	} else {
		to = forward->inside;
		__builtin_memcpy(mac, forward->mac, ETH_ALEN);
	}
	nat_set_source(pkt, h, sport, own_addr, public_port);
	xnf_count_event(NAT_CNT_HAIRPIN);
	return nat_rewrite_in(pkt, h, dport, &to, mac);
}

/* IPv6 (NPTv6, prefix6.h): a destination in an outside prefix translated and handed to the local stack, which routes
 * it inside; a source in an inside prefix, from the inside port, translated and sent out as IPv4 is. */
static __always_inline xnf_verdict nat_ip6(const struct xnf_pkt *pkt, struct xnf_headers *h, __u32 inside,
					   const struct nat_outside *outside)
{
	int done = nat_prefix6_map(xnf_rules_table(nat_prefix6_in), (__u8 *)&h->ip6->daddr);

	if (done < 0)
		return XNF_DROP;   /* an identifier of 0xffff words: not translatable (RFC 6296 3.7) */
	if (done) {
		xnf_count_event(NAT_CNT_PREFIX6_IN);
		return XNF_PASS;
	}
	/* Without an inside port, any port may be the inside one. */
	if ((!inside || xnf_ingress_port(pkt) == inside - 1) && nat_prefix6_leaves(h)) {
		done = nat_prefix6_map(xnf_rules_table(nat_prefix6_out), (__u8 *)&h->ip6->saddr);
		if (done < 0)
			return XNF_DROP;
		if (done && !(inside && outside && outside->set))
			return nat_untranslatable();
		if (done) {
			xnf_count_event(NAT_CNT_PREFIX6_OUT);
			return nat_send(pkt, h->eth, outside->port, outside->gateway_mac);
		}
	}
	return nat_untranslated();
}

static __always_inline xnf_verdict nat(struct xnf_pkt *pkt)
{
	__u32 inside, zero = 0;
	struct nat_outside *outside;
	struct xnf_headers h;
	int slot;

	if (xnf_parse_headers(pkt, &h) < 0)
		return XNF_DROP_MALFORMED;
	nat_take_settings();
	inside = nat_setting(NAT_SETTING_INSIDE_PORT);
	if (h.ip6)
		return nat_ip6(pkt, &h, inside, xnf_rules_lookup(nat_outside, &zero));
	if (!h.ip4)
		return nat_untranslated();
	if (!inside)   /* which side a frame came from is unknown: only the box's own are safe to hand on */
		return nat_for_the_box(&h) ? nat_untranslated() : nat_untranslatable();
	if (h.is_fragment) {
		/* Linux reassembles before it translates; a later fragment here has no port to go by. */
		xnf_count_event(NAT_CNT_FRAGMENT);
		return XNF_DROP;
	}
	outside = xnf_rules_lookup(nat_outside, &zero);
	/* The public addresses first: one port can be both inside and outside (a NAT on a stick), where a frame to a
	 * public address is taken as from outside; with ports apart, one from inside is hairpinned. */
	slot = nat_public_slot(h.ip4->daddr);
	if (slot >= 0) {
		if (xnf_ingress_port(pkt) == inside - 1 && outside && outside->set && outside->port != inside - 1)
			return nat_inside_source(h.ip4->saddr) ? nat_hairpin(pkt, &h, (__u32)slot) : nat_untranslated();
		return nat_in(pkt, &h, (__u32)slot);
	}
	if (xnf_ingress_port(pkt) == inside - 1)
		return nat_inside_source(h.ip4->saddr) ? nat_out(pkt, &h, outside) : nat_untranslated();
	return nat_untranslated();
}
XNF_DEFINE_NF(nat);
