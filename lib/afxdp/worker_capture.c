// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The workers' side of a capture (xnf dump): each worker copies the frames whose verdict is asked for into its
 * own single-producer queue, the capture thread empties them. Nothing is allocated or copied while no capture
 * runs; a full queue drops the record and counts it. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <xnf/frame_bytes.h>

#include "afxdp_internal.h"

/* Per worker: about 1.3 s of records at 3,000 captured frames a second between the thread's 20 ms reads, with
 * room to spare; fewer where records are long, so that a queue stays within QUEUE_BYTES. */
#define CAPTURE_QUEUE_RECORDS 4096
#define MIN_QUEUE_RECORDS 256
#define QUEUE_BYTES (8u << 20)

struct capture_queue {
	_Atomic __u64 head; /* the next record the worker writes */
	_Atomic __u64 tail; /* the next record the capture thread reads */
	_Atomic __u64 lost;
	__u32 snap;         /* the bytes a record keeps */
	__u32 nrecords;
	size_t stride;      /* a record's header and its snap, 8-byte aligned */
	unsigned char records[];
};

static struct xnf_capture_record *record_at(const struct capture_queue *q, __u64 i)
{
	return (struct xnf_capture_record *)(q->records + (i % q->nrecords) * q->stride);
}

static struct capture_queue *queue_for(__u32 snap)
{
	size_t stride = (sizeof(struct xnf_capture_header) + snap + 7) & ~(size_t)7;
	__u32 n = (__u32)(QUEUE_BYTES / stride);
	struct capture_queue *q;

	n = n > CAPTURE_QUEUE_RECORDS ? CAPTURE_QUEUE_RECORDS : n < MIN_QUEUE_RECORDS ? MIN_QUEUE_RECORDS : n;
	q = aligned_alloc(CACHE_LINE, (sizeof(*q) + n * stride + CACHE_LINE - 1) / CACHE_LINE * CACHE_LINE);
	if (!q)
		return NULL;
	memset(q, 0, sizeof(*q));
	q->snap = snap;
	q->nrecords = n;
	q->stride = stride;
	return q;
}

int xnf_afxdp_capture_open(struct xnf_afxdp *a, __u32 snap)
{
	for (__u32 i = 0; i < a->nworkers; i++) {
		struct afxdp_worker *w = &a->workers[i];

		if (w->capture && w->capture->snap == snap)
			continue;
		free(w->capture); /* no capture runs: the workers do not touch it */
		w->capture = queue_for(snap);
		if (!w->capture)
			return -1;
	}
	return 0;
}

void xnf_afxdp_capture_set(struct xnf_afxdp *a, __u32 slots)
{
	/* release: a worker that sees the slots sees its queue too */
	atomic_store_explicit(&a->capture_slots, slots, memory_order_release);
}

void xnf_afxdp_capture_close(struct xnf_afxdp *a)
{
	for (__u32 i = 0; i < a->nworkers; i++) {
		free(a->workers[i].capture);
		a->workers[i].capture = NULL;
	}
}

void xnf_worker_capture(struct afxdp_worker *w, const struct xsk_port_socket *s, const struct xnf_pkt *pkt,
			__u32 slot)
{
	__u32 len = xnf_frame_len(pkt);
	struct capture_queue *q = w->capture;
	__u64 head = atomic_load_explicit(&q->head, memory_order_relaxed);
	struct xnf_capture_record *r;
	struct timespec now;

	if (head - atomic_load_explicit(&q->tail, memory_order_acquire) >= q->nrecords) {
		atomic_fetch_add_explicit(&q->lost, 1, memory_order_relaxed);
		return;
	}
	r = record_at(q, head);
	clock_gettime(CLOCK_MONOTONIC, &now);
	r->h.mono_ns = (__u64)now.tv_sec * 1000000000ull + (__u64)now.tv_nsec;
	r->h.wire_len = len;
	r->h.cap_len = len < q->snap ? len : q->snap;
	r->h.ifindex = (__u32)w->owner->ports[s->port].ifindex;
	r->h.queue = (__u16)s->queue;
	r->h.slot = (__u8)slot;
	r->h.side = XNF_CAPTURE_WORKER;
	xnf_frame_load(pkt, 0, r->data, r->h.cap_len);   /* across its buffers */
	atomic_store_explicit(&q->head, head + 1, memory_order_release);
}

__u64 xnf_afxdp_capture_drain(struct xnf_afxdp *a, xnf_capture_emit emit, void *ctx)
{
	__u64 n = 0;

	for (__u32 i = 0; i < a->nworkers; i++) {
		struct capture_queue *q = a->workers[i].capture;
		__u64 tail, head;

		if (!q)
			continue;
		tail = atomic_load_explicit(&q->tail, memory_order_relaxed);
		head = atomic_load_explicit(&q->head, memory_order_acquire);
		for (; tail != head; tail++, n++) {
			if (emit(ctx, record_at(q, tail))) {
				tail = head; /* the consumer has all it wants: the rest is dropped */
				break;
			}
		}
		atomic_store_explicit(&q->tail, tail, memory_order_release);
	}
	return n;
}

__u64 xnf_afxdp_capture_lost(const struct xnf_afxdp *a)
{
	__u64 lost = 0;

	for (__u32 i = 0; i < a->nworkers; i++) {
		if (a->workers[i].capture)
			lost += atomic_load_explicit(&a->workers[i].capture->lost, memory_order_relaxed);
	}
	return lost;
}
