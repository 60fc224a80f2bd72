/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * XDP_PASS, nothing else. On veth, frames sent with XDP_TX or redirected into
 * a veth only reach its peer when the peer has an XDP program: the lab puts
 * this one on the generator side so that returned traffic arrives.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int xnf_pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}

/* The same for a lab of jumbo frames: a veth takes a peer MTU above a page only with a multi-buffer program. */
SEC("xdp.frags")
int xnf_pass_frags(struct xdp_md *ctx)
{
	return XDP_PASS;
}

char _license[] SEC("license") = "Dual BSD/GPL";
