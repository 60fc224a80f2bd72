/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The XDP entry point that wraps an NF: turns its verdict into an XDP action and counts it; in the user-space
 * modes hands frames to AF_XDP sockets (all of them, or those the NF sends on: hybrid, split chains).
 * Included by bpf_glue.h.
 */
#if !defined(XNF_INTERNAL_OK) && !defined(XNF__FROM_SDK)
#error "xnf/internal/ is xnf's own glue, not the NF API: include <xnf/nf.h> (the data path) or <xnf/control.h> (the control side)"
#endif
#ifndef XNF_XDP_GLUE_H
#define XNF_XDP_GLUE_H

#include <xnf/internal/csum_finish.h>

#define XNF__HOOK_START(pkt) ((void)0)

/* XDP applies an NF's checksum changes as it makes them (xnf/l4_csum.h): nothing is left when it returns. */
static __always_inline xnf_verdict xnf_hook_finish(struct xnf_pkt *pkt, xnf_verdict verdict)
{
	return verdict;
}

/*
 * XDP_TX out of a veth reaches the peer only when something wakes the peer's receive: its own XDP program, or
 * other traffic; GRO alone does not, and the frames wait in its ring. A redirect to the same port wakes it. So
 * on a port whose peer xnf gave GRO (a container's plain veth) the NF's TX goes out as a redirect (still counted
 * as tx). A peer that had GRO or XDP before is left as it is, so that the lab measures XDP_TX where it did.
 */
static __always_inline int xnf_tx_action(struct xdp_md *ctx)
{
	__u32 zero = 0, port = 0, *ports = bpf_map_lookup_elem(&xnf_tx_by_redirect, &zero);
	int action;

	if (!ports || !*ports || !xnf_config_port_of(&xnf_cfg, ctx->ingress_ifindex, &port) || port >= 32 ||
	    !(*ports & (1u << port)))
		return XDP_TX;
	action = bpf_redirect_map(&xnf_ports, port, 0);
	return action == XDP_REDIRECT ? action : XDP_TX;
}

static __always_inline int xnf_xdp_action(struct xnf_pkt *pkt, xnf_verdict verdict)
{
	struct xdp_md *ctx = pkt->ctx;
	/* The first buffer re-read (the NF may have moved the frame's start), the further ones as they came. The
	 * barrier keeps the compiler from adding them to data_end, which the verifier refuses. */
	__u64 bytes = ctx->data_end - ctx->data;
	__u32 slot;
	int action;

	xnf_barrier_var(bytes);
	bytes += pkt->beyond;

	switch (XNF_VERDICT_ACTION(verdict)) {
	case XNF_DROP:
		slot = XNF_STAT_DROP;
		action = XDP_DROP;
		break;
	case XNF_TX:
		slot = XNF_STAT_TX;
		action = xnf_tx_action(ctx);
		break;
	case XNF_PASS:
		slot = XNF_STAT_PASS;
		action = XDP_PASS;
		break;
	case XNF_REDIRECT_ACTION:
		action = bpf_redirect_map(&xnf_ports, XNF_VERDICT_PORT(verdict), 0);
		if (action == XDP_REDIRECT) {
			slot = XNF_STAT_REDIRECT;
		} else {
			slot = XNF_STAT_REDIRECT_ERROR;
			action = XDP_DROP;
		}
		break;
	default:
		slot = XNF_STAT_ABORT;
		action = XDP_ABORTED;
		break;
	}
	xnf_count(slot, bytes);
	if (verdict & XNF_REASON_MALFORMED)
		xnf_count(XNF_STAT_MALFORMED, bytes);
	XNF__CAPTURE(ctx, slot);
	return action;
}

/*
 * The user-space data path: hand the frame to the socket of its port and
 * queue. Only a missing socket is counted here; the workers count the rest.
 */
/*
 * The dispatcher (--local): a frame on a local queue, or for a local service, goes to the local stack here,
 * before any socket; the NF in user space never sees it. Both tests cost nothing when unused: the loader's
 * .rodata says so and the verifier drops them.
 */
static __always_inline int xnf_xdp_is_local(struct xnf_pkt *pkt)
{
	struct xnf_local_key key = { 0 };
	struct xnf_headers h;

	if (xnf_cfg.local_queues & (1u << (pkt->ctx->rx_queue_index & 31)))
		return 1;
	if (!xnf_cfg.local_ports || xnf_parse_headers(pkt, &h) < 0)
		return 0;
	if (h.tcp)
		key.port = h.tcp->dest;
	else if (h.udp)
		key.port = h.udp->dest;
	else
		return 0;
	key.proto = h.l4_proto;
	return bpf_map_lookup_elem(&xnf_local_ports, &key) != NULL;
}

static __always_inline __u32 xnf_xdp_socket_key(struct xnf_pkt *pkt)
{
	return xnf_ingress_port(pkt) * XNF_MAX_QUEUES + pkt->ctx->rx_queue_index;
}

/* Whether the frame's queue has a socket: a process that closed it (killed) leaves none. */
static __always_inline int xnf_xdp_has_socket(struct xnf_pkt *pkt)
{
	__u32 key = xnf_xdp_socket_key(pkt);

	return bpf_map_lookup_elem(&xnf_xsks, &key) != NULL;
}

static __always_inline int xnf_xdp_to_user(struct xnf_pkt *pkt)
{
	__u32 key = xnf_xdp_socket_key(pkt);
	int action;

	if ((xnf_cfg.local_queues || xnf_cfg.local_ports) && xnf_xdp_is_local(pkt)) {
		xnf_count(XNF_STAT_LOCAL, pkt->ctx->data_end - pkt->ctx->data);
		return XDP_PASS;
	}
	action = bpf_redirect_map(&xnf_xsks, key, 0);

	if (action == XDP_REDIRECT)
		return action;
	xnf_count(XNF_STAT_REDIRECT_ERROR, pkt->ctx->data_end - pkt->ctx->data);
	return XDP_DROP;
}

/*
 * Hybrid's hand-over of the verdict to the worker that sends the frame: 4 bytes of XDP metadata just before the
 * frame, or, on a kernel that refuses XDP metadata (xnf_cfg.verdict_in_frame), 4 bytes pushed in front of the frame
 * itself (bpf_xdp_adjust_head), which the worker takes off again. 0, or -1 where the frame has no room for them.
 */
static __always_inline int xnf_xdp_hand_verdict(struct xdp_md *ctx, xnf_verdict verdict)
{
	void *data, *end, *meta;

	if (xnf_cfg.verdict_in_frame) {
		if (bpf_xdp_adjust_head(ctx, -(int)sizeof(__u32)))
			return -1;
		data = (void *)(long)ctx->data;
		end = (void *)(long)ctx->data_end;
		if (data + sizeof(__u32) > end)
			return -1;
		*(__u32 *)data = verdict;
		return 0;
	}
	if (bpf_xdp_adjust_meta(ctx, -(int)sizeof(__u32)))
		return -1;
	data = (void *)(long)ctx->data;
	meta = (void *)(long)ctx->data_meta;
	if (meta + sizeof(__u32) > data)
		return -1;
	*(__u32 *)meta = verdict;
	return 0;
}

/*
 * Hybrid: a frame the NF sends on (TX, REDIRECT) goes to user space with its verdict (above), for a worker to
 * transmit; the rest is handled here. If the verdict cannot go with it, the kernel sends it itself.
 * Checked apart by the verifier: the socket's lookup and its fallback, walked once for every state the NF
 * returns in, took an NF with a loop (checksum) past the verifier's million instructions on 6.18.
 */
XNF_VERIFIED_APART int xnf__hybrid_send(struct xdp_md *ctx, __u32 verdict, __u32 beyond)
{
	struct xnf_pkt pkt = { .beyond = beyond, .ctx = ctx };
	__u32 key;
	int redirect;

	if (!ctx)
		return XDP_ABORTED;
	if (xnf_cfg.kernel_fallback && !xnf_xdp_has_socket(&pkt))
		return xnf_xdp_action(&pkt, verdict); /* the workers are gone: the kernel sends it */
	key = xnf_xdp_socket_key(&pkt);
	if (xnf_xdp_hand_verdict(ctx, verdict))
		return xnf_xdp_action(&pkt, verdict);
	redirect = bpf_redirect_map(&xnf_xsks, key, 0);
	if (redirect == XDP_REDIRECT)
		return redirect;
	xnf_count(XNF_STAT_REDIRECT_ERROR, xnf__xdp_frame_len(ctx));
	return XDP_DROP;
}

static __always_inline int xnf_xdp_hybrid(struct xdp_md *ctx, struct xnf_pkt *pkt, xnf_verdict verdict)
{
	__u32 action = XNF_VERDICT_ACTION(verdict);

	if (action != XNF_TX && action != XNF_REDIRECT_ACTION)
		return xnf_xdp_action(pkt, verdict);
	return xnf__hybrid_send(ctx, verdict, pkt->beyond);
}

/*
 * A split chain's kernel part: what its members drop or pass ends here; a frame they send on goes to the
 * socket of its port and queue, whose worker runs the remaining members. Members hand each other only the
 * frame (the chain's contract), and the worker knows its port and queue, so no metadata is needed.
 */
static __always_inline int xnf_xdp_split(struct xdp_md *ctx, struct xnf_pkt *pkt, xnf_verdict verdict)
{
	__u32 action = XNF_VERDICT_ACTION(verdict);

	if (action != XNF_TX && action != XNF_REDIRECT_ACTION)
		return xnf_xdp_action(pkt, verdict);
	return xnf_xdp_to_user(pkt);
}

/*
 * The entry point. In the user-space modes a pre-filter (--offload-drops) may drop a frame first, by one of
 * the NF's pure-drop rules the controller copied into the kernel; every other frame goes to its socket.
 */
#define XNF__DEFINE_ENTRY(fn, name, offloaded_drop)                            \
	static __always_inline int xnf__entry(struct xdp_md *ctx, struct xnf_pkt *pkt) \
	{                                                                      \
		if (xnf_cfg.datapath == XNF_DATAPATH_USER) {                   \
			if (xnf_cfg.offload_drops && offloaded_drop(pkt)) {    \
				xnf_count(XNF_STAT_DROP, xnf__xdp_frame_len(ctx)); \
				return XDP_DROP;                               \
			}                                                      \
			if (xnf_cfg.kernel_fallback && !xnf_xdp_has_socket(pkt)) \
				return xnf_xdp_action(pkt, fn(pkt));           \
			return xnf_xdp_to_user(pkt);                           \
		}                                                              \
		if (xnf_cfg.datapath == XNF_DATAPATH_HYBRID)                   \
			return xnf_xdp_hybrid(ctx, pkt, fn(pkt));              \
		if (xnf_cfg.datapath == XNF_DATAPATH_SPLIT)                    \
			return xnf_xdp_split(ctx, pkt, fn(pkt));               \
		return xnf_xdp_action(pkt, fn(pkt));                           \
	}                                                                      \
	SEC("xdp")                                                             \
	int xnf_xdp_main(struct xdp_md *ctx)                                   \
	{                                                                      \
		if (!xnf_is_in_force()) {                                      \
			xnf_count(XNF_STAT_NOT_READY, xnf__xdp_frame_len(ctx)); \
			return XDP_DROP;                                       \
		}                                                              \
		XNF__RULES_FRAME_BEGIN();                                      \
		XNF__CAPTURE_ENTRY(ctx);                                       \
		int finished = xnf__finish_csum(ctx);                          \
		struct xnf_pkt pkt;                                            \
		xnf_pkt_init(&pkt, ctx);                                       \
		return xnf__settle_csum(ctx, finished, xnf__entry(ctx, &pkt)); \
	}                                                                      \
	char _license[] SEC("license") = "Dual BSD/GPL"

#define XNF_DEFINE_NF_ENTRY(fn, name) XNF__DEFINE_ENTRY(fn, name, xnf__no_offloaded_drop)

/* The pre-filter of an NF with pure-drop rules (xnf/drop_rules.h): the packet's rule key, looked up among
 * the rules the controller put in the kernel; a hit is counted in the rule's slot. */
#define XNF__OFFLOADED_DROP(fn, key_fn)                                        \
	static __always_inline int xnf__offloaded_drop_##fn(struct xnf_pkt *pkt) \
	{                                                                      \
		xnf__drop_rule_key_t key;                                      \
		__u32 *slot;                                                   \
		__u64 *hits;                                                   \
		__builtin_memset(&key, 0, sizeof(key));                        \
		if (key_fn(pkt, &key) < 0)                                     \
			return 0;                                              \
		slot = bpf_map_lookup_elem(&xnf_offload_drops, &key);          \
		if (!slot)                                                     \
			return 0;                                              \
		hits = bpf_map_lookup_elem(&xnf_offload_hits, slot);           \
		if (hits)                                                      \
			(*hits)++;                                             \
		return 1;                                                      \
	}

/* A chain member only provides its function: the chain defines the entry. */
#ifdef XNF_CHAIN_MEMBER
#define XNF_DEFINE_NF(fn) extern int xnf__chain_member_##fn
#define XNF_DEFINE_NF_WITH_DROP_RULES(fn, key_fn) XNF_DEFINE_NF(fn)
#else
#define XNF_DEFINE_NF(fn) XNF_DEFINE_NF_ENTRY(fn, #fn)
#define XNF_DEFINE_NF_WITH_DROP_RULES(fn, key_fn)                              \
	XNF__OFFLOADED_DROP(fn, key_fn)                                        \
	XNF__DEFINE_ENTRY(fn, #fn, xnf__offloaded_drop_##fn)
#endif

#endif /* XNF_XDP_GLUE_H */
