/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xnf-gen's receiver, on the interface where traffic comes back. For every
 * frame that carries a probe: count it for its flow, note whether it came
 * after a later frame of the same flow (reordering), and put its one-way
 * latency (sender and receiver share bpf_ktime_get_ns) in its traffic class's
 * log-linear histogram. Then drop it: the receiver is the end of the line. Everything is
 * per CPU; user space merges.
 */
#include <xnf/parse.h>

#include "probe.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct xnf_recv_flow);
	__uint(max_entries, XNF_GEN_MAX_FLOWS);
} recv_flows SEC(".maps");

/* One histogram per traffic class: key class * XNF_LAT_BUCKETS + bucket. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, XNF_GEN_MAX_CLASSES * XNF_LAT_BUCKETS);
} recv_latency SEC(".maps");

/* Where each class's flows start (set before load): a flow's class is the last one starting at or below it. */
const volatile __u32 nclasses = 1;
const volatile __u32 class_first_flow[XNF_GEN_MAX_CLASSES] = {};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, XNF_RECV_NCOUNTERS);
} recv_counters SEC(".maps");

static __always_inline void bump(void *map, __u32 key)
{
	__u64 *v = bpf_map_lookup_elem(map, &key);

	if (v)
		(*v)++;
}

static __always_inline __u32 msb64(__u64 v)
{
	__u32 r = 0;

	if (v >> 32) { v >>= 32; r += 32; }
	if (v >> 16) { v >>= 16; r += 16; }
	if (v >> 8) { v >>= 8; r += 8; }
	if (v >> 4) { v >>= 4; r += 4; }
	if (v >> 2) { v >>= 2; r += 2; }
	if (v >> 1) r += 1;
	return r;
}

/* 0..7 ns exactly, then 8 buckets per power of two (12.5 % resolution). */
static __always_inline __u32 latency_bucket(__u64 ns)
{
	__u32 e;

	if (ns < (1 << XNF_LAT_SUB_BITS))
		return (__u32)ns;
	e = msb64(ns);
	return (e - XNF_LAT_SUB_BITS + 1) * (1 << XNF_LAT_SUB_BITS) +
	       (__u32)((ns >> (e - XNF_LAT_SUB_BITS)) & ((1 << XNF_LAT_SUB_BITS) - 1));
}

static __always_inline __u32 class_of(__u32 flow)
{
	__u32 cls = 0;

	for (__u32 i = 1; i < XNF_GEN_MAX_CLASSES; i++) {
		if (i < nclasses && flow >= class_first_flow[i])
			cls = i;
	}
	return cls;
}

/* A G-PDU's inner packet, as an Ethernet frame's worth of headers from start: the GTP-U header, its optional
 * fields and extension headers (two at most) skipped. 0 when it is not one. */
static __always_inline __u32 inner_offset(const struct xnf_pkt *pkt, const struct udphdr *udp)
{
	const struct gtpu_hdr *hdr = (const void *)(udp + 1);
	const struct gtpu_opt *opt = (const void *)(hdr + 1);
	const __u8 *gtp = (const __u8 *)hdr, *ext;
	__u32 offset = sizeof(*hdr);
	__u8 next;

	if (udp->dest != bpf_htons(GTPU_PORT) || (const void *)(opt + 1) > pkt->data_end || hdr->type != GTPU_G_PDU)
		return 0;
	if (!(hdr->flags & (GTPU_FLAG_E | GTPU_FLAG_S | GTPU_FLAG_PN)))
		return offset;
	offset += sizeof(*opt);
	next = opt->next_ext;
	for (int i = 0; i < 2 && next; i++) {
		ext = gtp + offset;
		if ((const void *)(ext + 1) > pkt->data_end || !ext[0])
			return 0;
		offset += 4u * ext[0];
		if (offset > 64)
			return 0;
		ext = gtp + (offset & 127) - 1;   /* the header's last byte: the next one's type */
		if ((const void *)(ext + 1) > pkt->data_end)
			return 0;
		next = *ext;
	}
	return next ? 0 : offset;
}

/* The L4 header of the packet a G-PDU carries (IPv4 with options, or IPv6 without extension headers: what
 * xnf-gen sends): its start, and whether it is TCP. NULL when it is neither TCP nor UDP. */
static __always_inline __u8 *tunnelled_l4(const struct xnf_pkt *pkt, const struct udphdr *udp, int *tcp)
{
	__u32 offset = inner_offset(pkt, udp), ip_len;
	__u8 *inner, proto;

	if (!offset)
		return NULL;
	inner = (__u8 *)(udp + 1) + (offset & 127);
	if ((void *)(inner + 40) > pkt->data_end)
		return NULL;
	if ((inner[0] >> 4) == 6) {
		ip_len = 40;
		proto = inner[6];
	} else {
		ip_len = (inner[0] & 0x0f) * 4u;
		proto = inner[9];
	}
	*tcp = proto == IPPROTO_TCP;
	return proto == IPPROTO_TCP || proto == IPPROTO_UDP ? inner + ip_len : NULL;
}

static __always_inline struct xnf_probe *find_probe(struct xnf_pkt *pkt)
{
	struct xnf_headers h;
	struct xnf_probe *p;
	__u32 l4_len;

	__u8 *l4;
	int tcp;

	if (xnf_parse_headers(pkt, &h) < 0 || !h.l4)
		return NULL;
	l4 = h.l4;
	tcp = h.tcp != NULL;
	if (h.udp && h.udp->dest == bpf_htons(GTPU_PORT))
		l4 = tunnelled_l4(pkt, h.udp, &tcp);   /* the probe is in the packet the tunnel carries */
	else if (!h.udp && !h.tcp)
		return NULL;
	if (!l4 || (void *)(l4 + 20) > pkt->data_end)
		return NULL;
	l4_len = tcp ? (l4[12] >> 4) * 4u : sizeof(struct udphdr);
	if (l4_len > 60)
		return NULL;
	p = (void *)(l4 + l4_len);
	if ((void *)(p + 1) > pkt->data_end || p->magic != bpf_htons(XNF_PROBE_MAGIC))
		return NULL;
	return p;
}

SEC("xdp")
int xnf_recv(struct xdp_md *ctx)
{
	struct xnf_pkt pkt = { .data = (void *)(long)ctx->data, .data_end = (void *)(long)ctx->data_end,
			       .ctx = ctx };
	struct xnf_probe *p = find_probe(&pkt);
	struct xnf_recv_flow *f;
	__u32 flow, seq;
	__u64 now, sent;

	if (!p) {
		bump(&recv_counters, XNF_RECV_OTHER);
		return XDP_DROP;
	}
	bump(&recv_counters, XNF_RECV_PROBES);
	flow = p->flow;
	seq = p->seq;
	sent = p->tx_ns;
	f = bpf_map_lookup_elem(&recv_flows, &flow);
	if (f) {
		f->packets++;
		if (seq >= f->next_seq)
			f->next_seq = seq + 1;
		else
			f->reordered++;
	}
	if (!sent)
		return XDP_DROP; /* not a stamped frame (--stamp-every) */
	now = bpf_ktime_get_ns();
	if (now >= sent)
		bump(&recv_latency, class_of(flow) * XNF_LAT_BUCKETS + latency_bucket(now - sent));
	return XDP_DROP;
}

char _license[] SEC("license") = "Dual BSD/GPL";
