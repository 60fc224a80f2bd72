/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Chains: several NFs in one program, in sequence (`xnf run chain:firewall,lb`).
 * python/xnf/chain.py generates two files per chain:
 *   chain.c          includes each member's source with XNF_CHAIN_MEMBER set and
 *                    calls the members one after the other, inlined (no
 *                    per-packet indirect call); a member that drops or passes
 *                    ends the chain, one that sends the packet on (TX,
 *                    REDIRECT) hands it to the next; the last one's verdict holds.
 *   chain_control.c  the table below, pointing at each member's rules codec,
 *                    start and housekeeping steps (compiled with their member
 *                    names); lib/control/chain_control.c serves them as one.
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

#endif
