/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Counts every frame, then XDP_PASS: the other program of the coexistence test, run in libxdp's dispatcher in
 * front of an NF (its XDP_PASS lets the dispatcher call the next program). The count is in the map
 * count_pass_frames, which bpftool reads.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 1);
} count_pass_frames SEC(".maps");

SEC("xdp")
int count_pass(struct xdp_md *ctx)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&count_pass_frames, &zero);

	if (n)
		(*n)++;
	return XDP_PASS;
}

char _license[] SEC("license") = "Dual BSD/GPL";
