/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * firewall: an exact-match 5-tuple ACL. A packet whose (family, protocol,
 * addresses, ports) matches a rule gets the rule's action; any other IP packet
 * gets the default action. A rule may also name a VLAN (the key's pad holds the
 * id of an outermost 802.1Q tag): a tagged frame tries the rules of its VLAN
 * first, then the ones that name none. Non-IP frames (ARP, LLDP...) are forwarded so the
 * link keeps working; frames with broken headers are dropped and counted.
 */
#include <xnf/nf.h>
#include <xnf/rules_tables.h>
#include "firewall.h"

XNF_RULES_HASH_GROWING(fw_acl, struct xnf_5tuple, __u32, FW_MAX_RULES);
XNF_RULES_ARRAY(fw_config, __u32, FW_NSETTINGS);
/* Its drop rules are pure drops: --offload-drops may copy the hot ones into an XDP pre-filter. */
XNF_DROP_RULES(struct xnf_5tuple);
XNF_COUNTER_NAMES("rule_drop", "rule_allow", "default_drop", "default_allow", "non_ip");

/* The rule of the frame's VLAN, if it has a tag and such a rule exists, else the rule that names no VLAN; t is
 * left the key of the rule found. */
static __always_inline __u32 *fw_rule_for(const struct xnf_headers *h, struct xnf_5tuple *t)
{
	__u32 *action;

	if (h->vlan_depth && h->vlan_proto[0] == ETH_P_8021Q) {
		t->pad = h->vlan_id[0];
		action = xnf_rules_lookup(fw_acl, t);
		if (action)
			return action;
		t->pad = 0;
	}
	return xnf_rules_lookup(fw_acl, t);
}

static __always_inline __u32 fw_action_for(const struct xnf_headers *h, struct xnf_5tuple *t)
{
	__u32 slot = FW_SETTING_DEFAULT_ACTION, verdict;
	__u32 *action = fw_rule_for(h, t);

	if (action) {
		verdict = *action;
		xnf_count_event(verdict == FW_DROP ? FW_CNT_RULE_DROP : FW_CNT_RULE_ALLOW);
		/* The pre-filter looks the frame up once, without its VLAN: only rules of no VLAN are its to take. */
		if (verdict == FW_DROP && !t->pad)
			xnf_drop_rule_hit(t);
		return verdict;
	}
	action = xnf_rules_lookup(fw_config, &slot);
	verdict = action ? *action : FW_ALLOW;
	xnf_count_event(verdict == FW_DROP ? FW_CNT_DEFAULT_DROP : FW_CNT_DEFAULT_ALLOW);
	return verdict;
}

/* A packet's rule key, for the pre-filter: the 5-tuple its rules match. */
static __always_inline int fw_rule_key(struct xnf_pkt *pkt, struct xnf_5tuple *t)
{
	struct xnf_headers h;

	if (xnf_parse_headers(pkt, &h) < 0)
		return -1;
	return xnf_headers_to_5tuple(&h, t);
}

static __always_inline xnf_verdict firewall(struct xnf_pkt *pkt)
{
	struct xnf_headers h;
	struct xnf_5tuple t;

	if (xnf_parse_headers(pkt, &h) < 0)
		return XNF_DROP_MALFORMED;
	if (xnf_headers_to_5tuple(&h, &t) < 0) {
		xnf_count_event(FW_CNT_NON_IP);
		return xnf_forward(pkt);
	}
	if (fw_action_for(&h, &t) == FW_DROP)
		return XNF_DROP;
	return xnf_forward(pkt);
}
XNF_DEFINE_NF_WITH_DROP_RULES(firewall, fw_rule_key);
