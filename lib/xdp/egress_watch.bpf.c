/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What becomes of the frames an NF sends on from XDP (XDP_TX, a redirect to
 * one of its ports), after its verdict, where its program cannot see:
 *
 *   xdp:xdp_redirect_err  the kernel would not queue a redirect (a veth whose
 *                         peer has neither an XDP program nor GRO, a port
 *                         down, a frame over its MTU): refused
 *   xdp:xdp_exception     XDP_TX the driver could not take: refused
 *   xdp:xdp_devmap_xmit   redirected frames flushed to a device: sent, or
 *                         dropped by it (a full veth ring)
 *   xdp:xdp_bulk_tx       XDP_TX frames flushed (veth): sent, or dropped
 *
 * At tc (the skb path) the kernel carries a redirect out after the program
 * has returned, and frees the skb where it cannot:
 *
 *   skb:kfree_skb         freed inside the redirect's own code (a peer down
 *                         or gone, a target not in this namespace, no link
 *                         layer header): refused, on the port the frame
 *                         came in by (the target is forgotten by then)
 *
 * A device is one of the instance's ports when its index is a port's and its
 * namespace's cookie is the instance's (indexes repeat across namespaces,
 * cookies never). Counted per port the frames left by, per CPU.
 */
#include <linux/bpf.h>
#include <linux/errno.h>
#include <stdbool.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "egress_watch_abi.h"

/* Written by the loader before load: constants to the verifier. */
const volatile __u64 netns_cookie = 0;
const volatile __u32 nports = 0;
const volatile __u32 port_ifindex[XNF_EGRESS_MAX_PORTS] = {};
const volatile __u32 ports_map_id = 0; /* the NF program's port map: its redirects, not anyone else's */
/* Where the kernel's code that carries out a tc redirect lies ([start, end) from kallsyms). */
const volatile __u64 redirect_text_start[XNF_EGRESS_REDIRECT_TEXTS] = {};
const volatile __u64 redirect_text_end[XNF_EGRESS_REDIRECT_TEXTS] = {};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct xnf_egress_counts);
	__uint(max_entries, XNF_EGRESS_MAX_PORTS);
} xnf_egress SEC(".maps");

/* Just the fields read here; CO-RE finds them in the running kernel. */
struct net {
	__u64 net_cookie;
} __attribute__((preserve_access_index));
struct net_device {
	int ifindex;
	struct {
		struct net *net;
	} nd_net;
} __attribute__((preserve_access_index));
struct bpf_prog;
struct sk_buff {
	struct net_device *dev;
} __attribute__((preserve_access_index));

/* The port a device is, or -1 when it is not one of ours. */
static __always_inline int port_of(const struct net_device *dev)
{
	int ifindex = dev->ifindex;

	if (dev->nd_net.net->net_cookie != netns_cookie)
		return -1;
	for (__u32 p = 0; p < XNF_EGRESS_MAX_PORTS && p < nports; p++) {
		if (port_ifindex[p] == (__u32)ifindex)
			return (int)p;
	}
	return -1;
}

static __always_inline struct xnf_egress_counts *counts_of(int port)
{
	__u32 key = (__u32)port;

	return port < 0 ? NULL : bpf_map_lookup_elem(&xnf_egress, &key);
}

SEC("tp_btf/xdp_redirect_err")
int BPF_PROG(xnf_egress_redirect_err, const struct net_device *dev, const struct bpf_prog *xdp, const void *tgt,
	     int err, enum bpf_map_type map_type, __u32 map_id, __u32 index)
{
	struct xnf_egress_counts *c;

	if (map_id != ports_map_id || port_of(dev) < 0 || index >= XNF_EGRESS_MAX_PORTS)
		return 0;
	c = counts_of((int)index);
	if (c) {
		c->refused++;
		c->last_error = err;
	}
	return 0;
}

SEC("tp_btf/xdp_exception")
int BPF_PROG(xnf_egress_exception, const struct net_device *dev, const struct bpf_prog *xdp, __u32 act)
{
	struct xnf_egress_counts *c;

	if (act != XDP_TX)
		return 0;
	c = counts_of(port_of(dev));
	if (c)
		c->refused++;
	return 0;
}

/* A queue of frames flushed to the device of port: what it took and what it refused. */
static __always_inline int count_flush(int port, int sent, int drops, int err)
{
	struct xnf_egress_counts *c = counts_of(port);

	if (!c)
		return 0;
	c->sent += (__u32)sent;
	c->dropped += (__u32)drops;
	if (err)
		c->last_error = err;
	return 0;
}

SEC("tp_btf/xdp_devmap_xmit")
int BPF_PROG(xnf_egress_devmap_xmit, const struct net_device *from_dev, const struct net_device *to_dev, int sent,
	     int drops, int err)
{
	return port_of(from_dev) < 0 ? 0 : count_flush(port_of(to_dev), sent, drops, err);
}

SEC("tp_btf/xdp_bulk_tx")
int BPF_PROG(xnf_egress_bulk_tx, const struct net_device *dev, int sent, int drops, int err)
{
	return count_flush(port_of(dev), sent, drops, err);
}

static __always_inline bool in_redirect_text(__u64 at)
{
	for (int i = 0; i < XNF_EGRESS_REDIRECT_TEXTS; i++) {
		if (at >= redirect_text_start[i] && at < redirect_text_end[i])
			return true;
	}
	return false;
}

SEC("tp_btf/kfree_skb")
int BPF_PROG(xnf_egress_skb_refused, struct sk_buff *skb, void *location)
{
	struct xnf_egress_counts *c;

	if (!in_redirect_text((__u64)location))
		return 0;
	c = counts_of(port_of(skb->dev));
	if (c) {
		c->refused++;
		c->last_error = -EINVAL;
	}
	return 0;
}

char _license[] SEC("license") = "Dual BSD/GPL";
