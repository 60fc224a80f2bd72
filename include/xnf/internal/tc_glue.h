/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The tc entry point that wraps an NF (built with XNF_HOOK_TC; `xnf run --mode tc`): the same NF at the skb
 * layer, attached to each port's ingress through TCX (or a clsact qdisc where TCX is missing). The frame is an
 * skb: it keeps its checksum state and, when a local stack sent a GSO segment, its size of up to 64 KiB, which
 * is what lets bulk TCP to containers run at Linux's own speed. Included by bpf_glue.h.
 *
 * Verdicts: drop (TC_ACT_SHOT), pass (TC_ACT_UNSPEC, TCX's "next": to the programs behind the NF at the hook, then
 * the stack, as XDP_PASS does in libxdp's dispatcher), TX (out of the ingress port) and redirect (out of a
 * port) with bpf_redirect, or bpf_redirect_peer on a veth whose peer is in another namespace: the frame goes
 * straight to the peer's receive, without a second trip through the backlog. Counters count the frames a GSO
 * segment stands for, so that they agree with the wire and with the other paths.
 */
#if !defined(XNF_INTERNAL_OK) && !defined(XNF__FROM_SDK)
#error "xnf/internal/ is xnf's own glue, not the NF API: include <xnf/nf.h> (the data path) or <xnf/control.h> (the control side)"
#endif
#ifndef XNF_TC_GLUE_H
#define XNF_TC_GLUE_H

#include <linux/pkt_cls.h>

/*
 * What the entry point makes directly readable before the NF runs: a whole frame up to XNF_TC_LINEAR_MAX bytes
 * (an NF that reads payload sees all of it, as in XDP). A GSO segment is left as it is: the stack that built it
 * keeps its headers in the linear part, which is what the NF reads; copying payload in front of it (even a few
 * hundred bytes) reallocates the skb's head, a cost per segment that the skb path is there to save.
 */
#define XNF_TC_LINEAR_MAX 4096

/* The frames on the wire an skb stands for: a GSO segment is gso_segs of them. */
static __always_inline __u32 xnf_tc_frames(const struct __sk_buff *ctx)
{
	return ctx->gso_segs > 1 ? ctx->gso_segs : 1;
}

static __always_inline void xnf_tc_make_readable(struct __sk_buff *ctx)
{
	__u32 want = ctx->len;

	if (ctx->gso_size)
		return;
	if (want > XNF_TC_LINEAR_MAX)
		want = XNF_TC_LINEAR_MAX;
	if (want > ctx->len)
		want = ctx->len;
	/* A failure (no memory) leaves the skb as it was: the NF parses what is readable and says malformed. */
	if ((void *)(long)ctx->data + want > (void *)(long)ctx->data_end)
		bpf_skb_pull_data(ctx, want);
}

/* Before the NF (or a chain member) runs: a complete skb's bytes summed. */
#define XNF__HOOK_START(pkt) xnf__complete_sum_start(pkt)
/* A chain's entry leaves that to its members' steps (chain_program.h), each of which settles its own writes and
 * applies its own checksum changes: summed again at the entry, they would be added twice. */
#define XNF__ENTRY_START(pkt) XNF__HOOK_START(pkt)

/* The NF's checksum changes applied (xnf/l4_csum.h); a frame whose checksum the kernel could not update must
 * not go on: it aborts (counted). A chain member's step calls this too. */
static __always_inline xnf_verdict xnf_hook_finish(struct xnf_pkt *pkt, xnf_verdict verdict)
{
	return xnf__l4_csum_apply(pkt) ? XNF_ABORT : verdict;
}

/* Out of port (which the caller has checked is one of the instance's). */
static __always_inline int xnf_tc_send(__u32 port)
{
	__u32 ifindex = xnf_cfg.ifindex[port & (XNF_MAX_PORTS - 1)];

	if (xnf_cfg.peer_ports & (1u << port))
		return (int)bpf_redirect_peer(ifindex, 0);
	return (int)bpf_redirect(ifindex, 0);
}

static __always_inline int xnf_tc_action(struct __sk_buff *ctx, xnf_verdict verdict)
{
	__u64 bytes = ctx->len, frames = xnf_tc_frames(ctx);
	__u32 slot, port = 0;
	int action;

	switch (XNF_VERDICT_ACTION(verdict)) {
	case XNF_DROP:
		slot = XNF_STAT_DROP;
		action = TC_ACT_SHOT;
		break;
	case XNF_PASS:
		slot = XNF_STAT_PASS;
		action = TC_ACT_UNSPEC;
		break;
	case XNF_TX:
		xnf_config_port_of(&xnf_cfg, ctx->ingress_ifindex, &port);
		slot = XNF_STAT_TX;
		action = xnf_tc_send(port);
		break;
	case XNF_REDIRECT_ACTION:
		port = XNF_VERDICT_PORT(verdict);
		if (port < xnf_cfg.nports && port < XNF_MAX_PORTS) {
			slot = XNF_STAT_REDIRECT;
			action = xnf_tc_send(port);
		} else {
			slot = XNF_STAT_REDIRECT_ERROR;
			action = TC_ACT_SHOT;
		}
		break;
	default:
		slot = XNF_STAT_ABORT;
		action = TC_ACT_SHOT;
		break;
	}
	xnf_count_frames(slot, frames, bytes);
	if (verdict & XNF_REASON_MALFORMED)
		xnf_count_frames(XNF_STAT_MALFORMED, frames, bytes);
	XNF__CAPTURE(ctx, slot);
	return action;
}

/* At tc the NF always runs here: the user-space modes and their pre-filter are XDP's. */
#define XNF__DEFINE_ENTRY(fn, name, offloaded_drop)                            \
	SEC("tc")                                                              \
	int xnf_tc_main(struct __sk_buff *ctx)                                 \
	{                                                                      \
		struct xnf_pkt pkt;                                            \
		xnf_verdict verdict;                                           \
		if (!xnf_is_in_force()) {                                      \
			xnf_count_frames(XNF_STAT_NOT_READY, xnf_tc_frames(ctx), ctx->len); \
			return TC_ACT_SHOT;                                    \
		}                                                              \
		XNF__RULES_FRAME_BEGIN();                                      \
		xnf_tc_make_readable(ctx);                                     \
		XNF__CAPTURE_ENTRY(ctx);                                       \
		xnf_pkt_init(&pkt, ctx);                                       \
		XNF__ENTRY_START(&pkt);                                        \
		verdict = xnf_hook_finish(&pkt, fn(&pkt));                     \
		return xnf_tc_action(ctx, verdict);                            \
	}                                                                      \
	char _license[] SEC("license") = "Dual BSD/GPL"

#define XNF_DEFINE_NF_ENTRY(fn, name) XNF__DEFINE_ENTRY(fn, name, xnf__no_offloaded_drop)

#ifdef XNF_CHAIN_MEMBER
#define XNF_DEFINE_NF(fn) extern int xnf__chain_member_##fn
#define XNF_DEFINE_NF_WITH_DROP_RULES(fn, key_fn) XNF_DEFINE_NF(fn)
#else
#define XNF_DEFINE_NF(fn) XNF_DEFINE_NF_ENTRY(fn, #fn)
#define XNF_DEFINE_NF_WITH_DROP_RULES(fn, key_fn) XNF_DEFINE_NF_ENTRY(fn, #fn)
#endif

#endif /* XNF_TC_GLUE_H */
