/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The reference generator's program: send every frame as it is. This is all
 * a live-frames generator can do at the least, so its rate is the kernel's
 * path alone (frame set-up, redirect, the peer's receive), the yardstick for
 * xnf-gen's own program.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int xnf_gen_ref(struct xdp_md *ctx)
{
	return XDP_TX;
}

char _license[] SEC("license") = "Dual BSD/GPL";
