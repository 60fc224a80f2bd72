/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * ctfw: the smallest stateful firewall, docs/conntrack.md's example built as a test NF: a frame that opens, belongs
 * to or is related to a connection passes; an invalid or untracked one is dropped, and so is a new connection's
 * when the table is full. It shows that any NF gets connection tracking from the SDK alone.
 *
 * Every answered frame writes its connection's entry anew here (one in 256 in an NF that keeps the default), so that
 * the fixtures find the state kept through the rewrite.
 */
#define XNF_CT_BRING_FORWARD_ONE_IN 1
#include <xnf/nf.h>
#include <xnf/conntrack.h>

XNF_CT_TABLE(ctfw_ct, 65536);
XNF_COUNTER_NAMES("ct_full");

static __always_inline xnf_verdict ctfw(struct xnf_pkt *pkt)
{
	struct xnf_headers h;
	struct xnf_5tuple t;
	struct xnf_ct ct;

	if (xnf_parse_headers(pkt, &h) < 0)
		return XNF_DROP_MALFORMED;
	if (xnf_headers_to_5tuple(&h, &t) < 0)
		return xnf_forward(pkt);
	if (!(xnf_ct_track(ctfw_ct, &h, &t, pkt, &ct) & (XNF_CT_NEW | XNF_CT_ESTABLISHED | XNF_CT_RELATED)))
		return XNF_DROP;
	if (xnf_ct_confirm(ctfw_ct, &ct) < 0) {
		xnf_count_event(0);
		return XNF_DROP;
	}
	return xnf_forward(pkt);
}
XNF_DEFINE_NF(ctfw);
