/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Chains: several NFs in one program, in sequence (`xnf run chain:firewall,lb`).
 * python/xnf/chain.py generates three files per chain, from the member names alone:
 *   chain.c          includes each member's source with XNF_CHAIN_MEMBER set and
 *                    calls the members one after the other, inlined (no
 *                    per-packet indirect call); a member that drops or passes
 *                    ends the chain, one that sends the packet on (TX,
 *                    REDIRECT) hands it to the next; the last one's verdict holds.
 *                    It ends with xnf_chain_counter_list(): each member's counter
 *                    names and count, in chain order (a member counts from
 *                    after the members before it).
 *   chain_control.c  the table below, pointing at each member's rules codec,
 *                    start and housekeeping steps (compiled with their member
 *                    names); lib/chain/chain_control.c serves them as one.
 * and members.mk, the member list make builds from.
 */
#if !defined(XNF_INTERNAL_OK) && !defined(XNF__FROM_SDK)
#error "xnf/internal/ is xnf's own glue, not the NF API: include <xnf/nf.h> (the data path) or <xnf/control.h> (the control side)"
#endif
#ifndef XNF_CHAIN_H
#define XNF_CHAIN_H

#include <xnf/control.h>

#define XNF_CHAIN_MAX_MEMBERS 8

struct xnf_chain_member {
	const char *name;
	/* Addresses of the member's exports; weak references, NULL where the member has none. */
	const struct xnf_rules_codec *const *rules;
	const xnf_nf_start_fn *start;
	const xnf_nf_housekeeping_fn *housekeeping;
};

/* The generated table, ending with a NULL name. */
extern const struct xnf_chain_member xnf_chain_members[];

struct xnf_chain_counters {
	const char *member;
	const char *const *names; /* NULL when the member has none */
	__u32 count;
};

/* From chain.c: the members' counters in chain order, then a NULL member. */
void xnf_chain_counter_list(struct xnf_chain_counters out[XNF_CHAIN_MAX_MEMBERS + 1]);

#endif
