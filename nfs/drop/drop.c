/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* drop: discards every packet. The floor of every mode's cost. */
#include <xnf/nf.h>

static __always_inline xnf_verdict drop(struct xnf_pkt *pkt)
{
	(void)pkt;
	return XNF_DROP;
}
XNF_DEFINE_NF(drop);
