/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The minimal hand-written drop: what xnf's drop is compared against. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int hand_drop(struct xdp_md *ctx)
{
	return XDP_DROP;
}

char _license[] SEC("license") = "Dual BSD/GPL";
