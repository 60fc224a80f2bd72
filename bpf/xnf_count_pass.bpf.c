/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Counts every frame and hands it on: another party's program in the coexistence tests. At XDP (section xdp) it
 * runs in libxdp's dispatcher in front of an NF (its XDP_PASS lets the dispatcher call the next program); at tc
 * (section tc, a cls_bpf filter: `tc filter add dev PORT ingress pref N bpf da obj xnf_count_pass.bpf.o sec tc`)
 * it returns TC_ACT_UNSPEC, so the next filter decides. The count is in the map count_passed (a name within the kernel's 15
 * characters, so that bpftool finds it by name).
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 1);
} count_passed SEC(".maps");

static __always_inline void count(void)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&count_passed, &zero);

	if (n)
		(*n)++;
}

SEC("xdp")
int count_pass(struct xdp_md *ctx)
{
	count();
	return XDP_PASS;
}

SEC("tc")
int count_pass_tc(struct __sk_buff *skb)
{
	count();
	return TC_ACT_UNSPEC;
}

char _license[] SEC("license") = "Dual BSD/GPL";
