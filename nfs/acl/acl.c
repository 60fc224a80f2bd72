/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * acl: an ordered access list with prefixes, port ranges, protocols, TCP flags, VLAN ids and connection states; the
 * rule with the lowest sequence number that matches decides, else the default. The rules are compiled into a tuple
 * space (acl.h) that a packet searches in one lookup per shape of rule, not one per rule. Where rules name a
 * connection state (<xnf/conntrack.h>), a new connection enters the table only with a frame the rules let through.
 * Non-IP frames (ARP, neighbour discovery) are forwarded so the link keeps working; frames with broken headers are
 * dropped and counted.
 */
#include <xnf/nf.h>
#include <xnf/conntrack.h>
#include "acl.h"

XNF_MAP_HASH_GROWING(acl_rules, struct acl_rule_key, struct acl_rule, ACL_MAX_RULES);
XNF_MAP_HASH_GROWING(acl_entries, struct acl_key, struct acl_entry, ACL_MAX_ENTRIES);
XNF_MAP_ARRAY(acl_tuples, struct acl_tuple, ACL_GENERATIONS * ACL_MAX_TUPLES);
XNF_MAP_ARRAY(acl_config, __u32, ACL_NSETTINGS);
XNF_MAP_ARRAY(acl_steady_below, __u32, ACL_GENERATIONS);
XNF_CT_TABLE(acl_ct, ACL_CT_ENTRIES);
XNF_COUNTER_NAMES("rule_allow", "rule_drop", "default_allow", "default_drop", "non_ip", "ct_new", "ct_full",
		  "ct_early_drop", "ct_fragment_unmatched", "ct_bad_checksum");

/* The packet's fields, and the best match found so far, carried through the search over the tuples. */
struct acl_search {
	struct acl_key packet;  /* unmasked; .tuple unused */
	__u32 base;             /* the generation's first tuple */
	__u32 tuples;
	__u32 best_seq;
	__u32 action;
	__u32 found;
	__u16 vlan_c;           /* the id of an outermost 802.1Q tag (0: none) */
	__u16 qinq[2];          /* the ids of an 802.1ad tag and the 802.1Q tag after it (0: not such a pair) */
};

static __always_inline __u32 acl_setting(__u32 slot)
{
	__u32 *value = xnf_map_lookup(&acl_config, &slot);

	return value ? *value : 0;
}

static __always_inline void acl_mask_addr(__be32 *out, const __be32 *addr, int len)
{
	for (int w = 0; w < 4; w++)
		out[w] = addr[w] & acl_word_mask(len - 32 * w);
}

/* One tuple: the packet masked by it, looked up. Returns 1 to end the search (no later tuple can do better). */
static long acl_try_tuple(__u32 i, void *ctx)
{
	struct acl_search *s = ctx;
	__u32 slot = s->base + i;
	struct acl_tuple *t;
	struct acl_entry *e;
	struct acl_key key;

	if (i >= s->tuples)
		return 1;
	t = xnf_map_lookup(&acl_tuples, &slot);
	if (!t || (s->found && t->best_seq > s->best_seq))
		return 1;
	if (t->family != s->packet.family)
		return 0;
	__builtin_memset(&key, 0, sizeof(key));
	key.tuple = (__u16)slot;
	key.family = t->family;
	key.proto = t->proto_counts ? s->packet.proto : 0;
	key.flags = s->packet.flags & t->flags_mask;
	key.ct_state = t->ct_counts ? s->packet.ct_state : 0;
	key.vlan[0] = t->vlan_depth == 1 ? s->vlan_c : t->vlan_depth == 2 ? s->qinq[0] : 0;
	key.vlan[1] = t->vlan_depth == 2 ? s->qinq[1] : 0;
	key.sport = s->packet.sport & acl_port_mask(t->sport_len);
	key.dport = s->packet.dport & acl_port_mask(t->dport_len);
	acl_mask_addr(key.src, s->packet.src, t->src_len);
	acl_mask_addr(key.dst, s->packet.dst, t->dst_len);
	e = xnf_map_lookup(&acl_entries, &key);
	if (e && (!s->found || e->seq < s->best_seq)) {
		s->best_seq = e->seq;
		s->action = e->action;
		s->found = 1;
	}
	return 0;
}

static __always_inline void acl_packet_fields(const struct xnf_5tuple *t, __u8 tcp_flags, __u8 ct_state,
					      struct acl_key *p)
{
	__builtin_memset(p, 0, sizeof(*p));
	p->family = t->family;
	p->proto = t->proto;
	p->flags = tcp_flags;
	p->ct_state = ct_state;
	p->sport = bpf_ntohs(t->sport);
	p->dport = bpf_ntohs(t->dport);
	__builtin_memcpy(p->src, t->saddr, sizeof(p->src));
	__builtin_memcpy(p->dst, t->daddr, sizeof(p->dst));
}

/* The VLAN ids a rule can match, packed for acl_search_rules: an outermost 802.1Q tag's, as nftables' `vlan id`
 * (bits 0-15), and QinQ as 802.1ad defines it, an S-tag's then a C-tag's (bits 16-31, 32-47); 0 where no such tag. */
static __always_inline __u64 acl_vlan_ids(const struct xnf_headers *h)
{
	__u64 ids = 0;

	if (h->vlan_depth >= 1 && h->vlan_proto[0] == ETH_P_8021Q)
		ids = h->vlan_id[0];
	if (h->vlan_depth >= 2 && h->vlan_proto[0] == ETH_P_8021AD && h->vlan_proto[1] == ETH_P_8021Q)
		ids |= (__u64)h->vlan_id[0] << 16 | (__u64)h->vlan_id[1] << 32;
	return ids;
}

_Static_assert(ACL_CNT_RULE_ALLOW == 0 && ACL_CNT_RULE_DROP == 1 && ACL_CNT_DEFAULT_ALLOW == 2 &&
	       ACL_CNT_DEFAULT_DROP == 3, "an outcome is its counter, in two bits, the low one for a drop");

/* What decided a frame, as its counter: a rule or the default, allowing or dropping (the low bit: dropping). */
static __always_inline __u32 acl_outcome(__u32 by_rule, __u32 action)
{
	return (by_rule ? ACL_CNT_RULE_ALLOW : ACL_CNT_DEFAULT_ALLOW) + (action == ACL_DROP);
}

/* Beside the outcome in acl_search_rules' answer: the decision holds for the direction's later established frames
 * (acl_steady_below's, acl.h). */
#define ACL_DECISION_STEADY 4
#define ACL_OUTCOME_BITS 3

static __always_inline __u32 acl_steady(const struct acl_search *s, __u32 generation)
{
	__u32 *below = xnf_map_lookup(&acl_steady_below, &generation);

	if (!below)
		return 0;
	return s->found ? s->best_seq < *below : *below == ACL_NO_VARYING_RULE;
}

/* The rules' outcome for the frame (acl_outcome's), with ACL_DECISION_STEADY where it holds for the connection's
 * direction: the tuples of the generation searched in turn. Verified apart: checked once on its own, its cost to the
 * verifier no longer grows with the paths of the parse and the tracker. */
XNF_VERIFIED_APART __u32 acl_search_rules(const struct xnf_5tuple *t, __u8 tcp_flags, __u8 ct_state, __u64 vlan_ids,
					  __u32 generation)
{
	struct acl_search s;

	if (!t)
		return acl_outcome(0, ACL_DROP);   /* never: t is the caller's */
	__builtin_memset(&s, 0, sizeof(s));
	acl_packet_fields(t, tcp_flags, ct_state, &s.packet);
	s.vlan_c = (__u16)vlan_ids;
	s.qinq[0] = (__u16)(vlan_ids >> 16);
	s.qinq[1] = (__u16)(vlan_ids >> 32);
	s.base = generation * ACL_MAX_TUPLES;
	s.tuples = acl_setting(ACL_SETTING_TUPLES_0 + generation);
	s.found = xnf_loop_state(0);
	s.best_seq = xnf_loop_state(0);
	xnf_loop(ACL_MAX_TUPLES, acl_try_tuple, &s);
	if (!s.found)
		s.action = acl_setting(ACL_SETTING_DEFAULT);
	return acl_outcome(s.found, s.action) | (acl_steady(&s, generation) ? ACL_DECISION_STEADY : 0);
}

/* The outcome kept in an established connection's entry for the frame's direction under these rules (epoch), or -1.
 * Four bits a direction in nf_note: a kept bit and the outcome. */
#define ACL_KEPT 4

static __always_inline int acl_kept_outcome(const struct xnf_ct *ct, __u32 epoch)
{
	__u32 bits;

	if (!ct->in_table || ct->state != XNF_CT_ESTABLISHED || ct->found.nf_epoch != epoch)
		return -1;
	bits = (__u32)ct->found.nf_note >> (4 * (ct->sender & 1));
	return bits & ACL_KEPT ? (int)(bits & 3) : -1;
}

/* Once per direction and epoch (a lookup again). Two CPUs writing the two directions at once may lose one's bits:
 * its next frame searches again. */
static __always_inline void acl_keep_outcome(const struct xnf_ct *ct, __u32 epoch, __u32 outcome)
{
	struct xnf_ct_entry *e;

	if (!ct->in_table || ct->state != XNF_CT_ESTABLISHED)
		return;
	e = xnf_ct_entry(acl_ct, ct);
	if (!e)
		return;
	if (e->nf_epoch != epoch) {
		e->nf_note = 0;
		e->nf_epoch = epoch;
	}
	e->nf_note |= (__u8)((ACL_KEPT | outcome) << (4 * (ct->sender & 1)));
}

static __always_inline __u32 acl_action_for(const struct xnf_headers *h, struct xnf_5tuple *t,
					     const struct xnf_pkt *pkt, struct xnf_ct *ct)
{
	__u32 epoch = acl_setting(ACL_SETTING_ACTIVE), generation = epoch & 1;
	__u32 tracks = acl_setting(ACL_SETTING_TRACKS_0 + generation) & ACL_TRACKS, decision, outcome;
	/* Read before the tracker, which then leaves no packet pointer live (for the verifier: <xnf/conntrack.h>). */
	__u8 tcp_flags = xnf_tcp_flags(h), ct_state = 0;
	__u64 vlan_ids = acl_vlan_ids(h);
	int kept;

	if (tracks) {
		ct_state = (__u8)xnf_ct_track(acl_ct, h, t, pkt, ct);
		if (ct->fragment_unmatched)
			xnf_count_event(ACL_CNT_CT_FRAGMENT_UNMATCHED);
		if (ct->bad_checksum)
			xnf_count_event(ACL_CNT_CT_BAD_CHECKSUM);
		kept = acl_kept_outcome(ct, epoch);
		if (kept >= 0) {
			xnf_count_event((__u32)kept);
			return kept & 1 ? ACL_DROP : ACL_ALLOW;
		}
	}
	decision = acl_search_rules(t, tcp_flags, ct_state, vlan_ids, generation);
	outcome = decision & ACL_OUTCOME_BITS;
	/* tracks tested again, not the decision alone: the verifier must see ct filled wherever it is read. */
	if (tracks && (decision & ACL_DECISION_STEADY))
		acl_keep_outcome(ct, epoch, outcome);
	xnf_count_event(outcome);
	return outcome & 1 ? ACL_DROP : ACL_ALLOW;
}

static __always_inline xnf_verdict acl(struct xnf_pkt *pkt)
{
	struct xnf_headers h;
	struct xnf_5tuple t;
	struct xnf_ct ct;

	ct.creates = 0;
	if (xnf_parse_headers(pkt, &h) < 0)
		return XNF_DROP_MALFORMED;
	if (xnf_headers_to_5tuple(&h, &t) < 0) {
		xnf_count_event(ACL_CNT_NON_IP);
		return xnf_forward(pkt);
	}
	if (acl_action_for(&h, &t, pkt, &ct) == ACL_DROP)
		return XNF_DROP;
	if (ct.creates) {
		int room = xnf_ct_confirm(acl_ct, &ct);

		if (room < 0) {
			xnf_count_event(ACL_CNT_CT_FULL);
			return XNF_DROP;
		}
		if (room > 0)
			xnf_count_event(ACL_CNT_CT_EARLY_DROP);
		xnf_count_event(ACL_CNT_CT_NEW);
	}
	return xnf_forward(pkt);
}
XNF_DEFINE_NF(acl);
