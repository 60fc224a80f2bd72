/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The programs the kernel probes load where raw instructions cannot say enough (lib/util/kernel_probes.c): a
 * global function that an freplace program replaces, as libxdp's dispatcher is replaced, and a BTF tracepoint
 * program, as the egress watch is. Neither is ever attached where a frame meets it.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

__attribute__((noinline)) int xnf_probe_target(struct xdp_md *ctx)
{
	return ctx->rx_queue_index == 0 ? XDP_PASS : XDP_DROP;
}

SEC("xdp")
int xnf_probe_xdp(struct xdp_md *ctx)
{
	return xnf_probe_target(ctx);
}

SEC("freplace/xnf_probe_target")
int xnf_probe_ext(struct xdp_md *ctx)
{
	return XDP_PASS;
}

SEC("tp_btf/xdp_exception")
int BPF_PROG(xnf_probe_tp)
{
	return 0;
}

char _license[] SEC("license") = "GPL";
