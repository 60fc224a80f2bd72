/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The generator's program, run by BPF_PROG_RUN in live-frames mode: every
 * frame it returns XDP_TX for is transmitted out of the generator's
 * interface. Kept to the minimum; whatever it does costs generator speed.
 *
 * The generator also keeps this program attached (generic mode) to the
 * namespace's loopback while it runs: a program that is attached somewhere
 * stays in the kernel's XDP dispatcher, so a BPF_PROG_RUN call no longer
 * rebuilds the dispatcher and waits for RCU. Frames really received on
 * loopback are not the generator's: they pass untouched.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

const volatile __u32 gen_ifindex = 0;

SEC("xdp")
int xnf_gen(struct xdp_md *ctx)
{
	if (ctx->ingress_ifindex != gen_ifindex)
		return XDP_PASS;
	return XDP_TX;
}

char _license[] SEC("license") = "Dual BSD/GPL";
