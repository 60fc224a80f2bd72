/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A deliberately broken NF: it reads past the packet without a bounds check.
 * It compiles on both targets; the kernel's verifier must refuse it, and the
 * tests check that xnf says so clearly and leaves nothing attached.
 */
#include <xnf/nf.h>

static __always_inline xnf_verdict bad_bounds(struct xnf_pkt *pkt)
{
	volatile __u8 *byte = (__u8 *)pkt->data + 100;

	return *byte ? XNF_DROP : XNF_TX;
}
XNF_DEFINE_NF(bad_bounds);
