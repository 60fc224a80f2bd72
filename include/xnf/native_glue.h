/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Native side of XNF_DEFINE_NF: a batch function with the NF inlined into its
 * loop. The user-space runtime calls it once per batch of received frames and
 * applies the verdicts itself. Included by nf.h only for the host compiler.
 */
#ifndef XNF_NATIVE_GLUE_H
#define XNF_NATIVE_GLUE_H

#include <xnf/nf_entry.h>

#define XNF_DEFINE_NF(fn)                                                      \
	const char xnf_nf_name[] = #fn;                                        \
	void xnf_nf_run_batch(struct xnf_pkt *pkts, xnf_verdict *verdicts,     \
			      unsigned int n)                                  \
	{                                                                      \
		for (unsigned int i = 0; i < n; i++)                           \
			verdicts[i] = fn(&pkts[i]);                            \
	}                                                                      \
	extern int xnf__nf_defined_once_per_binary

#endif /* XNF_NATIVE_GLUE_H */
