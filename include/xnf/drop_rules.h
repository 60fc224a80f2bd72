/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Pure-drop rules an NF lets the runtime offload (--offload-drops). While the NF
 * runs in user space, a controller in the instance copies the hottest of them
 * into an XDP pre-filter, which drops their packets before any socket, and takes
 * them out again when they cool down. The rule itself never leaves the NF.
 *
 *   XNF_DROP_RULES(struct xnf_5tuple);   beside the NF's maps: the key its rules match on
 *   xnf_drop_rule_hit(&key);             in the NF, for each packet such a rule dropped
 *   XNF_DEFINE_NF_WITH_DROP_RULES(firewall, fw_rule_key);
 *                                        instead of XNF_DEFINE_NF: fw_rule_key(pkt, &key)
 *                                        gives a packet's key (0) or says it has none (< 0)
 *
 * and on the control side XNF_EXPORT_DROP_RULES (<xnf/control.h>): which rules map
 * holds them and which of its entries are pure drops.
 */
#ifndef XNF_DROP_RULES_H
#define XNF_DROP_RULES_H

#include <xnf/maps.h>

/* A rule's hits: `user` counted by the workers, the rest by the controller alone. */
struct xnf_drop_rule_hits {
	__u64 user;      /* packets the NF dropped by this rule */
	__u64 kernel;    /* packets the pre-filter dropped, folded in when the rule left it */
	__u64 user_seen; /* `user` at the controller's last look */
};

#if defined(XNF_CHAIN_MEMBER)
/* Chains do not offload: the declarations stay, the counting goes. */
#define XNF_DROP_RULES(K) typedef K xnf__drop_rule_key_t
#define xnf_drop_rule_hit(key) ((void)(key))

#elif defined(XNF_TARGET_BPF)
#define XNF_DROP_RULES(K)                                                      \
	typedef K xnf__drop_rule_key_t;                                        \
	struct {                                                               \
		__uint(type, BPF_MAP_TYPE_HASH);                               \
		__type(key, K);                                                \
		__type(value, __u32); /* the rule's slot in xnf_offload_hits */ \
		__uint(max_entries, XNF_MAX_OFFLOADED_DROPS);                  \
		__uint(map_flags, BPF_F_NO_PREALLOC);                          \
	} xnf_offload_drops SEC(".maps");                                      \
	struct {                                                               \
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);                       \
		__type(key, __u32);                                            \
		__type(value, __u64);                                          \
		__uint(max_entries, XNF_MAX_OFFLOADED_DROPS);                  \
	} xnf_offload_hits SEC(".maps")
/* In the kernel the NF's own drops are not counted per rule: the pre-filter's are, by slot. */
#define xnf_drop_rule_hit(key) ((void)(key))

#else
#define XNF_DROP_RULES(K)                                                      \
	typedef K xnf__drop_rule_key_t;                                        \
	XNF_MAP_HASH(xnf_drop_hits, K, struct xnf_drop_rule_hits, XNF_MAX_DROP_RULE_HITS)
void xnf__drop_rule_hit(struct xnf_map *hits, const void *key);
/* Only counted while offloading: otherwise the NF pays nothing for it. */
#define xnf_drop_rule_hit(key)                                                 \
	do {                                                                   \
		if (xnf_cfg.offload_drops)                                     \
			xnf__drop_rule_hit(&xnf_drop_hits, (key));             \
	} while (0)
#endif

#endif /* XNF_DROP_RULES_H */
