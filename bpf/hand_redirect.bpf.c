/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The least an XDP program that forwards between two ports can do: it reads one byte of the frame (the IPv4
 * header's protocol: the frame's first cache line, which any NF that looks at a header pays to bring in from the
 * sender's core) and redirects every frame to the port in redirect_to's one slot (xnf-xdp-load --redirect-to),
 * through a devmap as xnf's kernel path sends. The floor of an NF's rate between two veths.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define IPV4_PROTOCOL_AT 23   /* 14 bytes of Ethernet header, then the protocol 9 bytes into IPv4's */

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} redirect_to SEC(".maps");

SEC("xdp")
int hand_redirect(struct xdp_md *ctx)
{
	volatile __u8 *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;

	if ((void *)(data + IPV4_PROTOCOL_AT + 1) > data_end || data[IPV4_PROTOCOL_AT] == 0)
		return XDP_PASS;
	return bpf_redirect_map(&redirect_to, 0, XDP_DROP);
}

char _license[] SEC("license") = "Dual BSD/GPL";
