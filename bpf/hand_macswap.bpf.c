/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The minimal hand-written MAC swap and XDP_TX: what xnf's macswap is compared
 * against. The swap is the same 16-bit code as xnf_swap_macs(), so the
 * comparison measures the framework around it, not a better swap.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int hand_macswap(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u16 *w = data;
	__u16 d0, d1, d2;

	if (data + ETH_HLEN > data_end)
		return XDP_DROP;
	d0 = w[0];
	d1 = w[1];
	d2 = w[2];
	w[0] = w[3];
	w[1] = w[4];
	w[2] = w[5];
	w[3] = d0;
	w[4] = d1;
	w[5] = d2;
	return XDP_TX;
}

char _license[] SEC("license") = "Dual BSD/GPL";
