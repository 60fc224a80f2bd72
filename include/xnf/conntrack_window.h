/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * TCP window tracking for <xnf/conntrack.h>, as netfilter's tcp_in_window does it with its defaults
 * (nf_conntrack_tcp_be_liberal=0, max_retrans=3): each end's furthest sequence number sent, the furthest the other
 * end's window lets it send, its largest window and the furthest it acknowledged, taken from the handshake's
 * segments (with their window scale and SACK options) and moved by every segment after. A segment is then:
 *
 *   in the window         it passes and moves the connection (its state by netfilter's table)
 *   ignored               below the window (a retransmission of what was acknowledged) or an acknowledgement
 *                         older than a window: it passes with its connection and changes nothing
 *   invalid               past what the receiver's window allows, or acknowledging what was never sent
 *
 * and a RST closes its connection only at the sequence number the other end expects; one elsewhere in the window
 * leaves the connection as it was (for the challenge ACK of RFC 5961) with tcp_close's idle time, one before the
 * window is invalid. A connection picked up after its handshake is tracked liberally, as netfilter does (its window
 * scale is unknown). The idle time is shortened as netfilter's is: to tcp_unacknowledged while data is
 * unacknowledged, to tcp_max_retrans after max_retrans retransmissions of one segment or a zero window.
 *
 * The state is one entry per TCP connection in the table's name##_windows map, beside its entry: a connection
 * without one (its table kept from a build before this one, or the map full) is tracked liberally. The checks run
 * in one function verified apart (its own verifier budget: the acl's program is near Linux 6.1's million
 * instructions), given the connection's window and the segment in scalars. Two CPUs moving the same connection's
 * window at once may lose one's write, as netfilter's lock would not; every field only grows, so the next segment
 * of that direction sets it again, and a frame judged in between on the stale value is judged as netfilter would
 * have judged it a moment earlier.
 */
#ifndef XNF_CONNTRACK_WINDOW_H
#define XNF_CONNTRACK_WINDOW_H

#include <xnf/common.h>
#include <xnf/helpers.h>
#include <xnf/frame_bytes.h>

/* One end's window (netfilter's struct ip_ct_tcp_state). */
struct xnf_ct_window_side {
	__u32 end;       /* the furthest sequence number it sent, plus its length (td_end) */
	__u32 maxend;    /* the furthest the other end's window lets it send (td_maxend) */
	__u32 maxwin;    /* its largest window, scaled (td_maxwin); 0: nothing seen of this end yet */
	__u32 maxack;    /* the furthest it acknowledged (td_maxack) */
	__u8 scale;      /* its window scale */
	__u8 flags;      /* XNF_CT_WINDOW_* */
	__u16 pad;
};

/* A connection's window: its ends by their index in the key, and its last segment, for retransmissions and RSTs. */
struct xnf_ct_window {
	struct xnf_ct_window_side side[2];
	__u32 last_seq;
	__u32 last_ack;
	__u32 last_end;
	__u16 last_win;     /* as the segment held it, unscaled */
	__u8 last_index;    /* netfilter's segment kind (xnf__ct_tcp_index) plus one; 0: none yet */
	__u8 last_side;
	__u8 retrans;       /* how often the last ACK segment came again, unchanged */
	__u8 pad[3];
};

#define XNF_CT_WINDOWS_SUFFIX "_windows"

/* An end's flags, as netfilter's IP_CT_TCP_FLAG_*. */
#define XNF_CT_WINDOW_SCALE 1
#define XNF_CT_WINDOW_SACK_PERM 2
#define XNF_CT_WINDOW_UNACKED 4      /* it sent data not yet acknowledged */
#define XNF_CT_WINDOW_MAXACK_SET 8
#define XNF_CT_WINDOW_LIBERAL 16     /* picked up: its segments are never judged by the window */

/* netfilter's nf_conntrack_tcp_max_retrans: after so many retransmissions the idle time is tcp_max_retrans. */
#define XNF_CT_MAX_RETRANS 3
/* MAXACKWINCONST: how far below the other end's data an acknowledgement may lie, at least. */
#define XNF__CT_MAX_ACK_WINDOW 66000
#define XNF__CT_MAX_WSCALE 14

/* What the window says of a segment. */
#define XNF__CT_WINDOW_ACCEPT 0
#define XNF__CT_WINDOW_IGNORE 1        /* it passes with its connection and changes nothing */
#define XNF__CT_WINDOW_INVALID 2
#define XNF__CT_WINDOW_KEEP_STATE 3    /* a RST in the window but not where expected: the state stays */
#define XNF__CT_WINDOW_VERDICT 3
/* With an accepted segment: the idle time's limits from now on (the entry's XNF_CT_CAP_* bits, shifted). */
#define XNF__CT_WINDOW_CAPS_SHIFT 8

/*
 * The segment, in scalars (the function verified apart takes five): seq_ack is the sequence number above the
 * acknowledgement number; seg its end (seq + payload + SYN + FIN) above the window, the flags and the options'
 * length; info the rest, as below.
 */
#define XNF__CT_SEG(end, win, flags, optlen) \
	((__u64)(end) << 32 | (__u64)((win) & 0xffff) << 16 | (__u64)((flags) & 0xff) << 8 | ((optlen) & 0x3f))
#define XNF__CT_INFO_REPLY 1              /* the segment goes the answer's way (netfilter's dir) */
#define XNF__CT_INFO_SENDER 2             /* its sender is endpoint 1 of the key */
#define XNF__CT_INFO_ESTABLISHED 4        /* ESTABLISHED and assured (nf_conntrack_tcp_established) */
#define XNF__CT_INFO_REPLIED 8
#define XNF__CT_INFO_ASSURED 16
#define XNF__CT_INFO_RST_CLOSES 32        /* a RST the table moves to CLOSE */
#define XNF__CT_INFO_IGNORED 64           /* the table ignores it: only noted as the last segment */
#define XNF__CT_INFO_CHECK 128            /* the window is asked: without it, the segment's fate is decided */
#define XNF__CT_INFO_STATE_SHIFT 8        /* the connection's state before the segment */
#define XNF__CT_INFO_INDEX_SHIFT 12       /* its kind: xnf__ct_tcp_index */
#define XNF__CT_INFO_OPTIONS_SHIFT 16     /* where its options start in the frame */

/*
 * A TCP segment as the tracker hands it on, beside its sequence and acknowledgement numbers: the bytes after its IP
 * header (by the IP header's length), where its options start in the frame, its window, flags and sender (its
 * endpoint's index in the key), and its options' length.
 */
#define XNF__CT_TCP_SEG(l4_len, options_at, win, flags, sender, optlen)                                        \
	((__u64)((l4_len) & 0xffff) << 48 | (__u64)((options_at) & 0xffff) << 32 | (__u64)((win) & 0xffff) << 16 | \
	 (__u64)((flags) & 0xff) << 8 | (__u64)((sender) & 1) << 7 | ((optlen) & 0x3f))
#define XNF__CT_TCP_SEG_FLAGS(seg) ((__u8)((seg) >> 8))
#define XNF__CT_TCP_SEG_SENDER(seg) ((__u8)(((seg) >> 7) & 1))

/* The segment as the window takes it (XNF__CT_SEG): its end is its sequence number plus its payload, SYN and FIN. */
static __always_inline __u64 xnf__ct_window_seg(__u64 seq_ack, __u64 seg)
{
	__u32 l4_len = (__u32)(seg >> 48), header = 20 + ((__u32)seg & 0x3f), flags = XNF__CT_TCP_SEG_FLAGS(seg);
	__u32 payload = l4_len > header ? l4_len - header : 0;
	__u32 end = (__u32)(seq_ack >> 32) + payload + !!(flags & XNF__CT_SYN) + !!(flags & XNF__CT_FIN);

	return XNF__CT_SEG(end, (__u32)(seg >> 16), flags, (__u32)seg);
}

/* The window's XNF__CT_INFO_* the segment gives: its sender, kind and where its options are. */
static __always_inline __u32 xnf__ct_tcp_seg_info(__u64 seg, __u32 index)
{
	return (__u32)((seg >> 32) & 0xffff) << XNF__CT_INFO_OPTIONS_SHIFT | index << XNF__CT_INFO_INDEX_SHIFT |
	       (XNF__CT_TCP_SEG_SENDER(seg) ? XNF__CT_INFO_SENDER : 0);
}

/* A new connection's window, from its first segment: its end, window and options, and whether it was a SYN. */
#define XNF__CT_OPEN_VALID (1ull << 63)
#define XNF__CT_OPEN_SYN (1ull << 62)
#define XNF__CT_OPEN_OPENER (1ull << 61)
#define XNF__CT_OPEN_LIBERAL (1ull << 60)

/* Sequence numbers compared as netfilter's before() and after(): modulo 2^32. */
static __always_inline int xnf__seq_before(__u32 a, __u32 b)
{
	return (__s32)(a - b) < 0;
}

static __always_inline int xnf__seq_after(__u32 a, __u32 b)
{
	return (__s32)(b - a) < 0;
}

/* ------------------------------------------------------------------------------------------- TCP options */

#define XNF__CT_OPTIONS_MAX 40

/* What a walk of the options found, in one scalar: the furthest SACK block (or the ack given), the window scale and
 * the flags (XNF_CT_WINDOW_SCALE, XNF_CT_WINDOW_SACK_PERM). */
#define XNF__CT_FOUND_OPTIONS(sack, scale, flags) \
	((__u64)(__u32)(sack) | (__u64)((scale) & 0xf) << 32 | (__u64)((flags) & 0xff) << 40)
#define XNF__CT_FOUND_SACK(found) ((__u32)(found))
#define XNF__CT_FOUND_SCALE(found) ((__u32)((found) >> 32) & 0xf)
#define XNF__CT_FOUND_FLAGS(found) ((__u32)((found) >> 40) & 0xff)

/* What the options say: the window scale and SACK permission (a SYN's), the furthest SACK block (an ACK's). */
struct xnf__ct_options {
	__u32 at;
	__u32 len;
	__u32 sack;
	__u32 scale;
	__u32 flags;
	__u32 want_sack;
	__u32 done;
#ifndef XNF_TARGET_BPF
	__u8 bytes[64];   /* read as the scratch is, an index masked to 63 */
#endif
};

#ifdef XNF_TARGET_BPF
typedef xnf_ctx xnf__ct_frame;
#define XNF__CT_FRAME_OF(pkt) ((pkt)->ctx)

/*
 * The walk's bytes and its state in a per-CPU map, not on the stack: the verifier knows nothing of a map's contents,
 * so each step of the walk looks the same to it and it checks the step once, where a walk kept on the stack (its
 * position known exactly) was checked step by step along every path, past the million instructions on Linux 6.18.
 */
struct xnf__ct_options_scratch {
	__u8 bytes[64];
	struct xnf__ct_options walk;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct xnf__ct_options_scratch);
	__uint(max_entries, 1);
} xnf_ct_options_scratch SEC(".maps");

static __always_inline struct xnf__ct_options_scratch *xnf__ct_scratch(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&xnf_ct_options_scratch, &zero);
}

static long xnf__ct_option(__u32 index, void *arg);

/* The segment's options (len bytes at offset) walked: XNF__CT_FOUND_OPTIONS of what they say, sack raised by their
 * SACK blocks where want_sack. */
static __always_inline __u64 xnf__ct_read_options(xnf__ct_frame *frame, __u32 offset, __u32 len, __u32 want_sack,
						  __u32 sack)
{
	struct xnf__ct_options_scratch *scratch = xnf__ct_scratch();

	if (!scratch || len == 0 || len > XNF__CT_OPTIONS_MAX)
		return XNF__CT_FOUND_OPTIONS(sack, 0, 0);
	/* 1 to 40 as it is; 1 to 64 as a verifier that loses the bounds just checked (Linux 6.1) reads it. */
	if (XNF__FRAME_LOAD(frame, offset, scratch->bytes, ((len - 1) & 63) + 1))
		return XNF__CT_FOUND_OPTIONS(sack, 0, 0);
	__builtin_memset(&scratch->walk, 0, sizeof(scratch->walk));
	scratch->walk.len = len;
	scratch->walk.want_sack = want_sack;
	scratch->walk.sack = sack;
	xnf_loop(XNF__CT_OPTIONS_MAX, xnf__ct_option, 0);
	return XNF__CT_FOUND_OPTIONS(scratch->walk.sack, scratch->walk.scale, scratch->walk.flags);
}
#else
typedef const struct xnf_pkt xnf__ct_frame;
#define XNF__CT_FRAME_OF(pkt) (pkt)

static long xnf__ct_option(__u32 index, void *arg);

static __always_inline __u64 xnf__ct_read_options(xnf__ct_frame *frame, __u32 offset, __u32 len, __u32 want_sack,
						  __u32 sack)
{
	struct xnf__ct_options o = { .len = len, .want_sack = want_sack, .sack = sack };

	if (len == 0 || len > XNF__CT_OPTIONS_MAX || xnf_frame_load(frame, offset, o.bytes, len))
		return XNF__CT_FOUND_OPTIONS(sack, 0, 0);
	xnf_loop(XNF__CT_OPTIONS_MAX, xnf__ct_option, &o);
	return XNF__CT_FOUND_OPTIONS(o.sack, o.scale, o.flags);
}
#endif

static __always_inline __u32 xnf__ct_be32_at(const __u8 *b, __u32 at)
{
	return (__u32)b[at & 63] << 24 | (__u32)b[(at + 1) & 63] << 16 | (__u32)b[(at + 2) & 63] << 8 |
	       b[(at + 3) & 63];
}

/* One option: as tcp_options and tcp_sack read them (a partial or silly option ends the walk). */
static long xnf__ct_option(__u32 index, void *arg)
{
#ifdef XNF_TARGET_BPF
	struct xnf__ct_options_scratch *scratch = xnf__ct_scratch();
	struct xnf__ct_options *o;
	const __u8 *b;

	if (!scratch)
		return 1;
	o = &scratch->walk;
	b = scratch->bytes;
#else
	struct xnf__ct_options *o = arg;
	const __u8 *b = o->bytes;
#endif
	__u32 kind, size;

	if (o->done || o->at >= o->len)
		return 1;
	kind = b[o->at & 63];
	if (kind == 0)   /* end of options */
		return 1;
	if (kind == 1) { /* no-op */
		o->at++;
		return 0;
	}
	if (o->at + 2 > o->len)
		return 1;
	size = b[(o->at + 1) & 63];
	if (size < 2 || o->at + size > o->len)
		return 1;
	if (kind == 4 && size == 2) {
		o->flags |= XNF_CT_WINDOW_SACK_PERM;
	} else if (kind == 3 && size == 3) {
		o->scale = b[(o->at + 2) & 63];
		if (o->scale > XNF__CT_MAX_WSCALE)
			o->scale = XNF__CT_MAX_WSCALE;
		o->flags |= XNF_CT_WINDOW_SCALE;
	} else if (kind == 5 && o->want_sack && size >= 10 && (size - 2) % 8 == 0) {
		for (__u32 block = 0; block < 4; block++) {
			__u32 right;

			if (2 + block * 8 >= size)
				break;
			right = xnf__ct_be32_at(b, o->at + 2 + block * 8 + 4);
			if (xnf__seq_after(right, o->sack))
				o->sack = right;
		}
		o->done = 1;   /* as tcp_sack: the first SACK option is the one */
		return 1;
	}
	o->at += size;
	return 0;
}

/* ------------------------------------------------------------------------------------------- the checks */

static __always_inline __u32 xnf__ct_max_ack_window(const struct xnf_ct_window_side *sender)
{
	return sender->maxwin > XNF__CT_MAX_ACK_WINDOW ? sender->maxwin : XNF__CT_MAX_ACK_WINDOW;
}

/* An end's window from its SYN or SYN/ACK (tcp_init_sender); the scale holds only where both ends sent one. */
static __always_inline void xnf__ct_window_start(struct xnf_ct_window_side *sender, struct xnf_ct_window_side *receiver,
						 __u32 end, __u32 win, __u64 found, int reply)
{
	sender->end = end;
	sender->maxend = end;
	sender->maxwin = win ? win : 1;
	sender->scale = (__u8)XNF__CT_FOUND_SCALE(found);
	sender->flags = (__u8)((sender->flags & XNF_CT_WINDOW_LIBERAL) | XNF__CT_FOUND_FLAGS(found));
	if (reply && !(sender->flags & XNF_CT_WINDOW_SCALE && receiver->flags & XNF_CT_WINDOW_SCALE)) {
		sender->scale = 0;
		receiver->scale = 0;
	}
}

/* The idle time's limits the window now sets (XNF_CT_CAP_*, in the verdict). */
static __always_inline __u32 xnf__ct_window_caps(const struct xnf_ct_window *w)
{
	__u32 caps = 0;

	if (w->retrans >= XNF_CT_MAX_RETRANS || (w->last_index && w->last_win == 0))
		caps |= XNF_CT_CAP_RETRANS;
	if ((w->side[0].flags | w->side[1].flags) & XNF_CT_WINDOW_UNACKED)
		caps |= XNF_CT_CAP_UNACKED;
	return caps << XNF__CT_WINDOW_CAPS_SHIFT;
}

/* A failed check's verdict: none for an end tracked liberally. */
static __always_inline __u32 xnf__ct_window_fails(const struct xnf_ct_window_side *sender, __u32 verdict)
{
	return sender->flags & XNF_CT_WINDOW_LIBERAL ? XNF__CT_WINDOW_ACCEPT : verdict;
}

/*
 * The RST checks netfilter makes before the window's, for a RST its table moves to CLOSE: one before what the other
 * end acknowledged is invalid; on an established connection one not exactly there (nor right after the sender's
 * last segment) keeps the state. Returns the verdict, or ACCEPT to go on to the window; *skip: accepted without it.
 */
static __always_inline __u32 xnf__ct_rst_checks(const struct xnf_ct_window *w, __u32 seq, __u32 ack_seq, __u32 info,
						__u32 old_state, int *skip)
{
	const struct xnf_ct_window_side *receiver = &w->side[(info & XNF__CT_INFO_SENDER) ? 0 : 1];
	__u32 side = (info & XNF__CT_INFO_SENDER) ? 1 : 0, established = info & XNF__CT_INFO_ESTABLISHED;
	__u32 verdict = XNF__CT_WINDOW_ACCEPT;

	*skip = 0;
	if (old_state >= XNF_TCP_FIN_WAIT && old_state <= XNF_TCP_CLOSE) {
		*skip = 1;   /* closing: the entry may already be another connection's (tcp_can_early_drop) */
		return verdict;
	}
	if ((receiver->flags & XNF_CT_WINDOW_MAXACK_SET) && w->last_index != 1 + 0 /* a SYN */ &&
	    !(seq == 0 && !established)) {
		if (xnf__seq_before(seq, receiver->maxack))
			return XNF__CT_WINDOW_INVALID;
		if (established && seq != receiver->maxack &&
		    !(w->last_index == 1 + 3 && w->last_side == side && seq == w->last_end))
			verdict = XNF__CT_WINDOW_KEEP_STATE;
	}
	if ((((info & XNF__CT_INFO_REPLIED) && w->last_index == 1 + 0) ||
	     (!(info & XNF__CT_INFO_ASSURED) && w->last_index == 1 + 3)) && ack_seq == w->last_end)
		*skip = 1;   /* the answer to a SYN or ACK let through as ignored */
	if (old_state == XNF_TCP_SYN_SENT && w->last_index == 1 + 3 && w->last_side != side && seq == w->last_ack)
		*skip = 1;   /* the answer to a challenge ACK */
	return verdict;
}

/* The segment against the window, and the window moved by it where it passes (tcp_in_window). */
static __always_inline __u32 xnf__ct_window_check(struct xnf_ct_window *w, xnf__ct_frame *frame, __u64 seq_ack,
						  __u64 seg, __u32 info)
{
	__u32 s = (info & XNF__CT_INFO_SENDER) ? 1 : 0, reply = info & XNF__CT_INFO_REPLY;
	struct xnf_ct_window_side *sender = &w->side[s], *receiver = &w->side[s ^ 1];
	__u32 seq = (__u32)(seq_ack >> 32), ack = (__u32)seq_ack, sack = ack, end = (__u32)(seg >> 32);
	__u32 win_raw = (__u32)(seg >> 16) & 0xffff, win = win_raw, flags = (__u32)(seg >> 8) & 0xff, swin;
	__u32 old_state = (info >> XNF__CT_INFO_STATE_SHIFT) & 0xf, index = (info >> XNF__CT_INFO_INDEX_SHIFT) & 0xf;
	__u32 offset = info >> XNF__CT_INFO_OPTIONS_SHIFT;
	int syn = flags & XNF__CT_SYN, has_ack = flags & XNF__CT_ACK, rst = flags & XNF__CT_RST;
	__u32 optlen = (__u32)seg & 0x3f, want_sack = !syn && (receiver->flags & XNF_CT_WINDOW_SACK_PERM);
	__u64 found = XNF__CT_FOUND_OPTIONS(ack, 0, 0);

	if (optlen && (syn || want_sack)) {
		found = xnf__ct_read_options(frame, offset, optlen, want_sack, ack);
		sack = XNF__CT_FOUND_SACK(found);
	}

	if (sender->maxwin == 0) {
		if (syn) {
			xnf__ct_window_start(sender, receiver, end, win, found, reply);
			if (!has_ack)
				return XNF__CT_WINDOW_ACCEPT;   /* a simultaneous open */
		} else {
			/* Nothing seen of this end yet: its window from this segment. */
			sender->end = end;
			swin = win << sender->scale;
			sender->maxwin = swin ? swin : 1;
			sender->maxend = end + sender->maxwin;
			if (receiver->maxwin == 0) {
				receiver->end = sack;
				receiver->maxend = sack;
			} else if (sack == receiver->end + 1) {
				receiver->end++;   /* the answer to a keep-alive */
			}
		}
	} else if (syn && xnf__seq_after(end, sender->end) &&
		   (old_state == XNF_TCP_SYN_SENT || old_state == XNF_TCP_SYN_RECV)) {
		xnf__ct_window_start(sender, receiver, end, win, found, reply);   /* a new SYN: later sequence numbers */
		if (reply && !has_ack)
			return XNF__CT_WINDOW_ACCEPT;
	}

	if (!has_ack || (rst && ack == 0)) {
		ack = receiver->end;   /* none, or a RST with ACK and 0 (broken stacks): as if acknowledged */
		sack = ack;
	}
	if (rst && seq == 0 && old_state == XNF_TCP_SYN_SENT) {
		seq = sender->end;   /* a RST answering a SYN */
		end = seq;
	}

	if (!xnf__seq_before(seq, sender->maxend + 1)) {
		__u32 overshot = end - sender->maxend + 1;

		if (receiver->maxwin && xnf__seq_after(end, sender->end - receiver->maxwin - 1) &&
		    xnf__seq_after(sack, receiver->end - xnf__ct_max_ack_window(sender) - 1) &&
		    overshot <= receiver->maxwin && xnf__seq_before(sack, receiver->end + 1)) {
			/* A little past the window (TCPs that overshoot it): its data noted, so that its ACK is not
			 * over the bound. */
			sender->end = end;
			sender->flags |= XNF_CT_WINDOW_UNACKED;
			return xnf__ct_window_fails(sender, XNF__CT_WINDOW_IGNORE);
		}
		return xnf__ct_window_fails(sender, XNF__CT_WINDOW_INVALID);   /* past the receiver's window */
	}
	if (!xnf__seq_before(sack, receiver->end + 1))
		return xnf__ct_window_fails(sender, XNF__CT_WINDOW_INVALID);   /* acknowledges what was not sent */
	if (receiver->maxwin && !xnf__seq_after(end, sender->end - receiver->maxwin - 1))
		return xnf__ct_window_fails(sender, XNF__CT_WINDOW_IGNORE);    /* acknowledged data again */
	if (!xnf__seq_after(sack, receiver->end - xnf__ct_max_ack_window(sender) - 1))
		return xnf__ct_window_fails(sender, XNF__CT_WINDOW_IGNORE);    /* a very late acknowledgement */

	if (!syn)
		win <<= sender->scale;
	swin = win + (sack - ack);
	if (sender->maxwin < swin)
		sender->maxwin = swin;
	if (xnf__seq_after(end, sender->end)) {
		sender->end = end;
		if (!(sender->flags & XNF_CT_WINDOW_UNACKED))
			sender->flags |= XNF_CT_WINDOW_UNACKED;
	}
	if (has_ack) {
		if (!(sender->flags & XNF_CT_WINDOW_MAXACK_SET)) {
			sender->maxack = ack;
			sender->flags |= XNF_CT_WINDOW_MAXACK_SET;
		} else if (xnf__seq_after(ack, sender->maxack)) {
			sender->maxack = ack;
		}
	}
	if (receiver->maxwin != 0 && xnf__seq_after(end, sender->maxend))
		receiver->maxwin += end - sender->maxend;
	if (xnf__seq_after(sack + win, receiver->maxend - 1))
		receiver->maxend = sack + win + (win == 0);
	if (ack == receiver->end && (receiver->flags & XNF_CT_WINDOW_UNACKED))
		receiver->flags &= ~XNF_CT_WINDOW_UNACKED;

	if (index == 3) {   /* an ACK: the same again counts as a retransmission */
		if (w->last_side == s && w->last_index == 1 + 3 && w->last_seq == seq && w->last_ack == ack &&
		    w->last_end == end && w->last_win == win_raw) {
			if (w->retrans < 255)
				w->retrans++;
		} else {
			w->last_seq = seq;
			w->last_ack = ack;
			w->last_end = end;
			w->last_win = (__u16)win_raw;
			w->retrans = 0;
		}
	}
	return XNF__CT_WINDOW_ACCEPT;
}

/* The segment's kind and sender noted as the last segment's, written only where they change: the two directions of
 * a connection often run on two CPUs, and a write per frame would move the line between them. */
static __always_inline void xnf__ct_window_note_last(struct xnf_ct_window *w, __u32 info)
{
	__u8 index = (__u8)(1 + ((info >> XNF__CT_INFO_INDEX_SHIFT) & 0xf)), side = (info & XNF__CT_INFO_SENDER) ? 1 : 0;

	if (w->last_index != index)
		w->last_index = index;
	if (w->last_side != side)
		w->last_side = side;
}

/* A segment the table ignores, noted as the last one (the RST checks above ask what it was). */
static __always_inline void xnf__ct_window_note_ignored(struct xnf_ct_window *w, __u64 seq_ack, __u64 seg,
							__u32 info)
{
	w->last_index = (__u8)(1 + ((info >> XNF__CT_INFO_INDEX_SHIFT) & 0xf));
	w->last_side = (info & XNF__CT_INFO_SENDER) ? 1 : 0;
	w->last_seq = (__u32)(seq_ack >> 32);
	w->last_end = (__u32)(seg >> 32);
	w->last_win = (__u16)(seg >> 16);
	if (((info >> XNF__CT_INFO_STATE_SHIFT) & 0xf) == XNF_TCP_SYN_SENT &&
	    ((info >> XNF__CT_INFO_INDEX_SHIFT) & 0xf) == 3 && (info & XNF__CT_INFO_REPLY))
		w->last_ack = (__u32)seq_ack;   /* a possible challenge ACK to the SYN */
}

/*
 * The segment's verdict on its connection's window w (NULL: none kept, liberal), with the idle time's limits; the
 * window moved where it passes. Verified apart: netfilter's checks and the options' walk, once.
 */
XNF_VERIFIED_APART __u32 xnf__ct_in_window(struct xnf_ct_window *w, xnf__ct_frame *frame, __u64 seq_ack,
					   __u64 tcp_seg, __u32 info)
{
	__u32 old_state = (info >> XNF__CT_INFO_STATE_SHIFT) & 0xf, verdict = XNF__CT_WINDOW_ACCEPT, checked;
	__u64 seg = xnf__ct_window_seg(seq_ack, tcp_seg);
	int skip = 0;

	if (!w || !frame || !(info & XNF__CT_INFO_CHECK))
		return XNF__CT_WINDOW_ACCEPT;
	if (info & XNF__CT_INFO_IGNORED) {
		xnf__ct_window_note_ignored(w, seq_ack, seg, info);
		return XNF__CT_WINDOW_IGNORE;
	}
	if (info & XNF__CT_INFO_RST_CLOSES) {
		verdict = xnf__ct_rst_checks(w, (__u32)(seq_ack >> 32), (__u32)seq_ack, info, old_state, &skip);
		if (verdict == XNF__CT_WINDOW_INVALID)
			return verdict;
	}
	if (!skip) {
		checked = xnf__ct_window_check(w, frame, seq_ack, seg, info);
		if (checked != XNF__CT_WINDOW_ACCEPT)
			return checked;
	}
	xnf__ct_window_note_last(w, info);
	return verdict | xnf__ct_window_caps(w);
}

/*
 * A new connection's window from its first segment, packed for xnf__ct_window_open (the entry is made when the
 * frame passes). Verified apart: it reads a SYN's options. 0 where the segment is not TCP.
 */
XNF_VERIFIED_APART __u64 xnf__ct_window_first(xnf__ct_frame *frame, __u64 seq_ack, __u64 tcp_seg)
{
	__u64 seg = xnf__ct_window_seg(seq_ack, tcp_seg), open;
	__u32 flags = (__u32)(seg >> 8) & 0xff, info = xnf__ct_tcp_seg_info(tcp_seg, 0), optlen = (__u32)seg & 0x3f;
	__u64 found = 0;

	if (!frame)
		return 0;
	open = XNF__CT_OPEN_VALID | (seg >> 32) | ((seg >> 16) & 0xffff) << 32;
	if (info & XNF__CT_INFO_SENDER)
		open |= XNF__CT_OPEN_OPENER;
	if (flags & XNF__CT_SYN) {
		if (optlen)
			found = xnf__ct_read_options(frame, info >> XNF__CT_INFO_OPTIONS_SHIFT, optlen, 0, 0);
		open |= XNF__CT_OPEN_SYN | (__u64)XNF__CT_FOUND_SCALE(found) << 48 |
			(__u64)XNF__CT_FOUND_FLAGS(found) << 52;
	}
	return open;
}

/* The window of a connection that has just entered the table, from xnf__ct_window_first's answer: a SYN's end as
 * tcp_new sets it (and its first segment's effect on the other end's bound), a picked-up one's liberal. */
static __always_inline void xnf__ct_window_open(struct xnf_ct_window *w, __u64 open)
{
	__u32 end = (__u32)open, win = (__u32)(open >> 32) & 0xffff, s = (open & XNF__CT_OPEN_OPENER) ? 1 : 0;
	struct xnf_ct_window_side *sender = &w->side[s], *receiver = &w->side[s ^ 1];

	__builtin_memset(w, 0, sizeof(*w));
	sender->end = end;
	sender->maxwin = win ? win : 1;
	if (open & XNF__CT_OPEN_SYN) {
		sender->maxend = end;
		sender->scale = (__u8)((open >> 48) & 0xf);
		sender->flags = (__u8)((open >> 52) & (XNF_CT_WINDOW_SCALE | XNF_CT_WINDOW_SACK_PERM));
		receiver->maxend = win + (win == 0);   /* the SYN acknowledges nothing: its window from 0 */
	} else {
		sender->maxend = end + sender->maxwin;
		sender->flags = XNF_CT_WINDOW_SACK_PERM | XNF_CT_WINDOW_LIBERAL;
		receiver->flags = XNF_CT_WINDOW_SACK_PERM | XNF_CT_WINDOW_LIBERAL;
	}
	if (open & XNF__CT_OPEN_LIBERAL) {
		sender->flags |= XNF_CT_WINDOW_LIBERAL;
		receiver->flags |= XNF_CT_WINDOW_LIBERAL;
	}
	w->last_index = 1 + ((open & XNF__CT_OPEN_SYN) ? 0 : 3);
	w->last_side = (__u8)s;
}

#endif /* XNF_CONNTRACK_WINDOW_H */
