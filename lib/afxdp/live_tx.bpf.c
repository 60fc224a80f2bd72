/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The live-frames transmit path of the AF_XDP workers (--tx-path live).
 *
 * Copy-mode AF_XDP transmit builds an skb per frame and goes through the
 * generic stack; XDP's own transmit does not. A worker therefore hands its
 * outgoing frames to this program through one BPF_PROG_RUN call per batch in
 * live-frames mode (BPF_F_TEST_XDP_LIVE_FRAMES): the kernel runs it once per
 * frame on a fresh page, the program copies the frame in from the worker's
 * UMEM and redirects it to its port, and the kernel sends it the way XDP
 * sends a redirected frame (ndo_xdp_xmit, no skb).
 *
 * A frame the NF passed (XNF_PASS) is handed to the local stack instead:
 * XDP_PASS in a live-frames call builds an skb and receives it on the call's
 * ingress device, the port it came in on, so the stack sees it as XDP_PASS
 * would have shown it (neighbour replies resolve the port's neighbours).
 *
 * The length of the frame the program starts from says which worker called.
 * Two tracepoint programs count what happens to the frames after the
 * redirect, where the program cannot see it: a redirect the kernel refuses,
 * and frames the driver refuses when the queue is flushed.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "live_tx_abi.h"

/* Written by the loader before load: constants to the verifier. */
const volatile __u32 frame_size = 4096;
const volatile __u32 nports = 0;
const volatile __u32 port_ifindex[XNF_LIVE_MAX_PORTS] = {};
/* Written after load: the tracepoints ignore every other program's redirects. */
__u32 live_prog_id = 0;

/* Every worker's UMEM, end to end: the workers mmap their stretch and register it as AF_XDP memory.
 * The value size is the frame size, set at load time. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, 4096);
	__uint(max_entries, 1);
} xnf_live_umem SEC(".maps");

/* XNF_LIVE_MAX_BATCH descriptors per worker; sized at load time. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct xnf_live_desc);
	__uint(max_entries, XNF_LIVE_MAX_BATCH);
} xnf_live_descs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct xnf_live_cursor);
	__uint(max_entries, 1);
} xnf_live_cursors SEC(".maps");

/* Port index -> ifindex. */
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, XNF_LIVE_MAX_PORTS);
} xnf_live_ports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct xnf_live_inflight);
	__uint(max_entries, 1);
} xnf_live_inflight SEC(".maps");

static __always_inline int refuse(struct xnf_live_cursor *c)
{
	c->refused++;
	return XDP_DROP;
}

/* Frames up to this long are copied 8 bytes at a time by the program: the kernel's memcpy, behind
 * bpf_xdp_store_bytes, is slow to start for short copies here (~10 % of the worker's core for 64-byte frames). */
#define SHORT_FRAME 128

/* Copies len (8..SHORT_FRAME) bytes from src to the frame, in 8-byte words, the last one ending at len
 * (it may overlap the one before). */
static __always_inline int copy_short(struct xdp_md *ctx, const __u8 *src, __u32 len)
{
	__u8 *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	__u32 last = len - 8;

	for (__u32 i = 0; i < SHORT_FRAME / 8 - 1; i++) {
		if (8 * i >= last)
			break;
		if (data + 8 * i + 8 > end)
			return -1;
		*(__u64 *)(data + 8 * i) = *(const __u64 *)(src + 8 * i);
	}
	last &= SHORT_FRAME - 1;
	if (data + last + 8 > end)
		return -1;
	*(__u64 *)(data + last) = *(const __u64 *)(src + last);
	return 0;
}

static __always_inline struct xnf_live_inflight *inflight(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&xnf_live_inflight, &zero);
}

SEC("xdp")
int xnf_live_tx(struct xdp_md *ctx)
{
	__u32 seed_len = bpf_xdp_get_buff_len(ctx), worker = seed_len - XNF_LIVE_SEED_LEN, key, port, offset, len;
	struct xnf_live_inflight *queued = inflight();
	struct xnf_live_cursor *c = bpf_map_lookup_elem(&xnf_live_cursors, &worker);
	struct xnf_live_desc *d;
	__u8 *frame;
	int action;

	if (!c || !queued)
		return XDP_ABORTED;
	if (c->next >= c->count || c->next >= XNF_LIVE_MAX_BATCH)
		return refuse(c);
	key = worker * XNF_LIVE_MAX_BATCH + c->next++;
	d = bpf_map_lookup_elem(&xnf_live_descs, &key);
	if (!d)
		return refuse(c);
	frame = bpf_map_lookup_elem(&xnf_live_umem, &d->frame);
	offset = d->offset;
	len = d->len;
	port = d->port;
	if (!frame || offset >= XNF_LIVE_MAX_OFFSET || len < XNF_LIVE_MIN_LEN ||
	    len > frame_size - XNF_LIVE_MAX_OFFSET)
		return refuse(c);
	/* Live frames are recycled within a call with only their length reset: set it, write it whole. */
	if (bpf_xdp_adjust_tail(ctx, (int)len - (int)seed_len))
		return refuse(c);
	if (len <= SHORT_FRAME ? copy_short(ctx, frame + offset, len) : bpf_xdp_store_bytes(ctx, 0, frame + offset, len))
		return refuse(c);
	if (d->to_stack) {
		c->passed++;
		return XDP_PASS;
	}
	if (port >= nports || port >= XNF_LIVE_MAX_PORTS)
		return refuse(c);
	action = bpf_redirect_map(&xnf_live_ports, port, XDP_DROP);
	if (action != XDP_REDIRECT)
		return refuse(c);
	queued->worker = worker;
	queued->queued[port]++;
	return XDP_REDIRECT;
}

/* Just the fields read here; CO-RE finds them in the running kernel. */
struct net_device {
	int ifindex;
} __attribute__((preserve_access_index));
struct bpf_prog_aux {
	__u32 id;
} __attribute__((preserve_access_index));
struct bpf_prog {
	struct bpf_prog_aux *aux;
} __attribute__((preserve_access_index));

static __always_inline int port_of(int ifindex)
{
	for (__u32 p = 0; p < XNF_LIVE_MAX_PORTS && p < nports; p++) {
		if (port_ifindex[p] == (__u32)ifindex)
			return (int)p;
	}
	return -1;
}

/* The kernel would not queue a frame this program redirected (device down, frame over its MTU, no XDP send). */
SEC("tp_btf/xdp_redirect_err")
int BPF_PROG(xnf_live_redirect_err, const struct net_device *dev, const struct bpf_prog *xdp, const void *tgt,
	     int err, enum bpf_map_type map_type, __u32 map_id, __u32 index)
{
	struct xnf_live_inflight *queued;
	struct xnf_live_cursor *c;
	__u32 worker;

	if (!live_prog_id || xdp->aux->id != live_prog_id)
		return 0;
	queued = inflight();
	if (!queued)
		return 0;
	worker = queued->worker;
	c = bpf_map_lookup_elem(&xnf_live_cursors, &worker);
	if (!c)
		return 0;
	c->redirect_errors++;
	c->last_error = err;
	c->last_error_port = index;
	if (index >= XNF_LIVE_MAX_PORTS)
		return 0;
	/* Keep the compiler from folding the check into a mask test the verifier cannot follow. */
	__asm__ volatile("" : "+r"(index));
	index &= XNF_LIVE_MAX_PORTS - 1;
	if (queued->queued[index])
		queued->queued[index]--;
	return 0;
}

/*
 * A per-CPU redirect queue was flushed to a device. Frames of ours are in it
 * only between our program's redirect and the flush at the end of the
 * kernel's batch, with bottom halves off: nothing else can add to that queue
 * on this CPU meanwhile, so a flush while we have frames queued is all ours.
 * It need not take them all: a full queue (16 frames) is flushed when the
 * next frame is queued, after the program has counted that one.
 */
SEC("tp_btf/xdp_devmap_xmit")
int BPF_PROG(xnf_live_devmap_xmit, const struct net_device *from_dev, const struct net_device *to_dev, int sent,
	     int drops, int err)
{
	struct xnf_live_inflight *queued = inflight();
	int port = port_of(to_dev->ifindex);
	__u32 worker, flushed = (__u32)(sent + drops);
	struct xnf_live_cursor *c;

	if (!queued || port < 0 || port >= XNF_LIVE_MAX_PORTS || !queued->queued[port])
		return 0;
	queued->queued[port] -= flushed < queued->queued[port] ? flushed : queued->queued[port];
	worker = queued->worker;
	c = bpf_map_lookup_elem(&xnf_live_cursors, &worker);
	if (!c)
		return 0;
	c->device_sent += sent;
	c->device_dropped += drops;
	if (err) {
		c->last_error = err;
		c->last_error_port = (__u32)port;
	}
	return 0;
}

char _license[] SEC("license") = "Dual BSD/GPL";
