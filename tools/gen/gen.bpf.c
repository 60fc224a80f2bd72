/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The generator's program, run by BPF_PROG_RUN in live-frames mode: every
 * frame it returns XDP_TX for is transmitted out of the generator's
 * interface. Per frame it writes the template's headers and probe back,
 * picks the flow, writes the probe (flow, sequence number, send time) and the
 * flow's header fields, and keeps the checksums right by incremental updates
 * from the template. Live frames are recycled, and on veth the receiving NF
 * works on the very same page: a router's TTL, a load balancer's rewritten
 * address would otherwise come back in the next frame built on that page.
 *
 * The generator also keeps this program attached (generic mode) to the
 * namespace's loopback while it runs: a program that is attached somewhere
 * stays in the kernel's XDP dispatcher, so a BPF_PROG_RUN call no longer
 * rebuilds the dispatcher and waits for RCU. Frames really received on
 * loopback are not the generator's: they pass untouched.
 */
#include <xnf/csum.h>

#include "probe.h"

const volatile struct xnf_gen_config cfg = {};
/* The frame as user space built it, as 8-byte words (little-endian hosts: BPF runs on the CPU's order). */
const volatile __u64 template_words[XNF_GEN_TEMPLATE_MAX / 8] = {};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct xnf_gen_cpu);
	__uint(max_entries, 1);
} gen_cpu SEC(".maps");

/* Next sequence number per flow; a flow is only ever built on its thread's CPU. 64-bit: per-CPU values
 * come to user space 8-byte aligned, and a 32-bit counter would wrap in minutes at line rate. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, XNF_GEN_MAX_FLOWS);
} gen_seq SEC(".maps");

struct checksums {
	__sum16 *ip;  /* IPv4 header checksum, when addresses change */
	__sum16 *l4;  /* L4 checksum, when it must be kept */
};

/* Writes a 16-bit word of the frame and updates the checksums that cover it. */
static __always_inline void set16(__u8 *field, __u16 value_raw, __sum16 *first, __sum16 *second)
{
	__u16 old;

	__builtin_memcpy(&old, field, 2);
	if (old == value_raw)
		return;
	__builtin_memcpy(field, &value_raw, 2);
	if (first)
		xnf_csum_replace2(first, old, value_raw);
	if (second)
		xnf_csum_replace2(second, old, value_raw);
}

static __always_inline void set32(__u8 *field, __u32 value_raw, __sum16 *csum)
{
	__u32 old;

	__builtin_memcpy(&old, field, 4);
	__builtin_memcpy(field, &value_raw, 4);
	if (csum)
		xnf_csum_replace4(csum, old, value_raw);
}

/* Puts the template's first cfg.restore_len bytes (an even count) back into the frame. */
static __always_inline void restore_template(__u8 *data, const __u8 *end)
{
	__u32 words = cfg.restore_len / 8, tail_off;
	__u64 tail;

	for (__u32 i = 0; i < XNF_GEN_TEMPLATE_MAX / 8; i++) {
		if (i >= words || data + 8 * (i + 1) > end)
			break;
		*(__u64 *)(data + 8 * i) = template_words[i];
	}
	if (words >= XNF_GEN_TEMPLATE_MAX / 8)
		return;
	tail = template_words[words];
	tail_off = words * 8;
	for (__u32 j = 0; j < 3; j++) {
		if (tail_off + 2 * (j + 1) > cfg.restore_len || data + tail_off + 2 * (j + 1) > end)
			break;
		*(__u16 *)(data + tail_off + 2 * j) = (__u16)(tail >> (16 * j));
	}
}

static __always_inline __u32 pick_flow(struct xnf_gen_cpu *c)
{
	__u32 owned, k;

	if (cfg.flows <= 1 || c->nthreads == 0)
		return 0;
	owned = (cfg.flows - c->thread + c->nthreads - 1) / c->nthreads;
	if (owned == 0)
		return 0;
	k = cfg.random_flows ? bpf_get_prandom_u32() % owned : (__u32)(c->next % owned);
	return c->thread + k * c->nthreads;
}

/* The flow's ports and address tails: base + flow, in every field the run varies. */
static __always_inline void write_flow_fields(__u8 *data, const __u8 *end, __u32 flow, struct checksums *cs)
{
	__u8 *l3 = data + cfg.l3_offset, *l4 = data + cfg.l4_offset;
	__u32 saddr_low = cfg.ipv6 ? 8 + 14 : 12 + 2, daddr_low = cfg.ipv6 ? 24 + 14 : 16 + 2;

	if (l4 + 4 > end || l3 + daddr_low + 2 > end)
		return;
	if (cfg.vary & XNF_VARY_SPORT)
		set16(l4, bpf_htons((__u16)(cfg.base_sport + flow)), cs->l4, 0);
	if (cfg.vary & XNF_VARY_DPORT)
		set16(l4 + 2, bpf_htons((__u16)(cfg.base_dport + flow)), cs->l4, 0);
	if (cfg.vary & XNF_VARY_SADDR)
		set16(l3 + saddr_low, bpf_htons((__u16)(cfg.base_saddr_low + flow)), cs->ip, cs->l4);
	if (cfg.vary & XNF_VARY_DADDR)
		set16(l3 + daddr_low, bpf_htons((__u16)(cfg.base_daddr_low + flow)), cs->ip, cs->l4);
}

SEC("xdp")
int xnf_gen(struct xdp_md *ctx)
{
	__u8 *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct checksums cs = { 0 };
	struct xnf_gen_cpu *c;
	__u8 *probe;
	__u32 zero = 0, flow, head;
	__u64 *seq;
	__u64 now;

	if (ctx->ingress_ifindex != cfg.ifindex)
		return XDP_PASS;
	c = bpf_map_lookup_elem(&gen_cpu, &zero);
	probe = data + cfg.probe_offset;
	if (!c || probe + sizeof(struct xnf_probe) > end || data + cfg.l4_offset + 20 > end)
		return XDP_ABORTED;
	if (!cfg.ipv6 && (cfg.vary & (XNF_VARY_SADDR | XNF_VARY_DADDR)))
		cs.ip = (__sum16 *)(data + cfg.l3_offset + 10);
	if (cfg.l4_csum)
		cs.l4 = (__sum16 *)(data + cfg.l4_offset + (cfg.tcp ? 16 : 6));
	restore_template(data, end);
	flow = pick_flow(c);
	c->next++;
	seq = bpf_map_lookup_elem(&gen_seq, &flow);
	if (!seq)
		return XDP_ABORTED;
	write_flow_fields(data, end, flow, &cs);
	head = (__u32)bpf_htons(XNF_PROBE_MAGIC) | ((__u32)flow << 16);
	/* Reading the clock is the dearest thing here: --stamp-every N reads it once per N frames. */
	now = (*seq & cfg.stamp_mask) == 0 ? bpf_ktime_get_ns() : 0;
	set32(probe, head, cs.l4);
	set32(probe + 4, (__u32)(*seq)++, cs.l4);
	set32(probe + 8, (__u32)now, cs.l4);
	set32(probe + 12, (__u32)(now >> 32), cs.l4);
	return XDP_TX;
}

char _license[] SEC("license") = "Dual BSD/GPL";
