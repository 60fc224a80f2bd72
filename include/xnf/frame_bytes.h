/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Bytes anywhere in the frame. data..data_end is the part an NF reads directly: the first buffer of a multi-buffer
 * frame (a jumbo frame, at XDP or from an AF_XDP socket: the rest lies in further buffers, pkt->beyond bytes), an
 * skb's linear part at tc. Headers are always there; payload past it is reached through these, one API on every
 * path:
 *
 *   xnf_frame_load(pkt, offset, to, len)        copies len bytes from the frame's offset; 0 or -1
 *   xnf_frame_store(pkt, offset, from, len)     writes them; 0 or -1
 *   xnf_frame_sum(pkt, offset, len, seed, &sum) seed plus len bytes from offset as 16-bit words in memory order
 *                                               (an odd last byte padded with zero); fold it with xnf_csum_fold()
 *
 * In BPF, load and store take a len the verifier can bound (a constant, or masked); the sum takes any.
 */
#ifndef XNF_FRAME_BYTES_H
#define XNF_FRAME_BYTES_H

#include <xnf/common.h>
#include <xnf/pkt.h>
#include <xnf/helpers.h>

#ifdef XNF_TARGET_BPF

#ifdef XNF_HOOK_TC
#define XNF__FRAME_LOAD bpf_skb_load_bytes
#define XNF__FRAME_STORE(ctx, offset, from, len) bpf_skb_store_bytes((ctx), (offset), (from), (len), 0)
#else
#define XNF__FRAME_LOAD bpf_xdp_load_bytes
#define XNF__FRAME_STORE bpf_xdp_store_bytes
#endif

/* What bpf_csum_diff() sums in one call (its scratch holds 128 words). */
#define XNF_FRAME_SUM_CHUNK 512
/* The longest frame either hook carries: a GSO segment or a multi-buffer frame of 64 KiB. */
#define XNF_FRAME_MAX_BYTES 65536

/* A chunk's bytes, with a word of room for the zeros that pad its end to a whole word. Twice the chunk: the
 * verifier bounds a length by a mask, 1 to 2 * XNF_FRAME_SUM_CHUNK. */
#define XNF__FRAME_CHUNK_ROOM (2 * XNF_FRAME_SUM_CHUNK)
struct xnf__frame_chunk {
	union {
		__u8 bytes[XNF__FRAME_CHUNK_ROOM + 4];
		__u32 words[XNF__FRAME_CHUNK_ROOM / 4 + 1];
	};
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct xnf__frame_chunk);
	__uint(max_entries, 1);
} xnf_frame_scratch SEC(".maps");

struct xnf__frame_sum_job {
	xnf_ctx *ctx;
	__u32 offset;
	__u32 end;
	__u32 sum;
	__u32 failed;
};

static long xnf__frame_sum_chunk(__u32 index, void *arg)
{
	struct xnf__frame_sum_job *job = arg;
	__u32 zero = 0, len;
	struct xnf__frame_chunk *chunk = bpf_map_lookup_elem(&xnf_frame_scratch, &zero);
	long sum;

	if (!chunk || job->offset >= job->end) {
		job->failed |= !chunk;
		return 1;
	}
	len = job->end - job->offset;
	if (len > XNF_FRAME_SUM_CHUNK)
		len = XNF_FRAME_SUM_CHUNK;
	/* 1 to 512 as it is; 1 to XNF__FRAME_CHUNK_ROOM as the verifier reads it. */
	len = ((len - 1) & (XNF__FRAME_CHUNK_ROOM - 1)) + 1;
	/* The word the chunk ends in is zeroed first: the bytes loaded over it leave zeros after an odd end. */
	chunk->words[len >> 2] = 0;
	if (XNF__FRAME_LOAD(job->ctx, job->offset, chunk->bytes, len)) {
		job->failed = 1;
		return 1;
	}
	sum = bpf_csum_diff(0, 0, (__be32 *)chunk->bytes, (len + 3) & ~3u, job->sum);
	if (sum < 0) {
		job->failed = 1;
		return 1;
	}
	job->sum = (__u32)sum;
	job->offset += len;
	return 0;
}

/* The sum of a hook's context: what the pkt forms below and xnf's own glue (which has no pkt) call. */
static __always_inline int xnf__frame_sum_ctx(xnf_ctx *ctx, __u32 offset, __u32 len, __u32 seed, __u32 *sum)
{
	/* The offset as a value the verifier cannot take as known (xnf_loop_state): with a constant one, a kernel before
	 * 6.7 would check the loop's every call as its first and cut the end of the walk. */
	struct xnf__frame_sum_job job = { .ctx = ctx, .offset = xnf_loop_state(offset), .end = offset + len,
					  .sum = seed };

	if (len > XNF_FRAME_MAX_BYTES)
		return -1;
	bpf_loop(XNF_FRAME_MAX_BYTES / XNF_FRAME_SUM_CHUNK + 1, xnf__frame_sum_chunk, &job, 0);
	if (job.failed || job.offset != job.end)
		return -1;
	*sum = job.sum;
	return 0;
}

static __always_inline int xnf_frame_load(const struct xnf_pkt *pkt, __u32 offset, void *to, __u32 len)
{
	return XNF__FRAME_LOAD(pkt->ctx, offset, to, len) ? -1 : 0;
}

/* The frame's bounds change under a store at tc (the skb may be made writable anew): read pkt afresh after it. */
static __always_inline int xnf_frame_store(struct xnf_pkt *pkt, __u32 offset, const void *from, __u32 len)
{
	if (XNF__FRAME_STORE(pkt->ctx, offset, (void *)from, len))
		return -1;
	pkt->data = (void *)(long)pkt->ctx->data;
	pkt->data_end = (void *)(long)pkt->ctx->data_end;
	return 0;
}

static __always_inline int xnf_frame_sum(const struct xnf_pkt *pkt, __u32 offset, __u32 len, __u32 seed,
					 __u32 *sum)
{
	return xnf__frame_sum_ctx(pkt->ctx, offset, len, seed, sum);
}

#else /* native: the first buffer, then pkt->frags (an AF_XDP frame of several descriptors) */

/* Calls fn on each piece of [offset, offset + len) in the frame's buffers, in order; -1 where the frame is
 * shorter. */
static __always_inline int xnf__frame_walk(const struct xnf_pkt *pkt, __u32 offset, __u32 len,
					   void (*fn)(__u8 *piece, __u32 n, void *arg), void *arg)
{
	__u8 *buf = (__u8 *)pkt->data;
	__u32 size = xnf_pkt_len(pkt), next = 0;

	if ((__u64)offset + len > xnf_frame_len(pkt))
		return -1;
	while (len) {
		while (offset >= size) {
			if (!pkt->frags || next >= pkt->frags->n)
				return -1;
			offset -= size;
			buf = (__u8 *)pkt->frags->frag[next].data;
			size = pkt->frags->frag[next++].len;
		}
		__u32 n = size - offset < len ? size - offset : len;

		fn(buf + offset, n, arg);
		offset += n;
		len -= n;
	}
	return 0;
}

struct xnf__frame_copy {
	__u8 *bytes;
	int to_frame;
};

static __always_inline void xnf__frame_copy_piece(__u8 *piece, __u32 n, void *arg)
{
	struct xnf__frame_copy *c = arg;

	if (c->to_frame)
		__builtin_memcpy(piece, c->bytes, n);
	else
		__builtin_memcpy(c->bytes, piece, n);
	c->bytes += n;
}

static __always_inline int xnf_frame_load(const struct xnf_pkt *pkt, __u32 offset, void *to, __u32 len)
{
	struct xnf__frame_copy c = { .bytes = to, .to_frame = 0 };

	return xnf__frame_walk(pkt, offset, len, xnf__frame_copy_piece, &c);
}

static __always_inline int xnf_frame_store(struct xnf_pkt *pkt, __u32 offset, const void *from, __u32 len)
{
	struct xnf__frame_copy c = { .bytes = (__u8 *)from, .to_frame = 1 };

	return xnf__frame_walk(pkt, offset, len, xnf__frame_copy_piece, &c);
}

/* The sum carries an odd byte over from one piece to the next: words are the frame's, not the buffers'. */
struct xnf__frame_summing {
	__u64 total;
	__u32 odd; /* bytes summed so far is odd: the next byte is a word's low-address half's partner */
};

static __always_inline void xnf__frame_sum_piece(__u8 *piece, __u32 n, void *arg)
{
	struct xnf__frame_summing *s = arg;
	__u32 i = 0;

	if (s->odd && n) {
		__u16 word = 0;

		__builtin_memcpy((__u8 *)&word + 1, piece, 1);
		s->total += word;
		i = 1;
	}
	for (; i + 1 < n; i += 2) {
		__u16 word;

		__builtin_memcpy(&word, piece + i, 2);
		s->total += word;
	}
	s->odd = 0;
	if (i < n) {
		__u16 padded = 0;

		__builtin_memcpy(&padded, piece + i, 1);
		s->total += padded;
		s->odd = 1;
	}
}

static __always_inline int xnf_frame_sum(const struct xnf_pkt *pkt, __u32 offset, __u32 len, __u32 seed,
					 __u32 *sum)
{
	struct xnf__frame_summing s = { .total = seed };

	if (xnf__frame_walk(pkt, offset, len, xnf__frame_sum_piece, &s))
		return -1;
	while (s.total >> 32)
		s.total = (s.total & 0xffffffffu) + (s.total >> 32);
	*sum = (__u32)s.total;
	return 0;
}

#endif

#endif /* XNF_FRAME_BYTES_H */
