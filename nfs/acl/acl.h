/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Layouts shared by the acl NF, its rules codec and its classifier's compiler.
 *
 * The rules (acl_rules, keyed by sequence number) are what the operator writes and lists; the data path never
 * reads them. It reads their compiled form, a tuple space: every rule is a set of masks over the packet's fields
 * (source and destination prefix lengths, the port ranges split into aligned blocks, whether the protocol and
 * which TCP flags count) and a masked key per mask. The masks that occur are the tuples (acl_tuples), the masked
 * keys with the sequence number and action of the best rule that gave them are the entries (acl_entries). A packet
 * is looked up once per tuple, best tuple first, and the lowest sequence number found wins.
 *
 * A rule may name connection states (`state established,related`): then the frame's state on its connection
 * (<xnf/conntrack.h>, table acl_ct) is one more field of the key, and a rule of several states is one entry per state.
 * Frames are tracked only while some rule names a state.
 *
 * Two generations of both live side by side: a change is compiled into the one not in use, then one write of
 * ACL_SETTING_ACTIVE puts it in force, so a packet meets the old rules or the new ones, never a mix.
 */
#ifndef XNF_NF_ACL_H
#define XNF_NF_ACL_H

#include <linux/types.h>

#define ACL_MAX_RULES 262144
#define ACL_MAX_TUPLES 128         /* per generation: distinct shapes of rule */
#define ACL_MAX_ENTRIES (1u << 21) /* both generations */
#define ACL_GENERATIONS 2
#define ACL_CT_ENTRIES 262144      /* connections tracked at once (docs/conntrack.md: when the table is full) */

enum acl_action {
	ACL_ALLOW = 0,
	ACL_DROP = 1,
};

/* What the operator wrote, as kept in acl_rules. Ports in host order, inclusive ranges. */
struct acl_rule {
	__u8 family;          /* 4, 6, or 0: either */
	__u8 proto;           /* 0: any */
	__u8 action;          /* enum acl_action */
	__u8 src_len;         /* prefix lengths; 0 with an all-zero address: any */
	__u8 dst_len;
	__u8 flags;           /* TCP flags that must be set ... */
	__u8 flags_mask;      /* ... among these (0: flags do not count) */
	__u8 ct_states;       /* the connection states it matches (enum xnf_ct_state bits; 0: any) */
	__u16 sport_lo, sport_hi;
	__u16 dport_lo, dport_hi;
	__u16 vlan[2];        /* an outermost 802.1Q tag's id; or an 802.1ad tag's, then the 802.1Q one's (0: none) */
	__be32 src[4];
	__be32 dst[4];
};

struct acl_rule_key {
	__u32 seq;            /* the rule's place: the lowest that matches wins */
};

/* A mask over the packet's fields; lengths in bits. */
struct acl_tuple {
	__u8 family;
	__u8 proto_counts;
	__u8 src_len;
	__u8 dst_len;
	__u8 sport_len;       /* of 16: the high bits of the port that count */
	__u8 dport_len;
	__u8 flags_mask;
	__u8 ct_counts;       /* whether the frame's connection state counts */
	__u8 vlan_depth;      /* 1: an outermost 802.1Q tag's id counts; 2: an 802.1ad and an 802.1Q tag's */
	__u8 pad[3];
	__u32 best_seq;       /* the lowest sequence number among its entries: no later tuple can beat a match below it */
};

/* A packet's fields masked by one tuple, and the tuple (generation * ACL_MAX_TUPLES + index). */
struct acl_key {
	__u16 tuple;
	__u8 family;
	__u8 proto;
	__u8 flags;
	__u8 ct_state;        /* one enum xnf_ct_state bit, where the tuple counts it */
	__u8 pad[2];
	__u16 sport;          /* host order */
	__u16 dport;
	__u16 vlan[2];        /* the frame's VLAN ids of the tuple's kind (0: no such tag) */
	__be32 src[4];
	__be32 dst[4];
};

struct acl_entry {
	__u32 seq;
	__u32 action;
};

enum acl_setting {
	ACL_SETTING_DEFAULT = 0,  /* the action when no rule matches (enum acl_action) */
	ACL_SETTING_ACTIVE,       /* the rules' epoch, one more every commit; its low bit the generation in force */
	ACL_SETTING_TUPLES_0,     /* how many tuples each generation has */
	ACL_SETTING_TUPLES_1,
	ACL_SETTING_TRACKS_0,     /* each generation's enum acl_tracking bits */
	ACL_SETTING_TRACKS_1,
	ACL_NSETTINGS,
};

/* In acl_steady_below, per generation: the lowest sequence number of a rule that reads what differs between the
 * frames of one direction of a connection (TCP flags, VLAN tags; ACL_NO_VARYING_RULE: none). A decision by a rule
 * below it holds for the direction's later established frames: they match that rule, and no rule before it, as this
 * one did. A map of its own, not a setting, so that a state kept by a build without it (--state) is still adopted:
 * the new map starts at 0, where no decision is kept, until the rules are compiled. */
#define ACL_NO_VARYING_RULE 0xffffffffu

enum acl_tracking {
	ACL_TRACKS = 1,           /* some rule names a connection state: frames are tracked */
};

enum acl_counter {
	ACL_CNT_RULE_ALLOW,
	ACL_CNT_RULE_DROP,
	ACL_CNT_DEFAULT_ALLOW,
	ACL_CNT_DEFAULT_DROP,
	ACL_CNT_NON_IP,
	ACL_CNT_CT_NEW,           /* connections that entered the table */
	ACL_CNT_CT_FULL,          /* frames of new connections dropped: the table was full of answered ones */
	ACL_CNT_CT_EARLY_DROP,    /* connections never answered whose entries new ones took (the table full) */
	ACL_CNT_CT_FRAGMENT_UNMATCHED, /* later IP fragments that came without their first (<xnf/conntrack.h>) */
	ACL_CNT_CT_BAD_CHECKSUM,  /* TCP segments with SYN, FIN or RST and a wrong checksum (not checked at tc) */
};

/* The mask of the high `bits` of a 32-bit word, in network order. */
static inline __attribute__((always_inline)) __be32 acl_word_mask(int bits)
{
	if (bits <= 0)
		return 0;
	if (bits >= 32)
		return 0xffffffffu;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return __builtin_bswap32(0xffffffffu << (32 - bits));
#else
	return 0xffffffffu << (32 - bits);
#endif
}

/* The mask of the high `bits` of a 16-bit port, in host order. */
static inline __attribute__((always_inline)) __u16 acl_port_mask(int bits)
{
	return bits <= 0 ? 0 : (__u16)(0xffffu << (16 - bits));
}

#endif
