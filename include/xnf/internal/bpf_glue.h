/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Kernel side of XNF_DEFINE_NF, what every kernel hook shares: the glue's maps, the verdict counters, the gate
 * that holds frames until the instance is in force, and capture (xnf dump). The hook's own entry point, which
 * turns the NF's verdict into the hook's action, follows: xdp_glue.h, or tc_glue.h when built with XNF_HOOK_TC.
 * Included by nf.h only when compiling with -target bpf.
 */
#if !defined(XNF_INTERNAL_OK) && !defined(XNF__FROM_SDK)
#error "xnf/internal/ is xnf's own glue, not the NF API: include <xnf/nf.h> (the data path) or <xnf/control.h> (the control side)"
#endif
#ifndef XNF_BPF_GLUE_H
#define XNF_BPF_GLUE_H

#include <xnf/internal/capture_abi.h>

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

/* Port index -> ifindex, for XNF_REDIRECT(port) in XDP. Filled by the loader. */
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
#ifdef XNF_HOOK_TC
#define XNF__FRAME_BYTES(ctx) ((ctx)->len)
#define XNF__RX_QUEUE(ctx) ((ctx)->queue_mapping)
#define XNF__LOAD_BYTES bpf_skb_load_bytes
#define XNF__CAPTURE_SIDE XNF_CAPTURE_TC
#else
#define XNF__FRAME_BYTES(ctx) bpf_xdp_get_buff_len(ctx)
#define XNF__RX_QUEUE(ctx) ((ctx)->rx_queue_index)
#define XNF__LOAD_BYTES bpf_xdp_load_bytes
#define XNF__CAPTURE_SIDE XNF_CAPTURE_KERNEL
#endif

/*
 * len - 1 checked below max, then 1 added back, in the register the helper gets: the verifier knows it is 1 to max.
 * Written so because older verifiers (Linux 6.1's, 6.12's) lose a bound the compiler checks on a copy (it turns
 * "len < 1 || len > max" into one compare of len - 1) and refuse a size that might be 0. The barriers keep the
 * compiler from folding the steps back into len.
 */
static __always_inline int xnf__load_frame_bytes(xnf_ctx *ctx, void *data, __u64 len, __u64 max)
{
	__u64 less = len - 1;

	asm volatile("" : "+r"(less));
	if (less >= max)
		return -1;
	asm volatile("" : "+r"(less));
	return XNF__LOAD_BYTES(ctx, 0, data, less + 1);
}

static __always_inline __u64 xnf__capture_fill(struct xnf_capture_header *h, void *data, xnf_ctx *ctx,
					       __u32 slot, __u64 bytes, __u64 len, __u64 max)
{
	h->mono_ns = bpf_ktime_get_ns();
	h->wire_len = (__u32)bytes;
	h->ifindex = ctx->ingress_ifindex;
	h->queue = (__u16)XNF__RX_QUEUE(ctx);
	h->slot = (__u8)slot;
	h->side = XNF__CAPTURE_SIDE;
	if (xnf__load_frame_bytes(ctx, data, len, max))
		len = 0;
	h->cap_len = (__u32)len;
	return len;
}

/* The short record, reserved in the ring and filled in place. */
static __always_inline int xnf__capture_short(xnf_ctx *ctx, struct xnf_capture_control *ctl, __u32 slot,
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
XNF_VERIFIED_APART int xnf__capture(xnf_ctx *ctx, __u32 slot)
{
	struct xnf_capture_control *ctl = xnf_capture_control();
	struct xnf_capture_record *r;
	__u32 zero = 0;
	__u64 bytes, len;

	if (!ctx || !ctl)
		return 0;
	bytes = XNF__FRAME_BYTES(ctx);
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
static __always_inline void xnf_capture(xnf_ctx *ctx, __u32 slot)
{
	struct xnf_capture_control *ctl = xnf_capture_control();

	if (ctl && (ctl->slots & (1u << slot)))
		xnf__capture(ctx, slot);
}

/* At the entry, before anything ran: the same one load and test. */
static __always_inline void xnf_capture_entry(xnf_ctx *ctx)
{
	struct xnf_capture_control *ctl = xnf_capture_control();

	if (ctl && (ctl->at & XNF_CAPTURE_AT_ENTRY))
		xnf__capture(ctx, XNF_CAPTURE_SLOT_ENTRY);
}

/* frames: how many frames on the wire the counted unit stands for (at tc a GSO segment is several). */
static __always_inline void xnf_count_frames(__u32 slot, __u64 frames, __u64 bytes)
{
	struct xnf_counter *c = bpf_map_lookup_elem(&xnf_stats, &slot);

	if (c) {
		c->packets += frames;
		c->bytes += bytes;
	}
}

static __always_inline void xnf_count(__u32 slot, __u64 bytes)
{
	xnf_count_frames(slot, 1, bytes);
}

static __always_inline int xnf_is_in_force(void)
{
	__u32 zero = 0, *in_force = bpf_map_lookup_elem(&xnf_in_force, &zero);

	return in_force && *in_force;
}

#ifndef XNF_NO_CAPTURE /* a benchmark's variant without the hook (xnf bench run capture-cost) */
#define XNF__CAPTURE_ENTRY(ctx) xnf_capture_entry(ctx)
#define XNF__CAPTURE(ctx, slot) xnf_capture(ctx, slot)
#else
#define XNF__CAPTURE_ENTRY(ctx) ((void)0)
#define XNF__CAPTURE(ctx, slot) ((void)0)
#endif

/* An NF without pure-drop rules has no pre-filter. */
static __always_inline int xnf__no_offloaded_drop(struct xnf_pkt *pkt)
{
	return 0;
}

#ifdef XNF_HOOK_TC
#include <xnf/internal/tc_glue.h>
#else
#include <xnf/internal/xdp_glue.h>
#endif

#endif /* XNF_BPF_GLUE_H */
