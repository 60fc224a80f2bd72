/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * XDP_DROP on the generator side: returned frames are counted by veth's own
 * XDP counters and go no further, so the Linux stack's cost of receiving
 * them does not hide the cost of the device under test.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int xnf_sink(struct xdp_md *ctx)
{
	return XDP_DROP;
}

/* The same for a lab of jumbo frames: a veth takes a peer MTU above a page only with a multi-buffer program. */
SEC("xdp.frags")
int xnf_sink_frags(struct xdp_md *ctx)
{
	return XDP_DROP;
}

char _license[] SEC("license") = "Dual BSD/GPL";
