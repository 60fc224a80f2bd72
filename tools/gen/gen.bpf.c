/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The generator's program, run by BPF_PROG_RUN in live-frames mode: every
 * frame it returns XDP_TX for is transmitted out of the generator's
 * interface. Kept to the minimum; whatever it does costs generator speed.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int xnf_gen(struct xdp_md *ctx)
{
	return XDP_TX;
}

char _license[] SEC("license") = "Dual BSD/GPL";
