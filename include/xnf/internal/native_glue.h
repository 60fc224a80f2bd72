/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Native side of XNF_DEFINE_NF: a batch function with the NF inlined into its
 * loop. The user-space runtime calls it once per batch of received frames and
 * applies the verdicts itself. Included by nf.h only for the host compiler.
 */
#if !defined(XNF_INTERNAL_OK) && !defined(XNF__FROM_SDK)
#error "xnf/internal/ is xnf's own glue, not the NF API: include <xnf/nf.h> (the data path) or <xnf/control.h> (the control side)"
#endif
#ifndef XNF_NATIVE_GLUE_H
#define XNF_NATIVE_GLUE_H

#include <xnf/internal/nf_entry.h>

/* The entry of a binary: its NF's name and batch function. */
#define XNF_DEFINE_NF_ENTRY(fn, name)                                          \
	const char xnf_nf_name[] = name;                                       \
	void xnf_nf_run_batch(struct xnf_pkt *pkts, xnf_verdict *verdicts,     \
			      unsigned int n)                                  \
	{                                                                      \
		XNF__RULES_FRAME_BEGIN();                                      \
		for (unsigned int i = 0; i < n; i++)                           \
			verdicts[i] = fn(&pkts[i]);                            \
	}                                                                      \
	extern int xnf__nf_defined_once_per_binary

/* A chain member only provides its function: the chain defines the entry. */
#ifdef XNF_CHAIN_MEMBER
#define XNF_DEFINE_NF(fn) extern int xnf__chain_member_##fn
#else
#define XNF_DEFINE_NF(fn) XNF_DEFINE_NF_ENTRY(fn, #fn)
#endif
/* Natively the NF counts its pure-drop rules' hits itself (xnf_drop_rule_hit): the key function is the
 * kernel pre-filter's alone. */
#define XNF_DEFINE_NF_WITH_DROP_RULES(fn, key_fn) XNF_DEFINE_NF(fn)

#endif /* XNF_NATIVE_GLUE_H */
