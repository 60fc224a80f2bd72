/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The generator's program, run by BPF_PROG_RUN in live-frames mode: every
 * frame it returns XDP_TX for is transmitted out of the generator's
 * interface. Per frame it picks the frame's class (--class: its own headers
 * and flows, in its share of the frames), writes that class's template
 * headers and probe back, picks the flow, writes the probe (flow, sequence
 * number, send time) and the flow's header fields, and keeps the checksums
 * right by incremental updates from the template; a frame of a shorter class is cut to its length. Live frames
 * are recycled, and on veth the receiving NF
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
#include <linux/pkt_cls.h>

#include "probe.h"

const volatile struct xnf_gen_config cfg = {};
/* Each class's frame as user space built it, as 8-byte words (little-endian hosts: BPF runs on the CPU's order). */
const volatile __u64 template_words[XNF_GEN_MAX_CLASSES][XNF_GEN_TEMPLATE_MAX / 8] = {};

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

/* Puts the class's template's first restore_len bytes (an even count) back into the frame. */
static __always_inline void restore_template(__u8 *data, const __u8 *end, __u32 cls, __u32 restore_len)
{
	__u32 words = restore_len / 8, tail_off;
	__u64 tail;

	for (__u32 i = 0; i < XNF_GEN_TEMPLATE_MAX / 8; i++) {
		if (i >= words || data + 8 * (i + 1) > end)
			break;
		*(__u64 *)(data + 8 * i) = template_words[cls][i];
	}
	if (words >= XNF_GEN_TEMPLATE_MAX / 8)
		return;
	tail = template_words[cls][words];
	tail_off = words * 8;
	for (__u32 j = 0; j < 3; j++) {
		if (tail_off + 2 * (j + 1) > restore_len || data + tail_off + 2 * (j + 1) > end)
			break;
		*(__u16 *)(data + tail_off + 2 * j) = (__u16)(tail >> (16 * j));
	}
}

/* A class's shape, read once: the offsets are then constants on each path the verifier walks (offsets read
 * from a class chosen at run time, or the same field read twice, it could not tie to the bounds checks). */
struct shape {
	__u32 ipv6, tcp, encap, l2_len, l4_offset, probe_offset;
};

static __always_inline struct shape shape_of(const volatile struct xnf_gen_class *k)
{
	struct shape sh = { .ipv6 = k->ipv6 != 0, .tcp = k->tcp != 0 };

	sh.encap = k->encap ? GTPU_ENCAP_LEN : 0;
	sh.l2_len = 14 + (k->tags == 8 ? 8 : k->tags == 4 ? 4 : 0);
	sh.l4_offset = sh.l2_len + sh.encap + (sh.ipv6 ? 40 : 20);
	sh.probe_offset = sh.l4_offset + (sh.tcp ? 20 : 8);
	return sh;
}

/* One of the class's flows this thread owns (a flow is only ever built on its owner's CPU). */
static __always_inline __u32 pick_flow(struct xnf_gen_cpu *c, const volatile struct xnf_gen_class *k, __u32 cls)
{
	__u32 owned, n;

	if (k->flows <= 1 || c->nthreads == 0)
		return k->first_flow;
	owned = (k->flows - c->thread + c->nthreads - 1) / c->nthreads;
	if (owned == 0)
		return k->first_flow;
	n = cfg.random_flows ? bpf_get_prandom_u32() % owned : (__u32)(c->next_in_class[cls] % owned);
	return k->first_flow + c->thread + n * c->nthreads;
}

/* The flow's ports, address tails and TEID: base + the flow's place in its class, in every field the class varies.
 * The TEID is covered by no checksum (the tunnel's UDP checksum is 0). */
static __always_inline void write_flow_fields(__u8 *data, const __u8 *end, const volatile struct xnf_gen_class *k,
					      const struct shape *sh, __u32 flow, struct checksums *cs)
{
	__u8 *l3 = data + sh->l2_len + sh->encap, *l4 = data + sh->l4_offset, *teid = data + sh->l2_len +
		XNF_GEN_GTPU_TEID_OFFSET;
	__u32 saddr_low = sh->ipv6 ? 8 + 14 : 12 + 2, daddr_low = sh->ipv6 ? 24 + 14 : 16 + 2;
	__u16 n = (__u16)(flow - k->first_flow);

	if (l4 + 4 > end || l3 + daddr_low + 2 > end)
		return;
	if (k->vary & XNF_VARY_SPORT)
		set16(l4, bpf_htons((__u16)(k->base_sport + n)), cs->l4, 0);
	if (k->vary & XNF_VARY_DPORT)
		set16(l4 + 2, bpf_htons((__u16)(k->base_dport + n)), cs->l4, 0);
	if (k->vary & XNF_VARY_SADDR)
		set16(l3 + saddr_low, bpf_htons((__u16)(k->base_saddr_low + n)), cs->ip, cs->l4);
	if (k->vary & XNF_VARY_DADDR)
		set16(l3 + daddr_low, bpf_htons((__u16)(k->base_daddr_low + n)), cs->ip, cs->l4);
	if (sh->encap && (k->vary & XNF_VARY_TEID) && teid + 4 <= end)
		set32(teid, bpf_htonl(k->base_teid + n), 0);
}

/* Builds one frame of class cls. Inlined twice: with cls the constant 0 (a one-class run, whose class the
 * verifier then reads as constants and prunes to the branches it takes) and with the scheduled class. */
static __always_inline int build_frame(__u8 *data, const __u8 *end, struct xnf_gen_cpu *c, __u32 cls)
{
	const volatile struct xnf_gen_class *k = &cfg.classes[cls];
	struct shape sh = shape_of(k);
	struct checksums cs = { 0 };
	__u8 *probe = data + sh.probe_offset;
	__u32 flow, head;
	__u64 *seq, now;

	if (probe + sizeof(struct xnf_probe) > end || data + sh.l4_offset + 20 > end)
		return XDP_ABORTED;
	if (!sh.ipv6 && (k->vary & (XNF_VARY_SADDR | XNF_VARY_DADDR)))
		cs.ip = (__sum16 *)(data + sh.l2_len + sh.encap + 10);
	if (k->l4_csum)
		cs.l4 = (__sum16 *)(data + sh.l4_offset + (sh.tcp ? 16 : 6));
	restore_template(data, end, cls, sh.probe_offset + sizeof(struct xnf_probe));
	flow = pick_flow(c, k, cls);
	c->next++;
	c->next_in_class[cls]++;
	seq = bpf_map_lookup_elem(&gen_seq, &flow);
	if (!seq)
		return XDP_ABORTED;
	write_flow_fields(data, end, k, &sh, flow, &cs);
	head = (__u32)bpf_htons(XNF_PROBE_MAGIC) | ((__u32)flow << 16);
	/* Reading the clock is the dearest thing here: --stamp-every N reads it once per N frames. */
	now = (*seq & cfg.stamp_mask) == 0 ? bpf_ktime_get_ns() : 0;
	set32(probe, head, cs.l4);
	set32(probe + 4, (__u32)(*seq)++, cs.l4);
	set32(probe + 8, (__u32)now, cs.l4);
	set32(probe + 12, (__u32)(now >> 32), cs.l4);
	return XDP_TX;
}

/* Live frames all start as long as the longest class's (the kernel resets a recycled frame's length): a shorter
 * class's frame is cut to its own length. The bytes cut off stay in the page, unsent. */
static __always_inline int cut_to_class(struct xdp_md *ctx, __u32 cls)
{
	int want = (int)cfg.classes[cls].frame_len;
	int len = cfg.multi_buffer ? (int)bpf_xdp_get_buff_len(ctx) : (int)(ctx->data_end - ctx->data);

	return want == len ? 0 : (int)bpf_xdp_adjust_tail(ctx, want - len);
}

/* Loaded to take multi-buffer frames for --write-pcap of frames longer than a page (a test run gives only such a
 * program their further buffers); elsewhere that would cost a little. */
SEC("xdp")
int xnf_gen(struct xdp_md *ctx)
{
	__u8 *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct xnf_gen_cpu *c;
	__u32 zero = 0, cls;

	if (ctx->ingress_ifindex != cfg.ifindex)
		return XDP_PASS;
	c = bpf_map_lookup_elem(&gen_cpu, &zero);
	if (!c)
		return XDP_ABORTED;
	if (cfg.nclasses <= 1)
		return build_frame(data, end, c, 0);
	cls = cfg.schedule[c->next & (XNF_GEN_SCHEDULE - 1)];
	if (cls >= XNF_GEN_MAX_CLASSES)
		return XDP_ABORTED;
	if (cfg.fit_length && cut_to_class(ctx, cls))
		return XDP_ABORTED;
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	return build_frame(data, end, c, cls);
}

/*
 * The tc sender, for kernels that refuse live frames: user space sends seed frames through a packet socket on the
 * namespace's loopback, each marked and holding how many frames it is to become; this program, at the loopback's tc
 * egress, builds each of them in the seed with build_frame above and sends it out of the generator's interface as a
 * clone (bpf_clone_redirect, which copies the seed's head before the next frame is written into it), then keeps the
 * seed. One system call becomes up to XNF_GEN_FANOUT_MAX frames; nothing runs at the interface's own egress, so the
 * clones leave it as any skb does.
 */
struct fanout {
	struct __sk_buff *skb;
	struct xnf_gen_cpu *c;
	__u32 count;
	__u32 failed;
	__u64 band_start, band; /* the hashes that take this CPU's transmit queue (band 0: one queue, left alone) */
};

static __always_inline __u32 class_of_next(const struct xnf_gen_cpu *c)
{
	return cfg.nclasses <= 1 ? 0 : cfg.schedule[c->next & (XNF_GEN_SCHEDULE - 1)];
}

/*
 * The frame's own flow hash (what the kernel would compute for it, and ECMP on the way reads), moved into the band of
 * hashes that the kernel's choice of transmit queue (skb_tx_hash: the hash scaled to the queue count, where no XPS
 * map says otherwise) turns into this CPU's queue: so that on veth a frame lands on the receive queue of the CPU that
 * sent it, as a live frame does, and a thread per queue never shares one with another. With one queue the kernel's
 * own choice is that already: nothing is set.
 */
static __always_inline void hash_on_cpu_queue(struct fanout *f)
{
	struct __sk_buff *skb = f->skb;

	if (!f->band)
		return;
	bpf_set_hash_invalid(skb); /* the hash of the frame before, else */
	bpf_set_hash(skb, (__u32)(f->band_start + bpf_get_hash_recalc(skb) % f->band));
}

static long fan_out_one(__u32 i, struct fanout *f)
{
	struct __sk_buff *skb = f->skb;
	__u8 *data = (void *)(long)skb->data, *end = (void *)(long)skb->data_end;
	__u32 cls = class_of_next(f->c);
	long sent;

	if (cls >= XNF_GEN_MAX_CLASSES || build_frame(data, end, f->c, cls) != XDP_TX) {
		f->failed = 1;
		return 1;
	}
	hash_on_cpu_queue(f);
	sent = bpf_clone_redirect(skb, cfg.ifindex, 0);
	if (sent < 0) {
		f->failed = 1;
		return 1;
	}
	f->c->refused += sent != 0; /* NET_XMIT_DROP: the peer's ring was full */
	return 0;
}

SEC("tc")
int xnf_gen_tc(struct __sk_buff *skb)
{
	struct fanout f = { .skb = skb };
	__u32 zero = 0, *count;
	__u8 *data, *end;

	if (skb->mark != cfg.seed_mark || skb->ifindex != cfg.seed_ifindex)
		return TC_ACT_UNSPEC; /* not one of this run's seeds: on to whatever runs next */
	if (bpf_skb_pull_data(skb, skb->len))
		return TC_ACT_SHOT;
	data = (void *)(long)skb->data;
	end = (void *)(long)skb->data_end;
	count = (__u32 *)(data + (cfg.seed_count_offset & 0xff));
	if ((void *)(count + 1) > (void *)end)
		return TC_ACT_SHOT;
	f.count = *count < XNF_GEN_FANOUT_MAX ? *count : XNF_GEN_FANOUT_MAX;
	if (cfg.tx_queues > 1) {
		f.band_start = (((__u64)(bpf_get_smp_processor_id() % cfg.tx_queues) << 32) / cfg.tx_queues) + 1;
		f.band = (1ull << 32) / cfg.tx_queues - 1;
	}
	f.c = bpf_map_lookup_elem(&gen_cpu, &zero);
	if (!f.c || !f.count)
		return TC_ACT_SHOT;
	bpf_loop(f.count, fan_out_one, &f, 0);
	return f.failed ? TC_ACT_SHOT : TC_ACT_STOLEN; /* stolen: the seed is ours, its sender told it went */
}

char _license[] SEC("license") = "Dual BSD/GPL";
