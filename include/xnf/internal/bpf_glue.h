/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Kernel side of XNF_DEFINE_NF: the XDP entry point that wraps an NF, turns
 * its verdict into an XDP action and counts it. Included by nf.h only when
 * compiling with -target bpf.
 */
#if !defined(XNF_INTERNAL_OK) && !defined(XNF__FROM_SDK)
#error "xnf/internal/ is xnf's own glue, not the NF API: include <xnf/nf.h> (the data path) or <xnf/control.h> (the control side)"
#endif
#ifndef XNF_BPF_GLUE_H
#define XNF_BPF_GLUE_H

#include <xnf/internal/capture_abi.h>
#include <xnf/internal/csum_finish.h>

/* Per-CPU packet and byte counts per verdict class (enum xnf_stat_slot). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct xnf_counter);
	__uint(max_entries, XNF_STAT_NSLOTS);
} xnf_stats SEC(".maps");

/*
 * 1 once the instance is in force (its rules, options and start step loaded; set by the loader). The program is
 * attached before that, so that a frame arriving while the instance starts is dropped and counted (not_ready)
 * instead of going on untouched: a NAT never forwards untranslated, a firewall never passes unfiltered.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 1);
} xnf_in_force SEC(".maps");

/* Port index -> ifindex, for XNF_REDIRECT(port). Filled by the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, XNF_MAX_PORTS);
} xnf_ports SEC(".maps");

/* A bit per port whose veth peer takes XDP frames by GRO alone, turned on by --peers fix (set by the runtime):
 * the NF's TX leaves it as a redirect. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 1);
} xnf_tx_by_redirect SEC(".maps");

/* (port * XNF_MAX_QUEUES + queue) -> AF_XDP socket, for the user-space data path. */
struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, XNF_MAX_PORTS * XNF_MAX_QUEUES);
} xnf_xsks SEC(".maps");

/* The dispatcher's local services (--local PROTO:PORT): filled by the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct xnf_local_key);
	__type(value, __u32);
	__uint(max_entries, XNF_MAX_LOCAL_PORTS);
} xnf_local_ports SEC(".maps");

/* xnf dump: which verdicts to capture (the instance's capture thread sets it), and the ring they go to. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct xnf_capture_control);
	__uint(max_entries, 1);
} xnf_capture_ctl SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, XNF_CAPTURE_RING_BYTES);
} xnf_capture_ring SEC(".maps");

/* A record is built here, then only its header and the bytes kept go into the ring. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct xnf_capture_record);
	__uint(max_entries, 1);
} xnf_capture_scratch SEC(".maps");

static __always_inline struct xnf_capture_control *xnf_capture_control(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&xnf_capture_ctl, &zero);
}

/*
 * Fills a record's header and copies len bytes of the frame (at most max, a constant once inlined) after it.
 * Returns the bytes copied, 0 when the frame could not be read.
 */
static __always_inline __u64 xnf__capture_fill(struct xnf_capture_header *h, void *data, struct xdp_md *ctx,
					       __u32 slot, __u64 bytes, __u64 len, __u64 max)
{
	h->mono_ns = bpf_ktime_get_ns();
	h->wire_len = (__u32)bytes;
	h->ifindex = ctx->ingress_ifindex;
	h->queue = (__u16)ctx->rx_queue_index;
	h->slot = (__u8)slot;
	h->side = XNF_CAPTURE_KERNEL;
	/* The verifier must see the bound on the register the helper gets: no copy of len in between. */
	asm volatile("" : "+r"(len));
	if (len < 1 || len > max || bpf_xdp_load_bytes(ctx, 0, data, len))
		len = 0;
	h->cap_len = (__u32)len;
	return len;
}

/* The short record, reserved in the ring and filled in place. */
static __always_inline int xnf__capture_short(struct xdp_md *ctx, struct xnf_capture_control *ctl, __u32 slot,
					      __u64 bytes, __u64 len)
{
	struct xnf_capture_short_record *r = bpf_ringbuf_reserve(&xnf_capture_ring, sizeof(*r), 0);

	if (!r) {
		__sync_fetch_and_add(&ctl->lost, 1);
		return 0;
	}
	xnf__capture_fill(&r->h, r->data, ctx, slot, bytes, len, XNF_CAPTURE_SHORT);
	bpf_ringbuf_submit(r, 0);
	return 0;
}

/*
 * Copies up to the capture's snap length of the frame into the ring, with its slot (a verdict, or
 * XNF_CAPTURE_SLOT_ENTRY). A global function, checked once by the verifier: its copy of a frame of any length
 * must not multiply the NF's states. Returns 0.
 */
__attribute__((noinline)) int xnf__capture(struct xdp_md *ctx, __u32 slot)
{
	struct xnf_capture_control *ctl = xnf_capture_control();
	struct xnf_capture_record *r;
	__u32 zero = 0;
	__u64 bytes, len;

	if (!ctx || !ctl)
		return 0;
	bytes = bpf_xdp_get_buff_len(ctx);
	len = bytes < ctl->snap ? bytes : ctl->snap;
	if (len <= XNF_CAPTURE_SHORT)
		return xnf__capture_short(ctx, ctl, slot, bytes, len);
	r = bpf_map_lookup_elem(&xnf_capture_scratch, &zero);
	if (!r)
		return 0;
	len = xnf__capture_fill(&r->h, r->data, ctx, slot, bytes, len, XNF_CAPTURE_SNAP_MAX);
	asm volatile("" : "+r"(len));
	if (len > XNF_CAPTURE_SNAP_MAX ||
	    bpf_ringbuf_output(&xnf_capture_ring, r, sizeof(r->h) + len, 0))
		__sync_fetch_and_add(&ctl->lost, 1);
	return 0;
}

/* With no capture running this is one inlined array load and a test per frame. */
static __always_inline void xnf_capture(struct xdp_md *ctx, __u32 slot)
{
	struct xnf_capture_control *ctl = xnf_capture_control();

	if (ctl && (ctl->slots & (1u << slot)))
		xnf__capture(ctx, slot);
}

/* At the entry, before anything ran: the same one load and test. */
static __always_inline void xnf_capture_entry(struct xdp_md *ctx)
{
	struct xnf_capture_control *ctl = xnf_capture_control();

	if (ctl && (ctl->at & XNF_CAPTURE_AT_ENTRY))
		xnf__capture(ctx, XNF_CAPTURE_SLOT_ENTRY);
}

static __always_inline void xnf_count(__u32 slot, __u64 bytes)
{
	struct xnf_counter *c = bpf_map_lookup_elem(&xnf_stats, &slot);

	if (c) {
		c->packets++;
		c->bytes += bytes;
	}
}

static __always_inline int xnf_is_in_force(void)
{
	__u32 zero = 0, *in_force = bpf_map_lookup_elem(&xnf_in_force, &zero);

	return in_force && *in_force;
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

static __always_inline int xnf_xdp_action(struct xdp_md *ctx, xnf_verdict verdict)
{
	/* Re-read the length: the NF may have grown or shrunk the frame. */
	__u64 bytes = ctx->data_end - ctx->data;
	__u32 slot;
	int action;

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
#ifndef XNF_NO_CAPTURE /* a benchmark's variant without the hook (xnf bench run capture-cost) */
	xnf_capture(ctx, slot);
#endif
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

static __always_inline int xnf_xdp_to_user(struct xnf_pkt *pkt)
{
	__u32 key = xnf_ingress_port(pkt) * XNF_MAX_QUEUES + pkt->ctx->rx_queue_index;
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
 * Hybrid: a frame the NF sends on (TX, REDIRECT) goes to user space with its
 * verdict in 4 bytes of XDP metadata, for a worker to transmit; the rest is
 * handled here. If the metadata cannot be added, the kernel sends it itself.
 */
static __always_inline int xnf_xdp_hybrid(struct xdp_md *ctx, struct xnf_pkt *pkt, xnf_verdict verdict)
{
	__u32 action = XNF_VERDICT_ACTION(verdict), key;
	void *data, *meta;
	int redirect;

	if (action != XNF_TX && action != XNF_REDIRECT_ACTION)
		return xnf_xdp_action(ctx, verdict);
	key = xnf_ingress_port(pkt) * XNF_MAX_QUEUES + ctx->rx_queue_index;
	if (bpf_xdp_adjust_meta(ctx, -(int)sizeof(__u32)))
		return xnf_xdp_action(ctx, verdict);
	data = (void *)(long)ctx->data;
	meta = (void *)(long)ctx->data_meta;
	if (meta + sizeof(__u32) > data)
		return xnf_xdp_action(ctx, verdict);
	*(__u32 *)meta = verdict;
	redirect = bpf_redirect_map(&xnf_xsks, key, 0);
	if (redirect == XDP_REDIRECT)
		return redirect;
	xnf_count(XNF_STAT_REDIRECT_ERROR, ctx->data_end - ctx->data);
	return XDP_DROP;
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
		return xnf_xdp_action(ctx, verdict);
	return xnf_xdp_to_user(pkt);
}

#ifndef XNF_NO_CAPTURE
#define XNF__CAPTURE_ENTRY(ctx) xnf_capture_entry(ctx)
#else
#define XNF__CAPTURE_ENTRY(ctx) ((void)0)
#endif

/* An NF without pure-drop rules has no pre-filter. */
static __always_inline int xnf__no_offloaded_drop(struct xnf_pkt *pkt)
{
	return 0;
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
				xnf_count(XNF_STAT_DROP, ctx->data_end - ctx->data); \
				return XDP_DROP;                               \
			}                                                      \
			return xnf_xdp_to_user(pkt);                           \
		}                                                              \
		if (xnf_cfg.datapath == XNF_DATAPATH_HYBRID)                   \
			return xnf_xdp_hybrid(ctx, pkt, fn(pkt));              \
		if (xnf_cfg.datapath == XNF_DATAPATH_SPLIT)                    \
			return xnf_xdp_split(ctx, pkt, fn(pkt));               \
		return xnf_xdp_action(ctx, fn(pkt));                           \
	}                                                                      \
	SEC("xdp")                                                             \
	int xnf_xdp_main(struct xdp_md *ctx)                                   \
	{                                                                      \
		if (!xnf_is_in_force()) {                                      \
			xnf_count(XNF_STAT_NOT_READY, ctx->data_end - ctx->data); \
			return XDP_DROP;                                       \
		}                                                              \
		XNF__CAPTURE_ENTRY(ctx);                                       \
		int finished = xnf__finish_csum(ctx);                          \
		struct xnf_pkt pkt = xnf_pkt_of(ctx);                          \
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

#endif /* XNF_BPF_GLUE_H */
