// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The worker loop. Per round, for every socket it serves: return completed tx
 * frames to the free stack, top up the fill ring, take a batch from the rx
 * ring, run the NF's batch function on it (the NF is inlined there, so the
 * only call is one per batch), and sort the verdicts into per-socket tx
 * lists; then one bulk reserve per tx ring and one kick per socket that got
 * frames. Every frame is, at every moment, in exactly one place: the free
 * stack, a fill ring, the kernel, an rx ring, this loop, a tx ring or a
 * completion ring.
 *
 * On the live-frames path (live_tx.c) frames to send are gathered across
 * rounds as descriptors and sent by one call when the batch is full, when a
 * round finds no packet, or when the oldest has waited --live-wait-us; the
 * call copies them out, so they go straight back to the free stack.
 */
#include "afxdp_internal.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <sched.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <xnf/helpers.h>
#include <xnf/internal/native_maps.h>
#include <xnf/internal/nf_entry.h>
#include <xnf/runtime/log.h>
#include <xnf/runtime/rcu.h>

#define MAX_BATCH 256
#define POLL_TIMEOUT_MS 100

static inline __u64 frame_base(const struct afxdp_worker *w, __u64 addr)
{
	return addr & ~((__u64)w->owner->cfg.frame_size - 1);
}

static inline void free_frame(struct afxdp_worker *w, __u64 addr)
{
	w->free_frames[w->nfree++] = frame_base(w, addr);
}

static void reap_completions(struct afxdp_worker *w, struct xsk_port_socket *s)
{
	__u32 idx, n = xsk_ring_cons__peek(&s->comp, w->owner->cfg.ring_size, &idx);

	for (__u32 i = 0; i < n; i++)
		free_frame(w, *xsk_ring_cons__comp_addr(&s->comp, idx + i));
	if (n)
		xsk_ring_cons__release(&s->comp, n);
	s->tx_inflight -= n;
}

static void refill(struct afxdp_worker *w, struct xsk_port_socket *s)
{
	__u32 idx, want = xsk_prod_nb_free(&s->fill, w->owner->cfg.batch);
	__u32 n;

	if (want == 0)
		return;
	if (want > w->nfree) {
		if (w->nfree == 0) {
			w->stats.fill_empty++;
			return;
		}
		want = (__u32)w->nfree;
	}
	n = xsk_ring_prod__reserve(&s->fill, want, &idx);
	for (__u32 i = 0; i < n; i++)
		*xsk_ring_prod__fill_addr(&s->fill, idx + i) = w->free_frames[--w->nfree];
	xsk_ring_prod__submit(&s->fill, n);
}

void xnf_worker_prime_fill(struct afxdp_worker *w, struct xsk_port_socket *s)
{
	refill(w, s);
}

static inline void queue_tx(struct xsk_port_socket *dst, __u64 addr, __u32 len, __u32 options)
{
	dst->pending_addr[dst->pending] = addr;
	dst->pending_len[dst->pending] = len;
	dst->pending_options[dst->pending] = options;
	dst->pending++;
}

static inline __u64 addr_of(const struct afxdp_worker *w, const void *data)
{
	return (__u64)((const char *)data - (const char *)w->area);
}

/* A frame of several descriptors: its first, each marked as going on, then the others, the last unmarked. */
static void queue_tx_frags(struct afxdp_worker *w, struct xsk_port_socket *dst, __u64 addr, __u32 len,
			   const struct xnf_frags *frags)
{
	queue_tx(dst, addr, len, XDP_PKT_CONTD);
	for (__u32 k = 0; k < frags->n; k++)
		queue_tx(dst, addr_of(w, frags->frag[k].data), frags->frag[k].len, k + 1 < frags->n ? XDP_PKT_CONTD : 0);
}

/* The buffers of a frame after its first go back to the free stack with it. */
static void free_frags(struct afxdp_worker *w, const struct xnf_frags *frags)
{
	for (__u32 k = 0; frags && k < frags->n; k++)
		free_frame(w, addr_of(w, frags->frag[k].data));
}

/* Hybrid: the verdict the NF left in XDP, in the 4 bytes of metadata before the frame, or (verdict_in_frame: a kernel
 * without XDP metadata) in the frame's own first 4 bytes, which are taken off it here. */
static inline xnf_verdict take_verdict(struct afxdp_worker *w, struct xnf_pkt *pkt)
{
	xnf_verdict verdict;

	if (!w->owner->cfg.verdict_in_frame) {
		memcpy(&verdict, (char *)pkt->data - sizeof(verdict), sizeof(verdict));
		return verdict;
	}
	memcpy(&verdict, pkt->data, sizeof(verdict));
	pkt->data = (char *)pkt->data + sizeof(verdict);
	w->stats.rx_bytes -= sizeof(verdict);
	return verdict;
}

/* ---------------------------------------------------------------- the live-frames path */

static const char *live_error_advice(int err)
{
	switch (-err) {
	case ENETDOWN: return "a port is down";
	case EMSGSIZE: return "a frame is longer than its port's MTU allows";
	case EOPNOTSUPP:
	case ENXIO:
		return "a port cannot take frames sent from XDP (a veth needs an XDP program or GRO on its peer: "
		       "ethtool -K PEER gro on)";
	default: return strerror(-err);
	}
}

/* Says once per kind of failure what went wrong; the frames are counted where stats show them. */
static void report_live_error(struct afxdp_worker *w, int err, const char *what)
{
	if (!err || err == w->live_reported_error)
		return;
	w->live_reported_error = err;
	xnf_warn("worker %u: %s (%s): they are dropped and counted; --tx-path xsk sends through the sockets "
		 "instead", w->index, what, live_error_advice(err));
}

/* What the kernel refused in the last call: a port that no longer takes XDP frames leaves the live path
 * under --tx-path auto; anything else is reported (once) and counted. */
static void check_refusals(struct afxdp_worker *w)
{
	__u32 port;
	int err = xnf_live_tx_take_error(w->owner->live, w->index, &port);

	if (!err)
		return;
	if ((err == -EOPNOTSUPP || err == -ENXIO) && w->owner->cfg.tx_path == XNF_TX_AUTO)
		xnf_afxdp_live_port_refused(w->owner, port);
	else
		report_live_error(w, err, "frames sent through live frames were refused");
}

/* Sends every gathered descriptor in one call, entering on the port whose passed frames it carries; the
 * frames are copied out when it returns. */
static void live_flush(struct afxdp_worker *w)
{
	const struct xnf_live_cursor *cursor = xnf_live_tx_cursor(w->owner->live, w->index);
	__u32 n = w->live_pending, unsent = 0, fs = w->owner->cfg.frame_size;
	__u64 passed_before = cursor->passed, passed;
	int calls = xnf_live_tx_send(w->owner->live, w->index, n, w->live_pass_port < 0 ? 0 : (__u32)w->live_pass_port,
				     &unsent);

	passed = cursor->passed - passed_before;
	w->stats.live_calls += calls > 0 ? (__u64)calls : 1;
	w->stats.live_frames += n - unsent - passed;
	w->stats.live_unsent += unsent;
	w->stats.tx_packets += n - unsent - passed;
	w->stats.tx_bytes += w->live_pending_bytes;
	w->stats.pass_injected += passed;
	/* a passed frame the call never reached, or could not build, went nowhere */
	w->stats.pass_dropped += w->live_pending_passes - passed;
	if (calls < 0)
		report_live_error(w, calls, "a live-frames call failed");
	for (__u32 i = 0; i < n; i++)
		free_frame(w, (__u64)(w->live_descs[i].frame - w->live_first_frame) * fs);
	check_refusals(w);
	w->live_pending = 0;
	w->live_pending_bytes = 0;
	w->live_pending_passes = 0;
	w->live_pass_port = -1;
	w->live_flush_now = false;
}

static inline bool live_can_send(const struct afxdp_worker *w, __u64 addr, __u32 len)
{
	return (addr & (w->owner->cfg.frame_size - 1)) < XNF_LIVE_MAX_OFFSET && len <= w->live_max_len &&
	       len >= XNF_LIVE_MIN_LEN;
}

static inline void live_queue(struct afxdp_worker *w, __u32 port, __u64 addr, __u32 len, bool to_stack)
{
	__u32 fs = w->owner->cfg.frame_size;
	struct xnf_live_desc *d;

	/* One call enters on one port: frames passed on another wait for the next call. */
	if (w->live_pending == XNF_LIVE_MAX_BATCH || (to_stack && w->live_pass_port >= 0 && w->live_pass_port != (int)port))
		live_flush(w);
	if (w->live_pending == 0)
		w->live_oldest_ns = xnf_now_ns();
	d = &w->live_descs[w->live_pending++];
	d->frame = w->live_first_frame + (__u32)(addr / fs);
	d->offset = (__u16)(addr & (fs - 1));
	d->len = (__u16)len;
	d->port = port;
	d->to_stack = to_stack;
	if (to_stack) {
		w->live_pass_port = (int)port;
		w->live_pending_passes++;
	} else {
		w->live_pending_bytes += len;
	}
}

/*
 * After a round: send now if the rings went quiet (never hold a frame when
 * nothing follows it), if another round might not fit the batch, if a frame
 * of this round took the xsk ring (order within a flow), or if the oldest
 * frame has waited long enough.
 */
static void live_round_end(struct afxdp_worker *w, __u32 received)
{
	const struct xnf_afxdp_config *cfg = &w->owner->cfg;

	if (!w->live_pending)
		return;
	if (!received || w->live_flush_now || w->live_pending + w->nsockets * cfg->batch > cfg->live_batch ||
	    xnf_now_ns() - w->live_oldest_ns >= (__u64)cfg->live_wait_us * 1000)
		live_flush(w);
}

/* TX and REDIRECT: on the live path when the port takes it and the frame fits a live frame (one buffer), else on
 * dst's tx ring. */
static inline void send_frame(struct afxdp_worker *w, struct xsk_port_socket *dst, const struct xnf_pkt *pkt,
			      __u64 addr, __u32 len)
{
	if (w->live && (w->live_ports & (1u << dst->port))) {
		if (XNF_LIKELY(!pkt->frags && live_can_send(w, addr, len))) {
			live_queue(w, dst->port, addr, len, false);
			return;
		}
		w->stats.xsk_fallback++;
		w->live_flush_now = true;
	}
	if (pkt->frags)
		queue_tx_frags(w, dst, addr, len, pkt->frags);
	else
		queue_tx(dst, addr, len, 0);
}

/*
 * XNF_PASS: the frame goes to the local stack. On the live path, in a live-frames call that enters on its port,
 * where the stack receives it as XDP_PASS would have handed it over (so neighbour replies resolve the port's
 * neighbours); the frame is the call's until it returns. Otherwise (the xsk path, a frame too long) through the
 * port's TAP device, and the frame is free at once. True when the frame is still in use.
 */
static bool pass_to_stack(struct afxdp_worker *w, __u32 port, __u64 addr, const struct xnf_pkt *pkt, __u32 len)
{
	struct iovec pieces[1 + XNF_MAX_FRAGS] = { { .iov_base = pkt->data, .iov_len = len } };
	int fd = w->owner->pass_fds[port], npieces = 1;

	if (w->live && !pkt->frags && live_can_send(w, addr, len)) {
		live_queue(w, port, addr, len, true);
		return true;
	}
	for (__u32 k = 0; pkt->frags && k < pkt->frags->n; k++)
		pieces[npieces++] = (struct iovec){ .iov_base = pkt->frags->frag[k].data, .iov_len = pkt->frags->frag[k].len };
	if (fd < 0 || writev(fd, pieces, npieces) != (ssize_t)(len + pkt->beyond))
		w->stats.pass_dropped++;
	else
		w->stats.pass_injected++;
	return false;
}

/* Sorts one batch's verdicts: frames to send go to tx lists, the rest back to the free stack. */
static void apply_verdicts(struct afxdp_worker *w, struct xsk_port_socket *s, struct xnf_pkt *pkts,
			   const xnf_verdict *verdicts, __u32 n)
{
	struct xsk_port_socket *queue_sockets = &w->sockets[(s - w->sockets) / w->nports * w->nports];
#ifndef XNF_NO_CAPTURE
	__u32 capture = atomic_load_explicit(&w->owner->capture_slots, memory_order_acquire);
#endif

	for (__u32 i = 0; i < n; i++) {
		xnf_verdict v = verdicts[i];
		__u32 slot = xnf_verdict_slot(v, w->nports);
		__u64 addr = addr_of(w, pkts[i].data);
		__u32 len = (__u32)((char *)pkts[i].data_end - (char *)pkts[i].data), bytes = len + pkts[i].beyond;

		if (v & XNF_REASON_MALFORMED) {
			w->stats.verdicts[XNF_STAT_MALFORMED]++;
			w->stats.verdict_bytes[XNF_STAT_MALFORMED] += bytes;
		}
#ifndef XNF_NO_CAPTURE /* a benchmark's variant without the hook (xnf bench run capture-cost) */
		if (capture & (1u << slot))
			xnf_worker_capture(w, s, &pkts[i], slot);
#endif
		if (slot == XNF_STAT_TX) {
			send_frame(w, s, &pkts[i], addr, len);
		} else if (slot == XNF_STAT_REDIRECT) {
			send_frame(w, &queue_sockets[XNF_VERDICT_PORT(v)], &pkts[i], addr, len);
		} else if (slot != XNF_STAT_PASS || !pass_to_stack(w, s->port, addr, &pkts[i], len)) {
			free_frame(w, addr);
			free_frags(w, pkts[i].frags);
		}
		w->stats.verdicts[slot]++;
		w->stats.verdict_bytes[slot] += bytes;
	}
}

enum frame_taken { FRAME_WHOLE, FRAME_LATER, FRAME_TOO_LONG };

/*
 * The descriptors after a frame's first, from the ring's next (*next) on, into frags (*beyond: the frame's further
 * bytes): FRAME_LATER where its last descriptor is not among the n peeked yet (the frame waits for the next
 * round), FRAME_TOO_LONG where it has more than a frame may have.
 */
static enum frame_taken take_frags(struct afxdp_worker *w, struct xsk_port_socket *s, __u32 idx, __u32 n,
				   __u32 *next, struct xnf_frags *frags, __u32 *beyond)
{
	const struct xdp_desc *d = xsk_ring_cons__rx_desc(&s->rx, idx + *next - 1);

	frags->n = 0;
	*beyond = 0;
	while (d->options & XDP_PKT_CONTD) {
		if (frags->n == XNF_MAX_FRAGS)
			return FRAME_TOO_LONG;
		if (*next == n)
			return FRAME_LATER;
		d = xsk_ring_cons__rx_desc(&s->rx, idx + (*next)++);
		frags->frag[frags->n].data = xsk_umem__get_data(w->area, d->addr);
		frags->frag[frags->n++].len = d->len;
		*beyond += d->len;
	}
	return FRAME_WHOLE;
}

/* A frame of more descriptors than a frame may have (its port's MTU raised past what --frame-size allows while
 * running): the descriptors seen are dropped, and the rest as they come; counted once. */
static void drop_too_long(struct afxdp_worker *w, struct xsk_port_socket *s, const struct xdp_desc *first,
			  const struct xnf_frags *frags)
{
	free_frame(w, first->addr);
	free_frags(w, frags);
	s->dropping_rest = true;
	w->stats.rx_too_many_buffers++;
}

static __u32 receive_batch(struct afxdp_worker *w, struct xsk_port_socket *s)
{
	struct xnf_pkt pkts[MAX_BATCH];
	xnf_verdict verdicts[MAX_BATCH];
	__u32 idx, n = xsk_ring_cons__peek(&s->rx, w->rx_batch, &idx), frames = 0, taken = 0;

	if (n == 0)
		return 0;
	for (__u32 i = 0; i < n; i = taken) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(&s->rx, idx + i);
		char *data = xsk_umem__get_data(w->area, d->addr);
		__u32 next = i + 1, beyond = 0;

		if (XNF_UNLIKELY(s->dropping_rest)) {
			free_frame(w, d->addr);
			s->dropping_rest = (d->options & XDP_PKT_CONTD) != 0;
			taken = next;
			continue;
		}
		if (XNF_UNLIKELY(d->options & XDP_PKT_CONTD) && w->frags) {
			enum frame_taken got = take_frags(w, s, idx, n, &next, &w->frags[frames], &beyond);

			if (got == FRAME_LATER)
				break;   /* its last descriptor comes later: so does the frame */
			if (got == FRAME_TOO_LONG) {
				drop_too_long(w, s, d, &w->frags[frames]);
				taken = next;
				continue;
			}
		}

		/* The kernel wrote the frame from the sending core (copy mode on veth): its first line is a miss to
		 * another core's cache. Asked for now, the batch's misses overlap; met one by one inside the NF,
		 * each costs its full latency behind the last frame's work (docs/afxdp.md, "Frames prefetched"). */
#ifndef XNF_NO_PREFETCH /* a benchmark's variant without it (xnf bench run frame-prefetch) */
		__builtin_prefetch(data);
#endif
		pkts[frames].data = data;
		pkts[frames].data_end = data + d->len;
		/* The kernel wrote the frame XDP_PACKET_HEADROOM (at least) into its chunk: the NF may push headers
		 * into that room (xnf_frame_move_start). */
		pkts[frames].frame_start = (char *)w->area + frame_base(w, d->addr);
		pkts[frames].beyond = beyond;
		pkts[frames].frags = beyond ? &w->frags[frames] : NULL;
		pkts[frames].ingress_port = s->port;
		pkts[frames].rx_queue = s->queue;
		w->stats.rx_bytes += d->len + beyond;
		frames++;
		taken = next;
	}
	/* A peek moves the ring's cached consumer past all n: the descriptors of a frame left for later are given back,
	 * or the next peek would start after them and take the frame's last buffers for a frame of their own. */
	xsk_ring_cons__cancel(&s->rx, n - taken);
	if (taken == 0)
		return 0;
	xsk_ring_cons__release(&s->rx, taken);
	w->stats.rx_packets += frames;
	if (w->owner->cfg.forward_only) {
		/* hybrid: the NF already ran in XDP and left its verdict with the frame */
		for (__u32 i = 0; i < frames; i++)
			verdicts[i] = take_verdict(w, &pkts[i]);
	} else {
		xnf_nf_run_batch(pkts, verdicts, frames);
	}
	apply_verdicts(w, s, pkts, verdicts, frames);
	return frames;
}

static void kick_tx(struct afxdp_worker *w, struct xsk_port_socket *s)
{
	const struct xnf_afxdp_config *cfg = &w->owner->cfg;

	/* Copy mode transmits only inside sendto(); zero-copy only when the ring asks for it. */
	if (w->owner->zerocopy && cfg->need_wakeup && !xsk_ring_prod__needs_wakeup(&s->tx))
		return;
	w->stats.wakeups++;
	/* EAGAIN/EBUSY/ENOBUFS mean "later": the descriptors stay on the ring for the next kick. */
	sendto(s->fd, NULL, 0, MSG_DONTWAIT, NULL, 0);
}

/*
 * Moves each socket's gathered descriptors onto its tx ring in one reserve,
 * then kicks every socket with frames sent but not completed. In copy mode
 * one sendto() sends only a bounded budget of descriptors, and a frame the
 * device refused (busy) is parked in the kernel until the next sendto(): a
 * socket that is not kicked again keeps its frames forever.
 */
static void flush_tx(struct afxdp_worker *w)
{
	for (__u32 i = 0; i < w->nsockets; i++) {
		struct xsk_port_socket *s = &w->sockets[i];
		__u32 idx = 0, n;

		if (s->pending) {
			/* A frame goes on the ring whole or not at all: as many as fit, to the last whole frame. */
			n = xsk_prod_nb_free(&s->tx, s->pending);
			n = n < s->pending ? n : s->pending;
			while (n && (s->pending_options[n - 1] & XDP_PKT_CONTD))
				n--;
			n = n ? xsk_ring_prod__reserve(&s->tx, n, &idx) : 0;
			for (__u32 k = 0; k < n; k++) {
				struct xdp_desc *d = xsk_ring_prod__tx_desc(&s->tx, idx + k);

				d->addr = s->pending_addr[k];
				d->len = s->pending_len[k];
				d->options = s->pending_options[k];
				w->stats.tx_bytes += d->len;
				w->stats.tx_packets += !(d->options & XDP_PKT_CONTD);
			}
			xsk_ring_prod__submit(&s->tx, n);
			s->tx_inflight += n;
			for (__u32 k = n; k < s->pending; k++) {
				free_frame(w, s->pending_addr[k]);
				w->stats.tx_ring_full += !(s->pending_options[k] & XDP_PKT_CONTD);
			}
			s->pending = 0;
		}
		if (s->tx_inflight)
			kick_tx(w, s);
	}
}

/* What a round does when no socket had a packet, per mode. */
static void wait_for_work(struct afxdp_worker *w)
{
	const struct xnf_afxdp_config *cfg = &w->owner->cfg;

	switch (cfg->wait) {
	case XNF_WAIT_BUSY:
		for (__u32 i = 0; i < w->nsockets; i++) {
			struct xsk_port_socket *s = &w->sockets[i];

			if (!cfg->need_wakeup || xsk_ring_prod__needs_wakeup(&s->fill)) {
				w->stats.wakeups++;
				recvfrom(s->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
			}
		}
		break;
	case XNF_WAIT_SYSCALL:
		break; /* every round already made its busy-poll syscalls */
	case XNF_WAIT_POLL: {
		struct pollfd fds[XNF_MAX_PORTS * XNF_MAX_QUEUES];

		for (__u32 i = 0; i < w->nsockets; i++) {
			if (w->sockets[i].tx_inflight)
				return; /* frames still to send: keep kicking rather than sleep */
		}
		for (__u32 i = 0; i < w->nsockets; i++) {
			fds[i].fd = w->sockets[i].fd;
			fds[i].events = POLLIN;
		}
		w->stats.polls++;
		xnf_rcu_offline(); /* a sleeping reader must not hold up map writers */
		poll(fds, w->nsockets, POLL_TIMEOUT_MS);
		xnf_rcu_online();
		break;
	}
	}
}

static void busy_poll_round(struct afxdp_worker *w)
{
	for (__u32 i = 0; i < w->nsockets; i++) {
		w->stats.busy_polls++;
		recvfrom(w->sockets[i].fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
	}
}

/* Marks a frame as seen in one place; a frame seen twice means two owners, the bug this catches. */
static void mark_frame(const struct afxdp_worker *w, __u8 *seen, __u64 addr, struct xnf_frame_accounting *out)
{
	__u64 index = frame_base(w, addr) / w->owner->cfg.frame_size;

	if (index >= w->nframes) {
		out->invalid++;
		return;
	}
	if (seen[index])
		out->duplicates++;
	seen[index] = 1;
}

static __u32 scan_ring(const struct afxdp_worker *w, __u8 *seen, struct xnf_frame_accounting *out,
		       const __u32 *producer, const __u32 *consumer, __u32 mask, const void *ring, bool descs)
{
	__u32 prod = __atomic_load_n(producer, __ATOMIC_ACQUIRE), cons = __atomic_load_n(consumer, __ATOMIC_ACQUIRE);

	for (__u32 i = cons; i != prod; i++) {
		__u64 addr = descs ? ((const struct xdp_desc *)ring)[i & mask].addr : ((const __u64 *)ring)[i & mask];

		mark_frame(w, seen, addr, out);
	}
	return prod - cons;
}

void xnf_afxdp_worker_account(struct afxdp_worker *w, struct xnf_frame_accounting *out)
{
	__u8 *seen = calloc(w->nframes, 1);

	memset(out, 0, sizeof(*out));
	out->total = w->nframes;
	out->free = w->nfree;
	if (!seen) {
		out->invalid = ~0ull; /* cannot scan: make the answer unmistakably unusable */
		return;
	}
	for (__u64 i = 0; i < w->nfree; i++)
		mark_frame(w, seen, w->free_frames[i], out);
	for (__u32 i = 0; i < w->nsockets; i++) {
		struct xsk_port_socket *s = &w->sockets[i];

		out->fill += scan_ring(w, seen, out, s->fill.producer, s->fill.consumer, s->fill.mask, s->fill.ring, false);
		out->rx += scan_ring(w, seen, out, s->rx.producer, s->rx.consumer, s->rx.mask, s->rx.ring, true);
		out->tx += scan_ring(w, seen, out, s->tx.producer, s->tx.consumer, s->tx.mask, s->tx.ring, true);
		out->completion += scan_ring(w, seen, out, s->comp.producer, s->comp.consumer, s->comp.mask,
					     s->comp.ring, false);
		for (__u32 k = 0; k < s->pending; k++)
			mark_frame(w, seen, s->pending_addr[k], out);
		out->worker += s->pending;
		out->tx_inflight += s->tx_inflight;
	}
	for (__u32 k = 0; k < w->live_pending; k++)
		mark_frame(w, seen, (__u64)(w->live_descs[k].frame - w->live_first_frame) * w->owner->cfg.frame_size,
			   out);
	out->worker += w->live_pending;
	out->kernel = out->total - out->free - out->fill - out->rx - out->tx - out->completion - out->worker;
	free(seen);
}

static void answer_accounting(struct afxdp_worker *w)
{
	if (!atomic_load_explicit(&w->account_requested, memory_order_acquire))
		return;
	xnf_afxdp_worker_account(w, &w->accounting);
	atomic_store_explicit(&w->account_requested, 0, memory_order_relaxed);
	atomic_store_explicit(&w->account_ready, 1, memory_order_release);
}

static int pin(int core)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(core, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

void *xnf_afxdp_worker_main(void *arg)
{
	struct afxdp_worker *w = arg;
	const struct xnf_afxdp_config *cfg = &w->owner->cfg;

	pin(w->core);
	xnf_native_cpu = w->index;
	xnf_rcu_register_reader();
	while (!atomic_load_explicit(&w->owner->stop, memory_order_relaxed)) {
		__u32 received = 0;

		if (cfg->wait == XNF_WAIT_SYSCALL)
			busy_poll_round(w);
		if (w->live)
			w->live_ports = atomic_load_explicit(&w->owner->live_ports, memory_order_relaxed);
		for (__u32 i = 0; i < w->nsockets; i++) {
			reap_completions(w, &w->sockets[i]);
			refill(w, &w->sockets[i]);
			received += receive_batch(w, &w->sockets[i]);
		}
		if (w->live)
			live_round_end(w, received); /* before the xsk ring's frames: they came later */
		flush_tx(w);
		if (!received) {
			w->stats.empty_polls++;
			wait_for_work(w);
		}
		answer_accounting(w);
		xnf_rcu_quiescent(); /* no map value from this round is used after here */
	}
	if (w->live && w->live_pending)
		live_flush(w); /* the NF decided to send them: send them, the ports are still there */
	xnf_rcu_unregister_reader();
	return NULL;
}
