/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xnf-gen's receiver, on the interface where traffic comes back. For every
 * frame that carries a probe: count it for its flow, note whether it came
 * after a later frame of the same flow (reordering), and put its one-way
 * latency (sender and receiver share bpf_ktime_get_ns) in its traffic class's
 * log-linear histogram. Then drop it: the receiver is the end of the line. Everything is
 * per CPU; user space merges. With check_payload it also compares every byte after
 * the probe, in every buffer of a multi-buffer frame, with what the generator wrote.
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
/* The port's MTU lets frames of several buffers come: the whole length is asked (a helper call a frame). */
const volatile __u32 multi_buffer = 0;
const volatile __u32 check_payload = 0;

#define PAYLOAD_CHUNK 512
/* The longest frame a veth hands XDP. */
#define PAYLOAD_MAX 65536

struct payload_chunk {
	__u64 words[2 * PAYLOAD_CHUNK / 8];   /* twice: the verifier bounds a length by a mask */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct payload_chunk);
	__uint(max_entries, 1);
} payload_scratch SEC(".maps");

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
static __always_inline __u8 *tunnelled_l4(const struct xnf_pkt *pkt, const struct udphdr *udp, int *tcp,
					   __u32 *ip_end)
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
		*ip_end = (__u32)(inner - (__u8 *)pkt->data) + 40 + bpf_ntohs(*(__be16 *)(inner + 4));
	} else {
		ip_len = (inner[0] & 0x0f) * 4u;
		proto = inner[9];
		*ip_end = (__u32)(inner - (__u8 *)pkt->data) + bpf_ntohs(*(__be16 *)(inner + 2));
	}
	*tcp = proto == IPPROTO_TCP;
	return proto == IPPROTO_TCP || proto == IPPROTO_UDP ? inner + ip_len : NULL;
}

/* The probe, and where the IP packet that carries it ends (the inner one of a G-PDU), from the frame's start. */
static __always_inline struct xnf_probe *find_probe(struct xnf_pkt *pkt, __u32 *ip_end)
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
	if (h.ip4)
		*ip_end = (__u32)((__u8 *)h.ip4 - (__u8 *)pkt->data) + bpf_ntohs(h.ip4->tot_len);
	else if (h.ip6)
		*ip_end = (__u32)((__u8 *)h.ip6 - (__u8 *)pkt->data) + sizeof(*h.ip6) + bpf_ntohs(h.ip6->payload_len);
	if (h.udp && h.udp->dest == bpf_htons(GTPU_PORT))
		l4 = tunnelled_l4(pkt, h.udp, &tcp, ip_end);   /* the probe is in the packet the tunnel carries */
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

/* Compares the payload chunk by chunk: bytes [offset, end) of the frame against the generator's words, word w
 * starting at offset + 8 w. */
struct payload_job {
	struct xdp_md *ctx;
	__u32 start;     /* the payload's first byte: word 0 */
	__u32 offset;    /* the next chunk's */
	__u32 end;
	__u32 wrong;
};

static long compare_chunk(__u32 index, void *arg)
{
	struct payload_job *job = arg;
	__u32 zero = 0, len, w0, words, tail;
	struct payload_chunk *chunk = bpf_map_lookup_elem(&payload_scratch, &zero);

	if (!chunk || job->offset >= job->end) {
		job->wrong |= !chunk;
		return 1;
	}
	len = job->end - job->offset;
	if (len > PAYLOAD_CHUNK)
		len = PAYLOAD_CHUNK;
	len = ((len - 1) & (2 * PAYLOAD_CHUNK - 1)) + 1;
	if (bpf_xdp_load_bytes(job->ctx, job->offset, chunk->words, len)) {
		job->wrong = 1;
		return 1;
	}
	w0 = (job->offset - job->start) / 8;
	words = len / 8;
	for (__u32 i = 0; i < PAYLOAD_CHUNK / 8; i++) {
		if (i >= words)
			break;
		if (chunk->words[i] != xnf_gen_payload_word(w0 + i)) {
			job->wrong = 1;
			return 1;
		}
	}
	/* A last partial word: its first bytes, the low ones on a little-endian CPU. */
	tail = len & 7;
	if (tail && ((chunk->words[words & (PAYLOAD_CHUNK / 8 - 1)] ^ xnf_gen_payload_word(w0 + words)) &
		     ((1ull << (8 * tail)) - 1))) {
		job->wrong = 1;
		return 1;
	}
	job->offset += len;
	return 0;
}

/* Whether bytes [start, end) of the frame are the payload as sent. A global function: the verifier walks it once,
 * not once for every way the headers before it were parsed. */
__noinline int payload_matches(struct xdp_md *ctx, __u32 start, __u32 end)
{
	struct payload_job job = { .ctx = ctx, .start = start, .offset = start, .end = end };

	if (!ctx)
		return 0;
	bpf_loop(PAYLOAD_MAX / PAYLOAD_CHUNK + 1, compare_chunk, &job, 0);
	return !job.wrong && job.offset == job.end;
}

/* Whether the frame holds the whole IP packet and every payload byte after the probe is as sent. */
static __always_inline int payload_as_sent(struct xdp_md *ctx, const struct xnf_pkt *pkt, const struct xnf_probe *p,
					   __u32 ip_end)
{
	__u32 start = (__u32)((__u8 *)(p + 1) - (__u8 *)pkt->data);

	if (ip_end > xnf_frame_len(pkt) || ip_end < start)
		return 0;
	return payload_matches(ctx, start, ip_end);
}

/* Loaded to take multi-buffer frames where the port's MTU lets them come (receiver.c): elsewhere that would cost
 * every frame a little. */
SEC("xdp")
int xnf_recv(struct xdp_md *ctx)
{
	struct xnf_pkt pkt = { .data = (void *)(long)ctx->data, .data_end = (void *)(long)ctx->data_end,
			       .ctx = ctx };
	struct xnf_probe *p;
	struct xnf_recv_flow *f;
	__u32 flow, seq, ip_end = 0;
	__u64 now, sent;

	if (multi_buffer)
		pkt.beyond = (__u32)bpf_xdp_get_buff_len(ctx) - (__u32)(pkt.data_end - pkt.data);
	p = find_probe(&pkt, &ip_end);
	if (!p) {
		bump(&recv_counters, XNF_RECV_OTHER);
		return XDP_DROP;
	}
	bump(&recv_counters, XNF_RECV_PROBES);
	if (check_payload) {
		bump(&recv_counters, XNF_RECV_PAYLOAD_CHECKED);
		if (!payload_as_sent(ctx, &pkt, p, ip_end))
			bump(&recv_counters, XNF_RECV_PAYLOAD_WRONG);
	}
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
