/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The packet side of a chain (included by the generated chain.c, after its
 * members): how one member is called from the chain's function.
 *
 * In the kernel each member is wrapped in a global function: the verifier
 * checks a global function once, on its own, instead of once for every way
 * through the members before it (two parsers in a row multiply the paths it
 * walks). The call is a direct BPF-to-BPF call, never an indirect one.
 * Natively the member is inlined into the chain, as an NF is into its loop.
 */
#if !defined(XNF_INTERNAL_OK) && !defined(XNF__FROM_SDK)
#error "xnf/internal/ is xnf's own glue, not the NF API: include <xnf/nf.h> (the data path) or <xnf/control.h> (the control side)"
#endif
#ifndef XNF_CHAIN_PROGRAM_H
#define XNF_CHAIN_PROGRAM_H

#include <xnf/nf.h>

#ifdef XNF_TARGET_BPF
/* At tc a member's checksum changes are applied as it returns: the next member parses the frame afresh. */
#define XNF_CHAIN_STEP(fn)                                                     \
	XNF_VERIFIED_APART int xnf_chain_step_##fn(xnf_ctx *ctx)               \
	{                                                                      \
		struct xnf_pkt pkt;                                            \
		xnf_verdict verdict;                                           \
		xnf_pkt_init(&pkt, ctx);                                       \
		XNF__HOOK_START(&pkt);                                         \
		verdict = fn(&pkt);                                            \
		return (int)xnf_hook_finish(&pkt, verdict);                    \
	}
#define XNF_CHAIN_CALL(fn, pkt) ((xnf_verdict)xnf_chain_step_##fn((pkt)->ctx))
#ifdef XNF_HOOK_TC
/* The members' steps sum a complete skb's bytes around each member: the entry does not (tc_glue.h). */
#undef XNF__ENTRY_START
#define XNF__ENTRY_START(pkt) ((pkt)->complete = 0)
#endif
#else
#define XNF_CHAIN_STEP(fn)
#define XNF_CHAIN_CALL(fn, pkt) fn(pkt)
#endif

/*
 * Split chains (xnf_cfg.chain_split > 0): XDP runs the members before the split, the workers the rest. The
 * test is on .rodata in the kernel, so the verifier drops the members that side does not run.
 */
#ifdef XNF_TARGET_BPF
#define XNF_CHAIN_RUNS_HERE(position) (!xnf_cfg.chain_split || (position) < xnf_cfg.chain_split)
#else
#define XNF_CHAIN_RUNS_HERE(position) ((position) >= xnf_cfg.chain_split)
#endif

/* A member that sends the packet on hands it to the next; any other verdict ends the chain. */
static __always_inline int xnf_chain_goes_on(xnf_verdict v)
{
	return XNF_VERDICT_ACTION(v) == XNF_TX || XNF_VERDICT_ACTION(v) == XNF_REDIRECT_ACTION;
}

#endif
