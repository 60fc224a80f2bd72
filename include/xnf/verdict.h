/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What an NF returns, and which counter each verdict lands in: one encoding for
 * the NF, the XDP glue, the AF_XDP workers and the tests.
 */
#ifndef XNF_VERDICT_H
#define XNF_VERDICT_H

#include <xnf/common.h>

/*
 * A verdict is an action in the low 7 bits, an optional reason bit, and for
 * redirects the destination port above bit 8. Plain integers keep it cheap to
 * return from inlined code on both targets.
 */
typedef __u32 xnf_verdict;

#define XNF_ABORT 0u
#define XNF_DROP 1u
#define XNF_PASS 2u
#define XNF_TX 3u
#define XNF_REDIRECT_ACTION 4u
#define XNF_REDIRECT(port) (XNF_REDIRECT_ACTION | ((__u32)(port) << 8))
#define XNF_REASON_MALFORMED 0x80u
/* Drop a packet that could not be parsed; counted as a drop and as malformed. */
#define XNF_DROP_MALFORMED (XNF_DROP | XNF_REASON_MALFORMED)

#define XNF_VERDICT_ACTION(v) ((v) & 0x7fu)
#define XNF_VERDICT_PORT(v) ((v) >> 8)

/* The counter a verdict lands in; a redirect to a port the instance lacks is a redirect error. */
static __always_inline __u32 xnf_verdict_slot(xnf_verdict v, __u32 nports)
{
	switch (XNF_VERDICT_ACTION(v)) {
	case XNF_DROP: return XNF_STAT_DROP;
	case XNF_PASS: return XNF_STAT_PASS;
	case XNF_TX: return XNF_STAT_TX;
	case XNF_REDIRECT_ACTION:
		return XNF_VERDICT_PORT(v) < nports ? XNF_STAT_REDIRECT : XNF_STAT_REDIRECT_ERROR;
	default: return XNF_STAT_ABORT;
	}
}

#endif /* XNF_VERDICT_H */
