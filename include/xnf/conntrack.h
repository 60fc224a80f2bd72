/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Connection tracking for any NF, the same on both paths, with netfilter's states (docs/conntrack.md):
 *
 *   XNF_CT_TABLE(fw_ct, 262144);                 the table and its idle times (fw_ct_timeouts), in the NF's source
 *   struct xnf_ct ct;
 *   __u32 state = xnf_ct_track(fw_ct, &h, &t, pkt, &ct);   XNF_CT_NEW, _ESTABLISHED, _RELATED, _INVALID, _UNTRACKED
 *   ... the NF decides by it ...
 *   int room = xnf_ct_confirm(fw_ct, &ct);      a new connection enters the table only with a frame that passes
 *   room < 0: drop and count (the table is full of answered connections); room > 0: it took the place of the oldest
 *           connection never answered (count it)
 *   xnf_ct_sweep(maps, "fw_ct", &cursor)         in the NF's housekeeping (<xnf/conntrack_sweep.h>)
 *
 * As netfilter: a connection's first frame is new and so is every frame its opener sends until the other side
 * answers; the answer and everything after it are established; an ICMP error about a tracked connection is related;
 * a frame no state admits is invalid (TCP's transitions are netfilter's table, with its pick-up of connections
 * already under way); neighbour discovery and multicast listener frames are untracked. An existing connection's
 * state moves with every frame, passed or not (netfilter tracks before its filter); a new one is kept only if its
 * frame passes (netfilter confirms on the way out). TCP's windows are tracked as netfilter's tcp_in_window tracks
 * them, in a map beside the table (<xnf/conntrack_window.h>). A datagram's later IP fragments carry no ports: they go
 * as its first fragment went (the fragment cache below), and take its ports in t.
 *
 * One entry per connection, keyed by its two endpoints in a fixed order, so both directions find it with one lookup.
 * An entry idle past its state's time is over: the next frame treats it as absent and the sweeper frees it. A full
 * table makes room as netfilter's does (its early drop): the oldest connection that was never answered gives its
 * entry to the new one; answered connections keep theirs, and where every entry is answered the new connection is
 * refused (xnf_ct_confirm fails). The table remembers its newest connections' keys in order, as many as it has
 * entries (a ring beside it: 40 bytes an entry), to find the oldest unanswered one without a search.
 */
#ifndef XNF_CONNTRACK_H
#define XNF_CONNTRACK_H

#include <xnf/common.h>
#include <xnf/maps.h>
#include <xnf/parse.h>
#include <xnf/helpers.h>
#include <xnf/csum.h>
#include <xnf/frame_bytes.h>

/* What a frame is to its connection: one bit each, so that a rule can name several. */
enum xnf_ct_state {
	XNF_CT_NEW = 1,
	XNF_CT_ESTABLISHED = 2,
	XNF_CT_RELATED = 4,
	XNF_CT_INVALID = 8,
	XNF_CT_UNTRACKED = 16,
};
#define XNF_CT_STATES 5

/* TCP's states as netfilter numbers them; past XNF_TCP_NSTATES, what a frame can lead to besides a state. */
enum xnf_ct_tcp {
	XNF_TCP_NONE,
	XNF_TCP_SYN_SENT,
	XNF_TCP_SYN_RECV,
	XNF_TCP_ESTABLISHED,
	XNF_TCP_FIN_WAIT,
	XNF_TCP_CLOSE_WAIT,
	XNF_TCP_LAST_ACK,
	XNF_TCP_TIME_WAIT,
	XNF_TCP_CLOSE,
	XNF_TCP_SYN_SENT2,
	XNF_TCP_NSTATES,
	XNF_TCP_INVALID = XNF_TCP_NSTATES,
	XNF_TCP_IGNORE,
};

/* The idle times' slots in the table's timeouts array (seconds; 0: the default below). TCP's are its states'. */
enum xnf_ct_timeout {
	XNF_CT_TIMEOUT_UDP = XNF_TCP_NSTATES,  /* a UDP flow not yet a stream */
	XNF_CT_TIMEOUT_UDP_STREAM,             /* a stream: assured */
	XNF_CT_TIMEOUT_ICMP,
	XNF_CT_TIMEOUT_GENERIC,                /* any other protocol */
	XNF_CT_TIMEOUT_TCP_RETRANS,            /* at most, after max_retrans retransmissions or a zero window */
	XNF_CT_TIMEOUT_TCP_UNACK,              /* at most, while data is unacknowledged (or a pick-up unanswered) */
	XNF_CT_NTIMEOUTS,
};

/* The table's settings besides its idle times, in the same map after them (its "_timeouts"). */
enum xnf_ct_setting {
	XNF_CT_SETTING_LIBERAL = XNF_CT_NTIMEOUTS,   /* 1: TCP windows are not checked (be_liberal) */
	XNF_CT_NSLOTS,
};

/* netfilter's defaults, in seconds (nf_conntrack_*_timeout*), by slot. A table, not a switch: the data path reads it
 * with one load, where a switch's every case was a path the verifier followed. */
static const __u32 xnf__ct_default_timeouts_s[XNF_CT_NTIMEOUTS] = {
	[XNF_TCP_NONE] = 600,
	[XNF_TCP_SYN_SENT] = 120,
	[XNF_TCP_SYN_RECV] = 60,
	[XNF_TCP_ESTABLISHED] = 432000,
	[XNF_TCP_FIN_WAIT] = 120,
	[XNF_TCP_CLOSE_WAIT] = 60,
	[XNF_TCP_LAST_ACK] = 30,
	[XNF_TCP_TIME_WAIT] = 120,
	[XNF_TCP_CLOSE] = 10,
	[XNF_TCP_SYN_SENT2] = 120,
	[XNF_CT_TIMEOUT_UDP] = 30,
	[XNF_CT_TIMEOUT_UDP_STREAM] = 120,
	[XNF_CT_TIMEOUT_ICMP] = 30,
	[XNF_CT_TIMEOUT_GENERIC] = 600,
	[XNF_CT_TIMEOUT_TCP_RETRANS] = 300,
	[XNF_CT_TIMEOUT_TCP_UNACK] = 300,
};

static __always_inline __u32 xnf_ct_default_timeout_s(__u32 slot)
{
	return slot < XNF_CT_NTIMEOUTS ? xnf__ct_default_timeouts_s[slot] : 600;
}

/* A connection: its endpoints, the lower (address, then port) first. An ICMP query's identifier stands for both ports,
 * and which end asked is part of it (querier: 1 + its index): the other end's query with the same identifier is a
 * connection of its own, as netfilter's tuples (type and direction) make it. */
struct xnf_ct_key {
	__u8 family;
	__u8 proto;
	__u16 querier;
	__be16 port[2];
	__be32 addr[2][4];
};

struct xnf_ct_entry {
	__u64 last_seen_ns;  /* CLOCK_MONOTONIC at a recent tick (xnf_now_coarse_ns), on both paths */
	union {
		__u8 tcp_state;  /* TCP: enum xnf_ct_tcp */
		__u8 udp_born;   /* UDP: its first frame's time in XNF__CT_UDP_UNIT_SHIFT units, the low byte */
	};
	__u8 opener;         /* the endpoint (index in the key) whose frame opened it: its frames go the original way */
	__u8 seen_reply;     /* XNF_CT_REPLIED: the other endpoint has sent; XNF_CT_ASSURED: as netfilter's IPS_ASSURED */
	__u8 nf_note;        /* the NF's own, with nf_epoch: zero when the connection enters (the acl keeps its */
	__u32 nf_epoch;      /* rules' decision for each direction there) */
};

/*
 * The bits of an entry's seen_reply (one byte since the first entries were kept: a kept table stays readable).
 * ASSURED as netfilter sets it: TCP at an ESTABLISHED segment after the answer was seen, from SYN_RECV or from
 * ESTABLISHED (a connection picked up); UDP at a frame after the answer and more than 2 s after the first (a stream,
 * below), which gives it udp_stream's time.
 * Each is set by whichever frame finds it missing, so a bit two CPUs lose to each other is set by the next frame.
 */
#define XNF_CT_REPLIED 1
#define XNF_CT_ASSURED 2
#define XNF_CT_UDP_LASTED 4   /* UDP: a frame came more than XNF__CT_UDP_STREAM_UNITS after the first */
/* TCP: limits on the idle time its window sets (<xnf/conntrack_window.h>), as netfilter shortens a connection's
 * timeout: tcp_unacknowledged while data is unacknowledged, tcp_max_retrans after retransmissions or a zero window,
 * tcp_close after a RST that left the state as it was. */
#define XNF_CT_CAP_UNACKED 8
#define XNF_CT_CAP_RETRANS 16
#define XNF_CT_CAP_CLOSE 32
#define XNF_CT_CAPS (XNF_CT_CAP_UNACKED | XNF_CT_CAP_RETRANS | XNF_CT_CAP_CLOSE)

/*
 * netfilter makes an answered UDP flow a stream (assured, udp_stream's time) at its first frame more than 2 s after
 * its first one. The entry keeps that first frame's time in one byte of 2^28 ns (0.27 s) units, and the first frame
 * found past the 2 s sets XNF_CT_UDP_LASTED for good: the byte wraps after 68 s, but an unassured flow's frames come
 * at most its idle time (udp, 30 s) apart, or it is over, so the frame that sets the bit reads the byte before it
 * wraps. (An udp time above 66 s makes a wrap possible: the flow is then a stream a frame later.) The 2 s are taken
 * to the unit: a frame 1.9-2.2 s on may fall either side.
 */
#define XNF__CT_UDP_UNIT_SHIFT 28
#define XNF__CT_UDP_STREAM_UNITS 7   /* more than 7 units of 0.268 s: 2 s, to the unit */

static __always_inline __u8 xnf__ct_udp_units(__u64 now)
{
	return (__u8)(now >> XNF__CT_UDP_UNIT_SHIFT);
}

/* One frame's tracking, from xnf_ct_track to xnf_ct_confirm. */
struct xnf_ct {
	struct xnf_ct_key key;
	struct xnf_ct_entry entry;  /* what confirm writes */
	struct xnf_ct_entry found;  /* the connection's entry as this frame left it, where the table holds one */
	__u8 state;                 /* enum xnf_ct_state (one bit of XNF_CT_STATES) */
	__u8 creates;               /* confirm writes a new entry (over one that is over, if any) */
	__u8 sender;                /* the frame's sender: its endpoint's index in the key */
	__u8 in_table;              /* found is the table's entry */
	__u8 ends;                  /* the frame ends its connection at once: the entry goes (a RST as its only answer) */
	__u8 fragment;              /* XNF__CT_LATER_FRAGMENT: the fragment cache's answer decides */
	__u8 fragment_unmatched;    /* a later fragment found no first fragment of its datagram: invalid */
	__u8 bad_checksum;          /* a segment that would move its connection has a wrong checksum: invalid */
	__u64 window_open;          /* a new TCP connection's window, for confirm (xnf__ct_window_first's answer) */
};

/* The ring of the newest connections' keys: where the next is written, and where the search for one to drop goes on. */
struct xnf_ct_ring_ends {
	__u64 head;
	__u64 tail;
};

/* How many of the oldest remembered connections a full table looks at for one never answered, before it refuses. */
#define XNF_CT_EARLY_DROP_TRIES 8

/* The table's other maps are its name and these (name##_... below). --map-size gives the ring the table's size, and
 * the data path reads the ring's size from the map (xnf_map_capacity), so the two stay in step; the idle times and
 * the ring's ends have fixed sizes. */
#define XNF_CT_RING_SUFFIX "_newest"
#define XNF_CT_TIMEOUTS_SUFFIX "_timeouts"
#define XNF_CT_RING_ENDS_SUFFIX "_newest_ends"

#define XNF_CT_FRAGMENTS_SUFFIX "_fragments"

/*
 * The fragment cache: a datagram's later fragments carry no ports, so its first fragment leaves its ports and its
 * state in a slot, chosen by a hash of the datagram's addresses, protocol and identification (what Cilium's fragment
 * map keys on), and each later fragment takes them from there: it is tracked as its first fragment was, changes no
 * entry, and an NF's rules read it with its datagram's ports. netfilter reassembles the datagram instead, which the
 * fast path does not do. A slot holds one datagram: the newest first fragment that hashed to it. A later fragment that
 * finds no slot of its datagram (it came before its first fragment, another datagram's first fragment took the slot,
 * or the datagram is older than netfilter's reassembly time) is invalid and says so (ct->fragment_unmatched).
 */
struct xnf_ct_fragment {
	__u64 seen_ns;      /* the first fragment's time */
	__be32 src[4];
	__be32 dst[4];
	__u32 id;           /* as the frame holds it */
	__u8 family;
	__u8 proto;
	__be16 sport;
	__be16 dport;
	__u8 state;         /* the first fragment's (enum xnf_ct_state) */
	__u8 pad;
};

#define XNF_CT_FRAGMENT_SLOTS 4096
/* netfilter's ipfrag_time and ip6frag_time: how long it waits for a datagram's fragments. */
#define XNF_CT_FRAGMENT_TIME_IPV4_NS (30 * 1000000000ull)
#define XNF_CT_FRAGMENT_TIME_IPV6_NS (60 * 1000000000ull)

/* A later fragment, left by the tracker for the fragment cache's answer (ct->fragment). */
#define XNF__CT_LATER_FRAGMENT 2

/*
 * The table's maps, and its fragment cache's one function, verified apart (once, not on every path of the NF that
 * leads to it: on Linux 6.1 the acl went past the verifier's million instructions and its 512 bytes of stack with it
 * inline). It answers in one scalar: a later fragment's datagram's state and ports (XNF__CT_FRAGMENT_FOUND), or 0.
 */
#define XNF_CT_TABLE(name, max_entries)                                                                      \
	XNF_MAP_HASH(name, struct xnf_ct_key, struct xnf_ct_entry, max_entries);                              \
	XNF_MAP_ARRAY(name##_timeouts, __u32, XNF_CT_NSLOTS);                                                 \
	XNF_MAP_ARRAY(name##_newest, struct xnf_ct_key, max_entries);                                         \
	XNF_MAP_ARRAY(name##_newest_ends, struct xnf_ct_ring_ends, 1);                                        \
	XNF_MAP_ARRAY(name##_fragments, struct xnf_ct_fragment, XNF_CT_FRAGMENT_SLOTS);                       \
	XNF_MAP_HASH(name##_windows, struct xnf_ct_key, struct xnf_ct_window, max_entries);                   \
	XNF_VERIFIED_APART __u64 name##_fragment(const struct xnf_5tuple *t, __u32 id, __u32 state, __u32 later, \
						 __u32 more)                                                  \
	{                                                                                                     \
		return xnf__ct_fragment(&name##_fragments, t, id, state, later, more);                        \
	}                                                                                                     \
	XNF_VERIFIED_APART __u64 name##_fragment(const struct xnf_5tuple *t, __u32 id, __u32 state, __u32 later, \
						 __u32 more)

#define xnf_ct_track(table, h, t, pkt, ct)                                                                    \
	(xnf__ct_track(&table, &table##_timeouts, &table##_windows, h, t, pkt, ct),                             \
	 xnf__ct_after_fragment(table##_fragment(t, (h)->fragment_id, (ct)->state, (h)->is_fragment,           \
						 (h)->more_fragments), t, ct))
/* The table's entry of the frame's connection, to write the NF's own fields (nf_note, nf_epoch); NULL: none. */
#define xnf_ct_entry(table, ct) ((struct xnf_ct_entry *)xnf_map_lookup(&table, &(ct)->key))
#define xnf_ct_confirm(table, ct)                                                                       \
	xnf__ct_confirm(&table, &table##_newest, &table##_newest_ends, &table##_windows, &table##_timeouts,   \
			xnf_map_capacity(&table##_newest), ct)

/* TCP flags as in the header's 14th byte. */
#define XNF__CT_FIN 0x01
#define XNF__CT_SYN 0x02
#define XNF__CT_RST 0x04
#define XNF__CT_ACK 0x10

#include <xnf/conntrack_window.h>

static __always_inline __u64 xnf__ct_timeout_ns(void *timeouts, __u32 slot)
{
	__u32 *seconds = xnf_map_lookup(timeouts, &slot);
	__u32 s = seconds && *seconds ? *seconds : xnf_ct_default_timeout_s(slot);

	return (__u64)s * 1000000000ull;
}

static __always_inline __u32 xnf__ct_timeout_slot(const struct xnf_ct_key *k, const struct xnf_ct_entry *e)
{
	if (k->proto == IPPROTO_TCP)
		return e->tcp_state;
	if (k->proto == IPPROTO_UDP)
		return e->seen_reply & XNF_CT_ASSURED ? XNF_CT_TIMEOUT_UDP_STREAM : XNF_CT_TIMEOUT_UDP;
	if (k->proto == IPPROTO_ICMP || k->proto == IPPROTO_ICMPV6)
		return XNF_CT_TIMEOUT_ICMP;
	return XNF_CT_TIMEOUT_GENERIC;
}

/* The idle time that limits the state's, where one does (XNF_CT_NTIMEOUTS: none), in netfilter's order: the
 * retransmissions', a RST's, unacknowledged data's (or a connection picked up and not yet answered). */
static __always_inline __u32 xnf__ct_cap_slot(const struct xnf_ct_key *k, const struct xnf_ct_entry *e)
{
	if (k->proto != IPPROTO_TCP)
		return XNF_CT_NTIMEOUTS;
	if (e->seen_reply & XNF_CT_CAP_RETRANS)
		return XNF_CT_TIMEOUT_TCP_RETRANS;
	if (e->seen_reply & XNF_CT_CAP_CLOSE)
		return XNF_TCP_CLOSE;
	if ((e->seen_reply & XNF_CT_CAP_UNACKED) ||
	    (e->tcp_state == XNF_TCP_ESTABLISHED && !(e->seen_reply & XNF_CT_REPLIED)))
		return XNF_CT_TIMEOUT_TCP_UNACK;
	return XNF_CT_NTIMEOUTS;
}

/* The entry's idle time from the idle times by slot (ns), the shorter of its state's and its limit's. */
static __always_inline __u64 xnf__ct_idle_time(__u64 state_ns, __u64 cap_ns)
{
	return cap_ns < state_ns ? cap_ns : state_ns;
}

static __always_inline int xnf__ct_over(void *timeouts, const struct xnf_ct_key *k, const struct xnf_ct_entry *e,
					__u64 now)
{
	return xnf_idle_past(now, e->last_seen_ns, xnf__ct_timeout_ns(timeouts, xnf__ct_timeout_slot(k, e)));
}

/* Whether endpoint (a, pa) sorts before or with (b, pb). */
static __always_inline int xnf__ct_lower(const __be32 *a, __be16 pa, const __be32 *b, __be16 pb)
{
	for (int i = 0; i < 4; i++) {
		__u32 x = bpf_ntohl(a[i]), y = bpf_ntohl(b[i]);

		if (x != y)
			return x < y;
	}
	return bpf_ntohs(pa) <= bpf_ntohs(pb);
}

/* The key of the connection between (src, sport) and (dst, dport); returns the sender's index in it. */
static __always_inline __u8 xnf__ct_make_key(struct xnf_ct_key *k, __u8 family, __u8 proto, const __be32 *src,
					     __be16 sport, const __be32 *dst, __be16 dport)
{
	__u8 sender = xnf__ct_lower(src, sport, dst, dport) ? 0 : 1;
	const __be32 *low = sender ? dst : src, *high = sender ? src : dst;

	/* Constant indexes only: the verifier refuses a computed offset into the stack. */
	__builtin_memset(k, 0, sizeof(*k));
	k->family = family;
	k->proto = proto;
	k->port[0] = sender ? dport : sport;
	k->port[1] = sender ? sport : dport;
	__builtin_memcpy(k->addr[0], low, 16);
	__builtin_memcpy(k->addr[1], high, 16);
	return sender;
}

/* netfilter's row for a segment: RST before SYN (with ACK: SYN/ACK) before FIN before ACK; else none. */
static __always_inline __u32 xnf__ct_tcp_index(__u8 flags)
{
	if (flags & XNF__CT_RST)
		return 4;
	if (flags & XNF__CT_SYN)
		return flags & XNF__CT_ACK ? 1 : 0;
	if (flags & XNF__CT_FIN)
		return 2;
	return flags & XNF__CT_ACK ? 3 : 5;
}

/*
 * netfilter's TCP transitions: one row per direction and segment (reply * 6 + xnf__ct_tcp_index), one nibble per
 * current state (NONE lowest, then SYN_SENT, SYN_RECV, ESTABLISHED, FIN_WAIT, CLOSE_WAIT, LAST_ACK, TIME_WAIT, CLOSE,
 * SYN_SENT2) holding the next state, or 0xa invalid, 0xb ignore. The comments list them in that order. A table, not
 * a switch, for the verifier (as the idle times above).
 */
static const __u64 xnf__ct_tcp_rows[12] = {
	0x911bbbbb11ull,  /* opener's syn:    SS SS IG IG IG IG IG SS SS S2 */
	0x2aaaaaa2aaull,  /* opener's synack: IV IV SR IV IV IV IV IV IV SR */
	0xa8766644aaull,  /* opener's fin:    IV IV FW FW LA LA LA TW CL IV */
	0xa8775533a3ull,  /* opener's ack:    ES IV ES ES CW CW TW TW CL IV */
	0x888888888aull,  /* opener's rst:    IV CL CL CL CL CL CL CL CL CL */
	0xaaaaaaaaaaull,  /* none of these:   IV */
	0x9a1aaaaa9aull,  /* answer's syn:    IV S2 IV IV IV IV IV SS IV S2 */
	0x2bbbbbbb2aull,  /* answer's synack: IV SR IG IG IG IG IG IG IG SR */
	0xa8766644aaull,  /* answer's fin:    IV IV FW FW LA LA LA TW CL IV */
	0xb8775532baull,  /* answer's ack:    IV IG SR ES CW CW TW TW CL IG */
	0x888888888aull,  /* answer's rst:    IV CL CL CL CL CL CL CL CL CL */
	0xaaaaaaaaaaull,  /* none of these:   IV */
};

static __always_inline __u32 xnf__ct_tcp_next(__u32 reply, __u32 index, __u32 state)
{
	__u32 row = reply * 6 + index;

	if (row >= 12 || state >= XNF_TCP_NSTATES)
		return XNF_TCP_INVALID;
	return (__u32)(xnf__ct_tcp_rows[row] >> (4 * state)) & 0xf;
}

/* The flag combinations netfilter lets through, PSH, ECE and CWR taken off first: any other is invalid before any
 * state. */
static __always_inline int xnf__ct_tcp_flags_valid(__u8 flags)
{
	const __u64 valid = 1ull << 0x02 | 1ull << 0x22 | 1ull << 0x12 | 1ull << 0x04 | 1ull << 0x14 | 1ull << 0x11 |
			    1ull << 0x31 | 1ull << 0x10 | 1ull << 0x30;
	/* SYN, SYN|URG, SYN|ACK, RST, RST|ACK, FIN|ACK, FIN|ACK|URG, ACK, ACK|URG */

	return (valid >> (flags & 0x37)) & 1;
}

/* The other endpoint's frame noted, written only where it changes the byte. */
static __always_inline void xnf__ct_note_reply(struct xnf_ct_entry *e, __u8 sender)
{
	if (sender != e->opener && !(e->seen_reply & XNF_CT_REPLIED))
		e->seen_reply |= XNF_CT_REPLIED;
}

/* Assured, where the frame comes after the answer (e as the frame found it) and is not yet. */
static __always_inline void xnf__ct_assure(struct xnf_ct_entry *e)
{
	if ((e->seen_reply & (XNF_CT_REPLIED | XNF_CT_ASSURED)) == XNF_CT_REPLIED)
		e->seen_reply |= XNF_CT_ASSURED;
}

/* A UDP frame on its flow's entry: a stream (assured) where it comes after the answer and 2 s after the first frame. */
static __always_inline void xnf__ct_udp_stream(struct xnf_ct_entry *e, __u64 now)
{
	if (!(e->seen_reply & XNF_CT_UDP_LASTED) &&
	    (__u8)(xnf__ct_udp_units(now) - e->udp_born) > XNF__CT_UDP_STREAM_UNITS)
		e->seen_reply |= XNF_CT_UDP_LASTED;
	if (e->seen_reply & XNF_CT_UDP_LASTED)
		xnf__ct_assure(e);
}

/* A frame of the connection in the table: its last use and its answer noted, and the frame's state. Only what changes
 * is written, as xnf_stamp does: the two directions of a connection often run on two CPUs. */
static __always_inline void xnf__ct_touch(struct xnf_ct *ct, struct xnf_ct_entry *e, __u8 sender, __u64 now)
{
	xnf_stamp(&e->last_seen_ns, now);
	xnf__ct_note_reply(e, sender);
	ct->state = e->seen_reply & XNF_CT_REPLIED ? XNF_CT_ESTABLISHED : XNF_CT_NEW;
	ct->found = *e;
	ct->in_table = 1;
}

/* The window's limits on the idle time, written only where they change. */
static __always_inline void xnf__ct_set_caps(struct xnf_ct_entry *e, __u32 caps)
{
	__u8 now = (__u8)((e->seen_reply & ~XNF_CT_CAPS) | (caps & XNF_CT_CAPS));

	if (e->seen_reply != now)
		e->seen_reply = now;
}

/* What the window needs to know of the connection besides the segment (XNF__CT_INFO_*). */
static __always_inline __u32 xnf__ct_window_info(const struct xnf_ct_entry *e, __u32 reply)
{
	__u32 info = (__u32)e->tcp_state << XNF__CT_INFO_STATE_SHIFT | (reply ? XNF__CT_INFO_REPLY : 0);

	if (e->seen_reply & XNF_CT_REPLIED)
		info |= XNF__CT_INFO_REPLIED;
	if (e->seen_reply & XNF_CT_ASSURED) {
		info |= XNF__CT_INFO_ASSURED;
		if (e->tcp_state == XNF_TCP_ESTABLISHED)
			info |= XNF__CT_INFO_ESTABLISHED;
	}
	return info;
}

/* What xnf__ct_tcp_apply answers: the frame's state (enum xnf_ct_state) and these. */
#define XNF__CT_TCP_IN_TABLE 0x100   /* the entry is the frame's connection's (ct->found) */
#define XNF__CT_TCP_ENDS 0x200       /* the entry goes at once: a RST as its connection's only answer */
#define XNF__CT_TCP_REOPENS 0x400    /* a SYN on a closed connection's ports: a new connection */

/* The frame's state on an entry, its answer noted: new until the other end has answered. */
static __always_inline __u32 xnf__ct_tcp_state_of(struct xnf_ct_entry *e, __u8 sender)
{
	xnf__ct_note_reply(e, sender);
	return (e->seen_reply & XNF_CT_REPLIED ? XNF_CT_ESTABLISHED : XNF_CT_NEW) | XNF__CT_TCP_IN_TABLE;
}

/* What xnf__ct_tcp_judge answers: the segment's fate decided (the answer in the low bits), or what the window is
 * to check (XNF__CT_INFO_*) and the state the table gives the segment, for xnf__ct_tcp_apply. */
#define XNF__CT_JUDGED_FINAL (1ull << 63)
#define XNF__CT_JUDGED_NEXT(judged) ((__u32)((judged) >> 32) & 0xf)

/*
 * A TCP segment on its connection's entry e, its numbers in seq_ack and seg (XNF__CT_TCP_SEG), by netfilter's table
 * first: what the window must check, or the segment's fate where the table decides it alone. Its window
 * (xnf__ct_in_window) and the entry's update (xnf__ct_tcp_apply) follow. Three functions verified apart, each
 * answering in a scalar, called one after the other: inline, each outcome was a path the verifier followed through
 * the whole NF, past Linux's million instructions, and one calling the next took the stack past its 512 bytes.
 *
 * A segment netfilter's table ignores (a SYN/ACK again after the handshake, a SYN again in SYN_RECV, the answer's ACK
 * in SYN_SENT: its entry may be out of step with the two ends, and the segment may be what puts them in step), and one
 * the window ignores, go with their connection, as netfilter passes them (new, or established once answered), and
 * change nothing of the entry but that the other end has answered; their idle time is not renewed either. A RST on a
 * connection never answered (its SYN refused, or given up) passes with it, and the entry goes at once, as netfilter
 * deletes it: a later segment of the same ports finds nothing to belong to.
 */
XNF_VERIFIED_APART __u64 xnf__ct_tcp_judge(const struct xnf_ct_entry *e, __u64 seg)
{
	__u8 sender = XNF__CT_TCP_SEG_SENDER(seg), flags = XNF__CT_TCP_SEG_FLAGS(seg);
	__u32 index = xnf__ct_tcp_index(flags), reply, next, info;

	if (!e)
		return XNF__CT_JUDGED_FINAL | XNF_CT_INVALID;
	reply = sender != e->opener;
	next = xnf__ct_tcp_next(reply, index, e->tcp_state);
	/* A SYN after the close: a new connection on the same ports (RFC 1122's reuse), from the opener after TIME_WAIT
	 * or CLOSE, from the answerer after TIME_WAIT. Like netfilter, which drops the old entry and looks again: the
	 * SYN's sender opens the new one, so an outside answerer's SYN is new, not established. */
	if (index == 0 && next == XNF_TCP_SYN_SENT &&
	    (e->tcp_state == XNF_TCP_TIME_WAIT || e->tcp_state == XNF_TCP_CLOSE))
		return XNF__CT_JUDGED_FINAL | XNF__CT_TCP_REOPENS;
	info = xnf__ct_window_info(e, reply) | xnf__ct_tcp_seg_info(seg, index) | XNF__CT_INFO_CHECK;
	if (next == XNF_TCP_IGNORE)
		return info | XNF__CT_INFO_IGNORED;
	if (index == 4 && !(e->seen_reply & XNF_CT_REPLIED))
		return XNF__CT_JUDGED_FINAL | (sender == e->opener ? XNF_CT_NEW : XNF_CT_ESTABLISHED) |
		       XNF__CT_TCP_IN_TABLE | XNF__CT_TCP_ENDS;
	if (next >= XNF_TCP_NSTATES)
		return XNF__CT_JUDGED_FINAL | XNF_CT_INVALID;
	if (index == 4 && next == XNF_TCP_CLOSE)
		info |= XNF__CT_INFO_RST_CLOSES;
	return (__u64)next << 32 | info;
}

/* The entry moved by the segment the table judged and the window gave its verdict on: the answer (XNF__CT_TCP_*). */
XNF_VERIFIED_APART __u32 xnf__ct_tcp_apply(struct xnf_ct_entry *e, __u64 judged, __u32 verdict)
{
	__u8 sender = (judged & XNF__CT_INFO_SENDER) ? 1 : 0;
	__u32 next = XNF__CT_JUDGED_NEXT(judged);

	if (!e)
		return XNF_CT_INVALID;
	if (judged & XNF__CT_JUDGED_FINAL)
		return (__u32)judged;
	if ((judged & XNF__CT_INFO_IGNORED) || (verdict & XNF__CT_WINDOW_VERDICT) == XNF__CT_WINDOW_IGNORE)
		return xnf__ct_tcp_state_of(e, sender);
	if ((verdict & XNF__CT_WINDOW_VERDICT) == XNF__CT_WINDOW_INVALID)
		return XNF_CT_INVALID;
	if ((verdict & XNF__CT_WINDOW_VERDICT) == XNF__CT_WINDOW_KEEP_STATE) {
		next = e->tcp_state;
		verdict |= XNF_CT_CAP_CLOSE << XNF__CT_WINDOW_CAPS_SHIFT;
	}
	xnf__ct_set_caps(e, verdict >> XNF__CT_WINDOW_CAPS_SHIFT);
	if (next == XNF_TCP_ESTABLISHED && (e->tcp_state == XNF_TCP_SYN_RECV || e->tcp_state == XNF_TCP_ESTABLISHED))
		xnf__ct_assure(e);
	if (e->tcp_state != next)
		e->tcp_state = (__u8)next;
	xnf_stamp(&e->last_seen_ns, xnf_now_coarse_ns());
	return xnf__ct_tcp_state_of(e, sender);
}

/* A TCP segment on its connection's entry (NULL: none), its numbers in seq_ack and seg (XNF__CT_TCP_SEG). Sets
 * ct->state, and what confirm writes. */
static __always_inline void xnf__ct_tcp(struct xnf_ct *ct, struct xnf_ct_entry *e, void *windows, xnf__ct_frame *frame,
					__u64 seq_ack, __u64 seg, __u64 now)
{
	__u8 sender = XNF__CT_TCP_SEG_SENDER(seg), flags = XNF__CT_TCP_SEG_FLAGS(seg);
	__u32 next, answer;

	if (!xnf__ct_tcp_flags_valid(flags)) {
		ct->state = XNF_CT_INVALID;
		return;
	}
	if (e) {
		__u64 judged = xnf__ct_tcp_judge(e, seg);
		__u32 verdict = xnf__ct_in_window(xnf_map_lookup(windows, &ct->key), frame, seq_ack, seg, (__u32)judged);

		answer = xnf__ct_tcp_apply(e, judged, verdict);
		if (!(answer & XNF__CT_TCP_REOPENS)) {
			ct->state = (__u8)answer;
			ct->ends = (answer & XNF__CT_TCP_ENDS) != 0;
			if (answer & XNF__CT_TCP_IN_TABLE) {
				ct->found = *e;
				ct->in_table = 1;
			}
			return;
		}
	}
	next = xnf__ct_tcp_next(0, xnf__ct_tcp_index(flags), XNF_TCP_NONE);
	if (next >= XNF_TCP_NSTATES) {
		ct->state = XNF_CT_INVALID;
		return;
	}
	ct->state = XNF_CT_NEW;
	ct->creates = 1;
	ct->entry.tcp_state = (__u8)next;
	ct->entry.opener = sender;
	ct->entry.last_seen_ns = now;
	ct->window_open = xnf__ct_window_first(frame, seq_ack, seg);
}

/* A frame of a protocol without states: new until answered. Only `opens` frames may start one. */
static __always_inline void xnf__ct_stateless(struct xnf_ct *ct, struct xnf_ct_entry *e, __u8 sender, int opens,
					      __u64 now)
{
	if (!e) {
		if (!opens) {
			ct->state = XNF_CT_INVALID;
			return;
		}
		ct->state = XNF_CT_NEW;
		ct->creates = 1;
		ct->entry.opener = sender;
		ct->entry.last_seen_ns = now;
		return;
	}
	xnf__ct_touch(ct, e, sender, now);
}

/* The entry of key in force now, or NULL. */
static __always_inline struct xnf_ct_entry *xnf__ct_find(void *table, void *timeouts, const struct xnf_ct_key *k,
							 __u64 now)
{
	struct xnf_ct_entry *e = xnf_map_lookup(table, k);

	return e && !xnf__ct_over(timeouts, k, e, now) ? e : 0;
}

/* ICMP's queries and their answers, as netfilter pairs them (echo, timestamp, information, address mask; ICMPv6's
 * echo and node information): each query type's answer is the next type (ICMP) or the next type up (ICMPv6). */
static __always_inline int xnf__ct_icmp_query(__u8 family, __u8 type, int *query)
{
	if (family == 4) {
		*query = type == 8 || type == 13 || type == 15 || type == 17;
		return *query || type == 0 || type == 14 || type == 16 || type == 18;
	}
	*query = type == 128 || type == 139;
	return *query || type == 129 || type == 140;
}

static __always_inline int xnf__ct_icmp_is_error(__u8 family, __u8 type)
{
	if (family == 4)
		return type == 3 || type == 4 || type == 5 || type == 11 || type == 12;
	return type >= 1 && type <= 4;
}

/* ICMPv6's link messages netfilter leaves untracked: multicast listener queries and reports, neighbour discovery. */
static __always_inline int xnf__ct_icmp6_untracked(__u8 type)
{
	return (type >= 130 && type <= 137) || type == 143;
}

/* A query's connection key: the two ends and the identifier, and which end asked (the querier). */
static __always_inline __u8 xnf__ct_query_key(struct xnf_ct_key *k, __u8 family, __u8 proto, const __be32 *src,
					      const __be32 *dst, __be16 id, int query)
{
	__u8 sender = xnf__ct_make_key(k, family, proto, src, id, dst, id);

	k->querier = 1 + (query ? sender : 1 - sender);
	return sender;
}

static __always_inline int xnf__ct_same_address(const __be32 *a, const __be32 *b)
{
	return a[0] == b[0] && a[1] == b[1] && a[2] == b[2] && a[3] == b[3];
}

/* Where an IPv4 header's payload starts, ihl's words on: 0 where the header is malformed or runs past end. */
static __always_inline const __u8 *xnf__ct_after_ipv4(const struct iphdr *ip, const void *end)
{
	__u32 ihl = ip->ihl & 0xf;

	if (ihl < 5 || (const __u8 *)ip + ihl * 4 > (const __u8 *)end)
		return 0;
	return (const __u8 *)ip + ihl * 4;
}

/*
 * Where a quoted IPv6 frame's transport header starts, its extension headers stepped over as the parser steps over a
 * frame's own (as many: XNF_MAX_IPV6_EXT_HEADERS), with its protocol in *proto: 0 where they run past end, are more,
 * or the quote is of a later fragment (whose first bytes are no ports).
 */
static __always_inline const __u8 *xnf__ct_after_ipv6(const struct ipv6hdr *ip6, const void *end, __u8 *proto)
{
	const __u8 *at = (const __u8 *)(ip6 + 1);
	__u8 next = ip6->nexthdr;

	for (int i = 0; i < XNF_MAX_IPV6_EXT_HEADERS; i++) {
		__u32 len = 8;

		if (!xnf_is_ipv6_ext_header(next))
			break;
		if ((const void *)(at + 8) > end)
			return 0;
		if (next == IPPROTO_FRAGMENT && ((at[2] << 8 | at[3]) & 0xfff8) != 0)
			return 0;
		if (next != IPPROTO_FRAGMENT)
			len = ((__u32)at[1] + 1) * 8;
		next = at[0];
		at += len;
	}
	if (xnf_is_ipv6_ext_header(next))
		return 0;
	*proto = next;
	return at;
}

/*
 * An ICMP error: related if its inner header (the frame it is about, as the erring hop got it) belongs to a tracked
 * connection and the error goes back to that frame's sender, else invalid (an error to any other host is spoofed or
 * misrouted, and netfilter refuses it so). The inner frame's ports (a query's identifier) must lie in the readable
 * part; IPv4 options and IPv6 extension headers in it are stepped over.
 */
static __always_inline void xnf__ct_icmp_error(void *table, void *timeouts, const struct xnf_pkt *pkt,
					       const struct xnf_headers *h, struct xnf_ct *ct, __u64 now)
{
	const __u8 *inner = (const __u8 *)(h->icmp + 1), *l4;
	__be32 src[4] = { 0 }, dst[4] = { 0 }, to[4] = { 0 };
	__u8 proto, family = h->ip4 ? 4 : 6;
	__be16 sport, dport;
	int query;

	ct->state = XNF_CT_INVALID;
	if (h->ip4)
		to[0] = h->ip4->daddr;
	else if (h->ip6)
		__builtin_memcpy(to, &h->ip6->daddr, 16);
	else
		return;
	if (family == 4) {
		const struct iphdr *ip = (const struct iphdr *)inner;

		if ((const void *)(ip + 1) > pkt->data_end || !(l4 = xnf__ct_after_ipv4(ip, pkt->data_end)))
			return;
		src[0] = ip->saddr;
		dst[0] = ip->daddr;
		proto = ip->protocol;
	} else {
		const struct ipv6hdr *ip6 = (const struct ipv6hdr *)inner;

		if ((const void *)(ip6 + 1) > pkt->data_end)
			return;
		__builtin_memcpy(src, &ip6->saddr, 16);
		__builtin_memcpy(dst, &ip6->daddr, 16);
		if (!(l4 = xnf__ct_after_ipv6(ip6, pkt->data_end, &proto)))
			return;
	}
	if ((const void *)(l4 + 8) > pkt->data_end || !xnf__ct_same_address(to, src))
		return;
	if (proto == IPPROTO_TCP || proto == IPPROTO_UDP) {
		sport = *(const __be16 *)l4;
		dport = *(const __be16 *)(l4 + 2);
		xnf__ct_make_key(&ct->key, family, proto, src, sport, dst, dport);
	} else if ((proto == IPPROTO_ICMP && family == 4) || (proto == IPPROTO_ICMPV6 && family == 6)) {
		if (!xnf__ct_icmp_query(family, l4[0], &query))
			return;
		xnf__ct_query_key(&ct->key, family, proto, src, dst, *(const __be16 *)(l4 + 4), query);
	} else {
		xnf__ct_make_key(&ct->key, family, proto, src, 0, dst, 0);
	}
	if (xnf__ct_find(table, timeouts, &ct->key, now))
		ct->state = XNF_CT_RELATED;
}

static __always_inline void xnf__ct_icmp(void *table, void *timeouts, const struct xnf_pkt *pkt,
					 const struct xnf_headers *h, const struct xnf_5tuple *t, struct xnf_ct *ct,
					 __u64 now)
{
	__u8 type = h->icmp->type;
	int query;
	__u8 sender;
	__be16 id;

	__builtin_memcpy(&id, &h->icmp->rest, sizeof(id));  /* a query's identifier: the rest's first half */

	if (xnf__ct_icmp_is_error(t->family, type)) {
		xnf__ct_icmp_error(table, timeouts, pkt, h, ct, now);
		return;
	}
	if (t->family == 6 && xnf__ct_icmp6_untracked(type)) {
		ct->state = XNF_CT_UNTRACKED;
		return;
	}
	if (!xnf__ct_icmp_query(t->family, type, &query)) {
		ct->state = XNF_CT_INVALID;
		return;
	}
	sender = xnf__ct_query_key(&ct->key, t->family, t->proto, t->saddr, t->daddr, id, query);
	ct->sender = sender;
	/* Only the querier's frames are queries on its connection: an answer from it, or a query from the other end,
	 * has another key. */
	xnf__ct_stateless(ct, xnf__ct_find(table, timeouts, &ct->key, now), sender, query, now);
}

/* The fragment cache's slot of a datagram. */
static __always_inline __u32 xnf__ct_fragment_slot(const struct xnf_5tuple *t, __u32 id)
{
	__u32 hash = (id ^ ((__u32)t->proto << 8 | t->family)) * 0x9e3779b1u;

	for (int i = 0; i < 4; i++) {
		hash = (hash ^ t->saddr[i]) * 0x85ebca6bu;
		hash = (hash ^ t->daddr[i]) * 0xc2b2ae35u;
	}
	return (hash ^ hash >> 16) % XNF_CT_FRAGMENT_SLOTS;
}

static __always_inline int xnf__ct_fragment_is_of(const struct xnf_ct_fragment *f, const struct xnf_5tuple *t,
						  __u32 id)
{
	__u32 differs = (f->id ^ id) | (__u32)(f->family ^ t->family) | (__u32)(f->proto ^ t->proto);

	for (int i = 0; i < 4; i++)
		differs |= (f->src[i] ^ t->saddr[i]) | (f->dst[i] ^ t->daddr[i]);
	return differs == 0;
}

/* A later fragment's answer from the cache: its datagram was found, with this state and these ports. */
#define XNF__CT_FRAGMENT_FOUND (1ull << 63)

/* Asked for every frame (a branch before the call would be followed through the whole NF by the verifier): for a
 * first fragment (not later, more follow), tracked, its datagram's ports and state into its slot for the fragments
 * that follow, 0; for a later one, its datagram's state and ports, or 0 where its slot holds another datagram, or
 * none in time; for a whole datagram, 0. */
static __always_inline __u64 xnf__ct_fragment(void *fragments, const struct xnf_5tuple *t, __u32 id, __u32 state,
					      __u32 later, __u32 more)
{
	struct xnf_ct_fragment *f;
	__u64 now;
	__u32 slot;

	if (!t || (!later && !more))
		return 0;
	now = xnf_now_coarse_ns();
	slot = xnf__ct_fragment_slot(t, id);
	f = xnf_map_lookup(fragments, &slot);
	if (!f)
		return 0;
	if (!later) {
		f->seen_ns = now;
		__builtin_memcpy(f->src, t->saddr, sizeof(f->src));
		__builtin_memcpy(f->dst, t->daddr, sizeof(f->dst));
		f->id = id;
		f->family = t->family;
		f->proto = t->proto;
		f->sport = t->sport;
		f->dport = t->dport;
		f->state = (__u8)state;
		return 0;
	}
	if (!xnf__ct_fragment_is_of(f, t, id) ||
	    xnf_idle_past(now, f->seen_ns, t->family == 4 ? XNF_CT_FRAGMENT_TIME_IPV4_NS : XNF_CT_FRAGMENT_TIME_IPV6_NS))
		return 0;
	return XNF__CT_FRAGMENT_FOUND | f->state | (__u64)f->sport << 16 | (__u64)f->dport << 32;
}

/* The frame's state once the cache has answered (found: its answer for a later fragment). */
static __always_inline __u32 xnf__ct_after_fragment(__u64 found, struct xnf_5tuple *t, struct xnf_ct *ct)
{
	if (ct->fragment != XNF__CT_LATER_FRAGMENT)
		return ct->state;
	if (!(found & XNF__CT_FRAGMENT_FOUND)) {
		ct->fragment_unmatched = 1;
		return ct->state;
	}
	ct->state = (__u32)(found & 0xff);
	t->sport = (__be16)(found >> 16);
	t->dport = (__be16)(found >> 32);
	return ct->state;
}

/*
 * One answered frame in so many writes its connection's entry anew. The kernel's hash puts a written entry at the
 * head of its chain, where new ones go too: a flood's entries, added after an established connection's, would
 * otherwise stay in front of it until they expire, and each of its frames would pass them (a cache miss each).
 * Random, so that the cost follows the frames (a write about every 256th) and not the number of connections.
 */
#ifndef XNF_CT_BRING_FORWARD_ONE_IN
#define XNF_CT_BRING_FORWARD_ONE_IN 256
#endif

/* A write from another CPU to the entry in the moment between its copy and this write is lost (the old entry is
 * recycled): a last-seen time, or a TCP transition (the connection's next segments go on from the state before). */
static __always_inline void xnf__ct_bring_forward(void *table, const struct xnf_ct *ct)
{
	if (ct->in_table && ct->state == XNF_CT_ESTABLISHED && xnf_random_u32() % XNF_CT_BRING_FORWARD_ONE_IN == 0)
		xnf_map_update(table, &ct->key, &ct->found, BPF_EXIST);
}

/* A TCP segment's numbers, as xnf__ct_tcp takes them: the sequence and acknowledgement numbers, and the rest
 * (XNF__CT_TCP_SEG). */
static __always_inline void xnf__ct_segment(const struct xnf_pkt *pkt, const struct xnf_headers *h, __u8 sender,
					    __u64 *seq_ack, __u64 *seg)
{
	const struct tcphdr *tcp = h->tcp;
	__u32 header = (__u32)tcp->doff * 4;

	*seq_ack = (__u64)bpf_ntohl(tcp->seq) << 32 | bpf_ntohl(tcp->ack_seq);
	*seg = XNF__CT_TCP_SEG(h->l4_len, (__u32)((const char *)h->l4 - (const char *)pkt->data) + 20,
			       bpf_ntohs(tcp->window), xnf_tcp_flags(h), sender, header > 20 ? header - 20 : 0);
}

/* A frame of a protocol with ports (or none: a protocol xnf does not look into) on its connection. */
static __always_inline void xnf__ct_ports(void *table, void *timeouts, void *windows, const struct xnf_pkt *pkt,
					  const struct xnf_headers *h, const struct xnf_5tuple *t, struct xnf_ct *ct,
					  __u64 now)
{
	__u64 seq_ack = 0, seg = 0;
	__u8 sender;
	int is_tcp;

	/* The headers read now, into scalars: what follows then reads no packet pointer, so the verifier can take the
	 * paths of the parse (tags, extension headers) for one from here on instead of following each. */
	is_tcp = h->tcp != 0;
	sender = xnf__ct_make_key(&ct->key, t->family, t->proto, t->saddr, t->sport, t->daddr, t->dport);
	ct->sender = sender;
	if (is_tcp)
		xnf__ct_segment(pkt, h, sender, &seq_ack, &seg);
	if (is_tcp) {
		xnf__ct_tcp(ct, xnf__ct_find(table, timeouts, &ct->key, now), windows, XNF__CT_FRAME_OF(pkt), seq_ack,
			    seg, now);
	} else {
		struct xnf_ct_entry *e = xnf__ct_find(table, timeouts, &ct->key, now);

		if (e && t->proto == IPPROTO_UDP)
			xnf__ct_udp_stream(e, now);
		xnf__ct_stateless(ct, e, sender, 1, now);
		if (ct->creates && t->proto == IPPROTO_UDP)
			ct->entry.udp_born = xnf__ct_udp_units(now);
	}
	if (ct->ends) {
		xnf_map_delete(table, &ct->key);
		xnf_map_delete(windows, &ct->key);
	} else
		xnf__ct_bring_forward(table, ct);
}

/*
 * Whether a TCP segment that carries SYN, FIN or RST sums right, as netfilter checks a frame's checksum
 * (nf_conntrack_checksum=1) before it lets it move a connection: a forged RST with a wrong checksum, which its
 * endpoint ignores, must not close the connection here either. Only such segments: they move a connection by their
 * flags and are few, where summing every segment would cost its whole payload. In XDP and natively a frame's
 * checksum is whole when the NF sees it (<xnf/l4_csum.h>); at tc an skb's checksum state is the kernel's, and a
 * local stack's segment holds only the pseudo-header's sum there, so a tc program takes every segment as right
 * (docs/conntrack.md). A first fragment's checksum covers fragments still to come: it is not checked either.
 */
#ifdef XNF_HOOK_TC
#define xnf__ct_segment_sums_right(pkt, h, t) 1
#else
#ifdef XNF_TARGET_BPF
/* Apart: its loop's state on the program's stack would take the acl's past the stack's 512 bytes. */
XNF_VERIFIED_APART int xnf__ct_sums_right(xnf_ctx *ctx, __u32 offset, __u32 len, __u32 seed)
{
	__u32 sum = 0;

	return xnf__frame_sum_ctx(ctx, offset, len, seed, &sum) == 0 && xnf_csum_fold(sum) == 0;
}
#define xnf__ct_sum_right(pkt, offset, len, seed) xnf__ct_sums_right((pkt)->ctx, offset, len, seed)
#else
static __always_inline int xnf__ct_sum_right(const struct xnf_pkt *pkt, __u32 offset, __u32 len, __u32 seed)
{
	__u32 sum;

	return xnf_frame_sum(pkt, offset, len, seed, &sum) == 0 && xnf_csum_fold(sum) == 0;
}
#endif

static __always_inline int xnf__ct_segment_sums_right(const struct xnf_pkt *pkt, const struct xnf_headers *h,
						      const struct xnf_5tuple *t)
{
	__u32 offset, ip_len, before, len, seed = bpf_htons((__u16)IPPROTO_TCP);

	if (!h->tcp || h->more_fragments || !(xnf_tcp_flags(h) & (XNF__CT_SYN | XNF__CT_FIN | XNF__CT_RST)))
		return 1;
	offset = (__u32)((const char *)h->l4 - (const char *)pkt->data);
	if (h->ip4) {
		ip_len = bpf_ntohs(h->ip4->tot_len);
		before = (__u32)((const char *)h->l4 - (const char *)h->ip4);
	} else if (h->ip6) {
		ip_len = bpf_ntohs(h->ip6->payload_len);
		before = (__u32)((const char *)h->l4 - (const char *)(h->ip6 + 1));
	} else {
		return 1;
	}
	if (ip_len < before)
		return 0;
	len = ip_len - before;
	/* The pseudo-header: the addresses (an IPv4 frame's in word 0, zeros after), the protocol and the length. */
	for (int i = 0; i < 4; i++)
		seed = xnf__sum_words32(xnf__sum_words32(seed, t->saddr[i]), t->daddr[i]);
	seed += bpf_htons((__u16)len);
	return xnf__ct_sum_right(pkt, offset, len, seed);
}
#endif

/*
 * The frame's state on its connection (enum xnf_ct_state), with h and t the frame's parsed headers and 5-tuple (a
 * later fragment's ports are set in t: its first fragment's). An existing connection moves now; a new one waits for
 * xnf_ct_confirm.
 */
static __always_inline __u32 xnf__ct_track(void *table, void *timeouts, void *windows, const struct xnf_headers *h,
					   const struct xnf_5tuple *t, const struct xnf_pkt *pkt, struct xnf_ct *ct)
{
	__u64 now = xnf_now_coarse_ns();   /* idle times are seconds: the tick's time, without a clock read */

	__builtin_memset(ct, 0, sizeof(*ct));
	if (!xnf__ct_segment_sums_right(pkt, h, t)) {
		ct->state = XNF_CT_INVALID;
		ct->bad_checksum = 1;
		return ct->state;
	}
	if (h->is_fragment) {
		ct->state = XNF_CT_INVALID;       /* until the fragment cache says otherwise */
		ct->fragment = XNF__CT_LATER_FRAGMENT;
		return ct->state;
	}
	if (h->icmp)
		xnf__ct_icmp(table, timeouts, pkt, h, t, ct, now);
	else
		xnf__ct_ports(table, timeouts, windows, pkt, h, t, ct, now);
	return ct->state;
}

/* The new connection's key written at the ring's head. Two CPUs take different slots (the head is added to
 * atomically); a slot overwritten before anyone looked at it only leaves its connection to its idle time. */
static __always_inline void xnf__ct_remember(void *ring, struct xnf_ct_ring_ends *ends, __u32 slots,
					     const struct xnf_ct_key *k)
{
	__u32 slot = (__u32)(__sync_fetch_and_add(&ends->head, 1) % slots);
	struct xnf_ct_key *kept = xnf_map_lookup(ring, &slot);

	if (kept)
		__builtin_memcpy(kept, k, sizeof(*kept));
}

/* Deletes the oldest remembered connection that was never answered, looking at up to XNF_CT_EARLY_DROP_TRIES of them;
 * 1 if one went. The tail moves without a lock: two CPUs may look at the same slot, and the second finds it gone. */
static __always_inline int xnf__ct_early_drop(void *table, void *ring, void *windows, struct xnf_ct_ring_ends *ends,
					      __u32 slots)
{
	for (int i = 0; i < XNF_CT_EARLY_DROP_TRIES; i++) {
		__u64 head = ends->head, tail = ends->tail;
		struct xnf_ct_entry *e;
		struct xnf_ct_key *k;
		__u32 slot;

		if (head - tail > slots)
			tail = head - slots;   /* the older ones were written over */
		if (tail >= head)
			return 0;
		ends->tail = tail + 1;
		slot = (__u32)(tail % slots);
		k = xnf_map_lookup(ring, &slot);
		if (!k)
			return 0;
		e = xnf_map_lookup(table, k);
		if (e && !(e->seen_reply & XNF_CT_REPLIED) && xnf_map_delete(table, k) == 0) {
			xnf_map_delete(windows, k);
			return 1;
		}
	}
	return 0;
}

/* Puts a new connection in the table, its frame having passed. 0; 1: it took the entry of the oldest connection never
 * answered; -1: every connection looked at was answered, the table is full (the frame must not pass: its answer
 * would be invalid). */
/* A new TCP connection's window, made beside its entry (a table full of windows leaves it liberal), liberal where
 * the table's setting says so as it opens. */
static __always_inline void xnf__ct_window_enter(void *windows, void *settings, const struct xnf_ct *ct)
{
	static const struct xnf_ct_window none;
	__u32 slot = XNF_CT_SETTING_LIBERAL, *liberal;
	struct xnf_ct_window *w;
	__u64 open = ct->window_open;

	if (!(open & XNF__CT_OPEN_VALID))
		return;
	liberal = xnf_map_lookup(settings, &slot);
	if (liberal && *liberal)
		open |= XNF__CT_OPEN_LIBERAL;
	w = xnf_map_lookup(windows, &ct->key);
	if (!w && xnf_map_update(windows, &ct->key, &none, BPF_ANY) == 0)
		w = xnf_map_lookup(windows, &ct->key);
	if (w)
		xnf__ct_window_open(w, open);
}

static __always_inline int xnf__ct_confirm(void *table, void *ring, void *ends_map, void *windows, void *settings,
					   __u32 slots, const struct xnf_ct *ct)
{
	struct xnf_ct_ring_ends *ends;
	__u32 zero = 0;
	int dropped = 0;

	if (!ct->creates)
		return 0;
	ends = xnf_map_lookup(ends_map, &zero);
	if (!ends)
		return -1;
	/* BPF_ANY: a connection that is over may still hold the key until the sweeper comes. */
	if (xnf_map_update(table, &ct->key, &ct->entry, BPF_ANY) != 0) {
		dropped = xnf__ct_early_drop(table, ring, windows, ends, slots);
		if (!dropped || xnf_map_update(table, &ct->key, &ct->entry, BPF_ANY) != 0)
			return -1;
	}
	xnf__ct_remember(ring, ends, slots, &ct->key);
	xnf__ct_window_enter(windows, settings, ct);
	return dropped;
}

#endif /* XNF_CONNTRACK_H */
