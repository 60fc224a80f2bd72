/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * lb: a stateful L4 load balancer. Virtual services (address, port,
 * protocol) map to pools of up to 32 backends. The first packet of a flow to
 * a service picks a backend by rendezvous hashing (the same choice on either
 * path, lb_hash.h) and opens a session of two entries: client -> service is
 * rewritten to the backend's address, port and MAC; backend -> client is
 * rewritten back to the service's address and port, towards the client's MAC.
 * Checksums are updated incrementally. A session whose two directions have
 * both been idle for longer than the timeout is over (the packet path ignores
 * it; a sweeper removes it).
 * Packets for no service and no session go to the local stack.
 */
#include <xnf/nf.h>
#include <xnf/rules_tables.h>
#include "lb.h"
#include "lb_hash.h"

XNF_RULES_HASH_GROWING(lb_services, struct lb_service_key, struct lb_service, LB_MAX_SERVICES);
XNF_RULES_HASH_GROWING(lb_backends, struct lb_backend_key, struct lb_backend, LB_MAX_SERVICES * 4);
XNF_MAP_HASH(lb_sessions, struct xnf_5tuple, struct lb_session, LB_DEFAULT_SESSIONS);
XNF_RULES_ARRAY(lb_config, __u32, LB_NSETTINGS);
XNF_COUNTER_NAMES("new_session", "hit", "expired", "no_backend", "not_service", "table_full");

static __always_inline __u64 lb_timeout_ns(void)
{
	__u32 slot = LB_SETTING_TIMEOUT_S, *seconds = xnf_rules_lookup(lb_config, &slot);

	return (__u64)(seconds && *seconds ? *seconds : LB_DEFAULT_TIMEOUT_S) * 1000000000ull;
}

static __always_inline __u64 lb_flow_hash(const struct xnf_5tuple *t)
{
	__u32 words[10] = {
		t->saddr[0], t->saddr[1], t->saddr[2], t->saddr[3],
		t->daddr[0], t->daddr[1], t->daddr[2], t->daddr[3],
		((__u32)t->sport << 16) | t->dport, t->proto,
	};

	return lb_hash_words(words, 10, 0);
}

/* The search for a flow's backend, one slot per call: a bpf_loop callback verified once, whatever led to it. */
struct lb_choice {
	xnf_rules_table_t backends;   /* lb_backends in force: one lookup a slot */
	struct lb_backend_key key;
	__u64 flow_hash;
	__u64 best_score;
	struct lb_backend best;
	__u32 found;
};

static long lb_score_slot(__u32 slot, void *ctx)
{
	struct lb_choice *choice = ctx;
	struct lb_backend *backend;
	__u64 score;

	choice->key.slot = slot;
	backend = xnf_rules_table_lookup(choice->backends, &choice->key);
	if (!backend || backend->state != LB_ACTIVE)
		return 0;
	score = lb_score(choice->flow_hash, backend->addr, backend->port);
	if (!choice->found || score > choice->best_score) {
		choice->best = *backend;
		choice->best_score = score;
		choice->found = 1;
	}
	return 0;
}

/* The active backend of the flow's service with the highest score; 0 if it has none. */
static __always_inline int lb_choose_backend(const struct xnf_5tuple *t, struct lb_backend *chosen)
{
	struct lb_choice choice;

	__builtin_memset(&choice, 0, sizeof(choice));
	choice.key.service.family = t->family;
	choice.key.service.proto = t->proto;
	choice.key.service.port = t->dport;
	__builtin_memcpy(choice.key.service.addr, t->daddr, sizeof(choice.key.service.addr));
	choice.flow_hash = lb_flow_hash(t);
	choice.backends = xnf_rules_table(lb_backends);
	if (!choice.backends)
		return 0;
	choice.found = xnf_loop_state(0);
	xnf_loop(LB_SLOTS_PER_SERVICE, lb_score_slot, &choice);
	*chosen = choice.best;
	return choice.found;
}

static __always_inline int lb_is_service(const struct xnf_5tuple *t)
{
	struct lb_service_key key;

	__builtin_memset(&key, 0, sizeof(key));
	key.family = t->family;
	key.proto = t->proto;
	key.port = t->dport;
	__builtin_memcpy(key.addr, t->daddr, sizeof(key.addr));
	return xnf_rules_lookup(lb_services, &key) != NULL;
}

/* Opens both directions of a session to backend; *forward gets the client -> service one. */
static __always_inline void lb_open_session(const struct xnf_pkt *pkt, const struct xnf_5tuple *t,
					    const struct ethhdr *eth, const struct lb_backend *backend, __u64 now,
					    struct lb_session *forward)
{
	struct lb_session reverse;
	struct xnf_5tuple back;

	__builtin_memset(forward, 0, sizeof(*forward));
	__builtin_memcpy(forward->addr, backend->addr, sizeof(forward->addr));
	forward->port = backend->port;
	__builtin_memcpy(forward->mac, backend->mac, ETH_ALEN);
	forward->egress = backend->egress;
	forward->rewrite = LB_REWRITE_DST;
	forward->last_seen_ns = now;

	__builtin_memset(&reverse, 0, sizeof(reverse));
	__builtin_memcpy(reverse.addr, t->daddr, sizeof(reverse.addr));
	reverse.port = t->dport;
	__builtin_memcpy(reverse.mac, eth->h_source, ETH_ALEN);
	reverse.egress = (__u8)xnf_ingress_port(pkt);
	reverse.rewrite = LB_REWRITE_SRC;
	reverse.last_seen_ns = now;

	__builtin_memset(&back, 0, sizeof(back));
	back.family = t->family;
	back.proto = t->proto;
	back.sport = backend->port;
	back.dport = t->sport;
	__builtin_memcpy(back.saddr, backend->addr, sizeof(back.saddr));
	__builtin_memcpy(back.daddr, t->saddr, sizeof(back.daddr));

	/* A full table still forwards: the hash sends the flow's next packets to the same backend. */
	if (xnf_map_update(&lb_sessions, t, forward, BPF_ANY) || xnf_map_update(&lb_sessions, &back, &reverse, BPF_ANY))
		xnf_count_event(LB_CNT_TABLE_FULL);
	else
		xnf_count_event(LB_CNT_NEW_SESSION);
}

/* Addresses, one header and one field at a time: the verifier follows no pointer chosen between them. */
static __always_inline void lb_rewrite_ip4(struct xnf_pkt *pkt, struct xnf_headers *h, const struct lb_session *s)
{
	struct iphdr *ip = h->ip4;
	__be32 old;

	if (s->rewrite == LB_REWRITE_DST) {
		old = ip->daddr;
		ip->daddr = s->addr[0];
	} else {
		old = ip->saddr;
		ip->saddr = s->addr[0];
	}
	xnf_csum_replace4(&ip->check, old, s->addr[0]);
	xnf_l4_csum_addr_changed(pkt, h, old, s->addr[0]);
}

static __always_inline void lb_rewrite_ip6(struct xnf_pkt *pkt, struct xnf_headers *h, const struct lb_session *s)
{
	__be32 *addr = s->rewrite == LB_REWRITE_DST ? (__be32 *)&h->ip6->daddr : (__be32 *)&h->ip6->saddr;

	for (__u32 i = 0; i < 4; i++) {
		__be32 old = addr[i];

		addr[i] = s->addr[i];
		xnf_l4_csum_addr_changed(pkt, h, old, s->addr[i]);
	}
}

static __always_inline void lb_rewrite_port(struct xnf_pkt *pkt, struct xnf_headers *h, const struct lb_session *s)
{
	__be16 *port;

	if (h->tcp)
		port = s->rewrite == LB_REWRITE_DST ? &h->tcp->dest : &h->tcp->source;
	else if (h->udp)
		port = s->rewrite == LB_REWRITE_DST ? &h->udp->dest : &h->udp->source;
	else
		return;
	xnf_l4_csum_field_changed(pkt, h, *port, s->port);
	*port = s->port;
}

static __always_inline xnf_verdict lb_apply(struct xnf_pkt *pkt, struct xnf_headers *h,
					    const struct lb_session *s)
{
	if (h->ip4)
		lb_rewrite_ip4(pkt, h, s);
	else if (h->ip6)
		lb_rewrite_ip6(pkt, h, s);
	lb_rewrite_port(pkt, h, s);
	/* Out from the MAC it was sent to, to the next hop's. */
	__builtin_memcpy(h->eth->h_source, h->eth->h_dest, ETH_ALEN);
	__builtin_memcpy(h->eth->h_dest, s->mac, ETH_ALEN);
	if (s->egress == xnf_ingress_port(pkt))
		return XNF_TX;
	return XNF_REDIRECT(s->egress);
}

/* An idle direction whose other direction is in use: the session lives (lb.h, lb_twin_key). */
static __always_inline int lb_twin_alive(const struct xnf_5tuple *t, const struct lb_session *s, __u64 now,
					 __u64 timeout_ns)
{
	struct lb_session *twin;
	struct xnf_5tuple key;

	lb_twin_key(t, s, &key);
	twin = xnf_map_lookup(&lb_sessions, &key);
	return twin && !xnf_idle_past(now, twin->last_seen_ns, timeout_ns);
}

/* The session the packet belongs to, opening one if it is a service's; 0 when it belongs to none. */
static __always_inline int lb_session_for(const struct xnf_pkt *pkt, const struct xnf_headers *h,
					  const struct xnf_5tuple *t, struct lb_session *out, xnf_verdict *verdict)
{
	struct lb_session *session;
	struct lb_backend backend;
	__u64 now = xnf_now_coarse_ns(), timeout_ns;   /* idle times are seconds */

	session = xnf_map_lookup(&lb_sessions, t);
	if (session) {
		timeout_ns = lb_timeout_ns();
		if (!xnf_idle_past(now, session->last_seen_ns, timeout_ns) || lb_twin_alive(t, session, now, timeout_ns)) {
			xnf_stamp(&session->last_seen_ns, now);
			xnf_count_event(LB_CNT_HIT);
			*out = *session;
			return 1;
		}
		xnf_count_event(LB_CNT_EXPIRED);
	}
	if (!lb_is_service(t)) {
		xnf_count_event(LB_CNT_NOT_SERVICE);
		*verdict = XNF_PASS;
		return 0;
	}
	if (!lb_choose_backend(t, &backend)) {
		xnf_count_event(LB_CNT_NO_BACKEND);
		*verdict = XNF_DROP;
		return 0;
	}
	lb_open_session(pkt, t, h->eth, &backend, now, out);
	return 1;
}

static __always_inline xnf_verdict lb(struct xnf_pkt *pkt)
{
	struct lb_session session;
	struct xnf_headers h;
	struct xnf_5tuple t;
	xnf_verdict verdict;

	if (xnf_parse_headers(pkt, &h) < 0)
		return XNF_DROP_MALFORMED;
	if (xnf_headers_to_5tuple(&h, &t) < 0 || (!h.tcp && !h.udp)) {
		xnf_count_event(LB_CNT_NOT_SERVICE);
		return XNF_PASS;
	}
	if (!lb_session_for(pkt, &h, &t, &session, &verdict))
		return verdict;
	return lb_apply(pkt, &h, &session);
}
XNF_DEFINE_NF(lb);
