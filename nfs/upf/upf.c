/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * upf: a 5G user plane function (GTP-U, TS 29.281 framing, TS 29.244 rule model) between the access side (N3,
 * the gNBs) and the data network (N6).
 *
 * Uplink: a G-PDU to one of the UPF's N3 addresses is matched by its TEID (and the QFI of its PDU Session
 * Container) to a packet detection rule; its outer IPv4/UDP/GTP-U headers, extension headers included, come off
 * and the inner IPv4 or IPv6 packet goes where the rule's forwarding action says. Downlink: an IP packet whose
 * destination is a UE's address is matched to its rule and leaves tunnelled, with the session's TEID, towards
 * its gNB, in a PDU Session Container carrying the QFI. A rule counts what it matched (packets, bytes) and may
 * hold its session to a maximum bit rate (a token bucket). GTP-U echo requests are answered; error indications
 * and end markers are counted. What is neither tunnel nor session (ARP, the box's own traffic) goes to the local
 * stack.
 */
#include <xnf/nf.h>
#include <xnf/rules_tables.h>
#include "upf.h"

XNF_RULES_HASH(upf_uplink, struct upf_teid_key, struct upf_pdr, UPF_DEFAULT_RULES);
XNF_RULES_HASH(upf_downlink, struct upf_ue_key, struct upf_pdr, UPF_DEFAULT_RULES);
XNF_RULES_HASH(upf_fars, struct upf_rule_key, struct upf_far, UPF_DEFAULT_RULES);
XNF_RULES_HASH_GROWING(upf_qers, struct upf_rule_key, struct upf_qer, UPF_DEFAULT_RULES);
XNF_RULES_ARRAY(upf_ifaces, struct upf_iface, UPF_NINTERFACES);
XNF_RULES_HASH(upf_n3_addrs, struct upf_n3_addr, __u32, UPF_MAX_N3_ADDRS);
XNF_MAP_ARRAY(upf_port_mac, struct upf_port_mac, XNF_MAX_PORTS);
XNF_RULES_LPM(upf_breakout, struct upf_breakout_key, struct upf_breakout, UPF_MAX_BREAKOUTS);
XNF_COUNTER_NAMES("uplink", "downlink", "unknown_teid", "malformed_tunnel", "unknown_ext_header", "echo_answered",
		  "error_indication", "end_marker", "other_message", "far_drop", "buffer_drop", "qer_drop", "no_route",
		  "no_room", "not_a_session", "breakout", "segment_refused");

/* Refill a rate limit's bucket at most this often: fewer writes to a line every CPU of the session reads. */
#define UPF_QER_REFILL_NS 100000ull
#define UPF_QER_MAX_ELAPSED_US 1000000ull

/* What the GTP-U header says, as far as the UPF acts on it. */
struct upf_tunnel {
	__be32 teid;
	__be16 seq;
	__u8 type;
	__u8 qfi;
	__u32 inner_offset; /* from the GTP-U header */
	__u32 inner_len;    /* what the GTP-U length leaves for the inner packet */
};

enum upf_parse {
	UPF_TUNNEL_OK = 0,
	UPF_TUNNEL_MALFORMED = -1,
	UPF_TUNNEL_UNKNOWN_EXT = -2,
};

static __always_inline int upf_byte_at(const struct xnf_pkt *pkt, const __u8 *base, __u32 offset, __u8 *out)
{
	const __u8 *p;

	if (offset > 2048)
		return -1;
	p = base + offset;
	if ((const void *)(p + 1) > pkt->data_end)
		return -1;
	*out = *p;
	return 0;
}

/* One extension header at offset (its type ext): the QFI of a PDU Session Container; the offset of the next, and
 * its type. */
static __always_inline int upf_extension(const struct xnf_pkt *pkt, const __u8 *gtp, __u32 *offset, __u8 *ext,
					 __u32 end, struct upf_tunnel *t)
{
	__u8 words, qfi;

	if (upf_byte_at(pkt, gtp, *offset, &words) || !words || *offset + 4u * words > end)
		return UPF_TUNNEL_MALFORMED;
	if (*ext == GTPU_EXT_PDU_SESSION) {
		if (upf_byte_at(pkt, gtp, *offset + 2, &qfi))
			return UPF_TUNNEL_MALFORMED;
		t->qfi = qfi & 0x3f;
	} else if (*ext & GTPU_EXT_MUST_KNOW) {
		return UPF_TUNNEL_UNKNOWN_EXT;
	}
	*offset += 4u * words;
	return upf_byte_at(pkt, gtp, *offset - 1, ext) ? UPF_TUNNEL_MALFORMED : UPF_TUNNEL_OK;
}

/* The GTP-U header after udp: its lengths agree with UDP's, its extension headers are known or may be skipped. */
static __always_inline int upf_parse_tunnel(const struct xnf_pkt *pkt, const struct udphdr *udp, struct upf_tunnel *t)
{
	const struct gtpu_hdr *gtp = (const void *)(udp + 1);
	const struct gtpu_opt *opt = (const void *)(gtp + 1);
	__u32 end, offset = sizeof(*gtp);
	__u8 ext = 0;
	int err;

	if ((const void *)(gtp + 1) > pkt->data_end || (gtp->flags & 0xf0) != GTPU_FLAGS_V1)
		return UPF_TUNNEL_MALFORMED;
	end = sizeof(*gtp) + bpf_ntohs(gtp->length);
	/* The frame may go on past data_end (a jumbo frame's further buffers): its whole length counts. */
	if (bpf_ntohs(udp->len) != sizeof(*udp) + end ||
	    (__u32)((const char *)gtp - (const char *)pkt->data) + end > xnf_frame_len(pkt))
		return UPF_TUNNEL_MALFORMED;
	t->teid = gtp->teid;
	t->type = gtp->type;
	t->seq = 0;
	t->qfi = 0;
	if (gtp->flags & (GTPU_FLAG_E | GTPU_FLAG_S | GTPU_FLAG_PN)) {
		if ((const void *)(opt + 1) > pkt->data_end || end < offset + sizeof(*opt))
			return UPF_TUNNEL_MALFORMED;
		t->seq = opt->seq;
		ext = gtp->flags & GTPU_FLAG_E ? opt->next_ext : 0;
		offset += sizeof(*opt);
	}
	for (int i = 0; i < UPF_MAX_EXT_HEADERS && ext; i++) {
		err = upf_extension(pkt, (const __u8 *)gtp, &offset, &ext, end, t);
		if (err)
			return err;
	}
	if (ext)
		return UPF_TUNNEL_MALFORMED;
	t->inner_offset = offset;
	t->inner_len = end - offset;
	return UPF_TUNNEL_OK;
}

/* The IP packet at ip, no longer than room: its length by its own header, its EtherType; 0 if it is not one. */
static __always_inline __u32 upf_inner_len(const struct xnf_pkt *pkt, const __u8 *ip, __u32 room, __be16 *proto)
{
	__u32 len;

	if ((const void *)(ip + 40) <= pkt->data_end && (ip[0] >> 4) == 6) {
		len = 40 + ((__u32)ip[4] << 8 | ip[5]);
		*proto = bpf_htons(ETH_P_IPV6);
	} else if ((const void *)(ip + 20) <= pkt->data_end && (ip[0] >> 4) == 4) {
		len = (__u32)ip[2] << 8 | ip[3];
		*proto = bpf_htons(ETH_P_IP);
		if (len < 20)
			return 0;
	} else {
		return 0;
	}
	return len <= room ? len : 0;
}

/* Whether the session's rate limit lets bytes through now. Its bucket is shared by every CPU and worker with
 * plain adds: two refilling at the same moment may both credit one interval, and a few frames may overdraw it
 * below zero, which the next refill pays back (bounded by a refill interval per CPU, no lock on the path). */
static __always_inline int upf_qer_admits(__u64 seid, __u32 qer_id, __u32 bytes)
{
	struct upf_rule_key key = { .seid = seid, .id = qer_id };
	struct upf_qer *q;
	__u64 now, elapsed_us;

	if (!qer_id)
		return 1;
	q = xnf_rules_lookup(upf_qers, &key);
	if (!q)
		return 1;   /* a rule naming a QER not (yet) given: no limit, as none is known */
	now = xnf_now_ns();
	if (now - q->last_ns >= UPF_QER_REFILL_NS) {
		elapsed_us = (now - q->last_ns) / 1000;
		if (elapsed_us > UPF_QER_MAX_ELAPSED_US)
			elapsed_us = UPF_QER_MAX_ELAPSED_US;
		q->last_ns = now;
		__sync_fetch_and_add(&q->tokens, (__s64)(elapsed_us * q->rate_bits / 8000000));
		if (q->tokens > (__s64)q->burst_bytes)
			q->tokens = (__s64)q->burst_bytes;
	}
	if (q->tokens < (__s64)bytes)
		return 0;
	__sync_fetch_and_add(&q->tokens, -(__s64)bytes);
	return 1;
}

/* The rule's forwarding action for a packet of bytes: NULL (counted) when it is not to be forwarded. */
static __always_inline struct upf_far *upf_action(struct upf_pdr *pdr, __u32 bytes)
{
	struct upf_rule_key key = { .seid = pdr->seid, .id = pdr->far_id };
	struct upf_far *far = xnf_rules_lookup(upf_fars, &key);

	if (!far || far->action == UPF_FAR_DROP) {
		xnf_count_event(UPF_CNT_FAR_DROP);
		return 0;
	}
	if (far->action == UPF_FAR_BUFFER) {
		xnf_count_event(UPF_CNT_BUFFER_DROP);
		return 0;
	}
	if (!upf_qer_admits(pdr->seid, pdr->qer_id, bytes)) {
		xnf_count_event(UPF_CNT_QER_DROP);
		return 0;
	}
	__sync_fetch_and_add(&pdr->packets, 1);
	__sync_fetch_and_add(&pdr->bytes, bytes);
	return far;
}

static __always_inline struct upf_iface *upf_iface(__u32 which)
{
	struct upf_iface *iface = xnf_rules_lookup(upf_ifaces, &which);

	return iface && iface->set ? iface : 0;
}

/* An IPv4 header of a UDP datagram the UPF sends (total_len bytes with the header), its checksum computed. */
static __always_inline void upf_write_ipv4_udp(struct iphdr *ip, __be32 source, __be32 destination, __u32 total_len)
{
	__u32 sum = 0;

	__builtin_memset(ip, 0, sizeof(*ip));
	ip->version = 4;
	ip->ihl = 5;
	ip->ttl = 64;
	ip->protocol = IPPROTO_UDP;
	ip->tot_len = bpf_htons((__u16)total_len);
	ip->saddr = source;
	ip->daddr = destination;
	for (int i = 0; i < 10; i++)
		sum += ((__u16 *)ip)[i];
	ip->check = (__sum16)xnf_csum_fold(sum);
}

/* Outer IPv4, UDP and GTP-U headers with a PDU Session Container (downlink, qfi) in front of inner_len bytes. */
static __always_inline void upf_write_outer(__u8 *outer, const struct upf_far *far, __be32 source, __u32 inner_len)
{
	struct iphdr *ip = (struct iphdr *)outer;
	struct udphdr *udp = (struct udphdr *)(ip + 1);

	upf_write_ipv4_udp(ip, source, far->peer, GTPU_ENCAP_LEN + inner_len);
	udp->source = bpf_htons(GTPU_PORT);
	udp->dest = bpf_htons(GTPU_PORT);
	udp->len = bpf_htons((__u16)(GTPU_ENCAP_LEN - 20 + inner_len));
	udp->check = 0;   /* allowed for UDP over IPv4, and what GTP-U peers send */
	gtpu_write_g_pdu(udp + 1, far->teid, PDU_TYPE_DL, far->qfi, inner_len);
}

/*
 * Sends the packet (an Ethernet header, then the inner packet of inner_len bytes) as the forwarding action says:
 * tunnelled when it creates an outer header, out of its interface (or port) to the next hop, from the port's MAC
 * (where it was read at start; else the MAC the frame came to, arrived_to).
 */
static __always_inline xnf_verdict upf_send(struct xnf_pkt *pkt, const struct upf_far *far, __be16 proto,
					    __u32 inner_len, const __u8 *arrived_to)
{
	struct upf_iface *iface = far->interface < UPF_NINTERFACES ? upf_iface(far->interface) : 0;
	struct upf_port_mac *own;
	const __u8 *next_hop;
	struct ethhdr *eth;
	__u32 port;

	if (far->interface < UPF_NINTERFACES && !iface) {
		xnf_count_event(UPF_CNT_NO_ROUTE);
		return XNF_DROP;
	}
	port = iface ? iface->port : far->port;
	next_hop = iface ? iface->gateway_mac : far->mac;
	if (far->encap) {
		/* The tunnel's source is N3's address: the FAR's own interface when it sends on N3, as it mostly does. */
		struct upf_iface *n3 = far->interface == UPF_IF_N3 ? iface : upf_iface(UPF_IF_N3);

		if (!n3) {
			xnf_count_event(UPF_CNT_NO_ROUTE);
			return XNF_DROP;
		}
		if (xnf_frame_move_start(pkt, -GTPU_ENCAP_LEN) ||
		    (__u8 *)pkt->data + ETH_HLEN + GTPU_ENCAP_LEN > (__u8 *)pkt->data_end) {
			xnf_count_event(UPF_CNT_NO_ROOM);
			return XNF_DROP;
		}
		upf_write_outer((__u8 *)pkt->data + ETH_HLEN, far, n3->addr, inner_len);
		proto = bpf_htons(ETH_P_IP);
	}
	eth = pkt->data;
	if ((void *)(eth + 1) > pkt->data_end)
		return XNF_DROP;
	own = xnf_map_lookup(&upf_port_mac, &port);
	__builtin_memcpy(eth->h_source, own && own->set ? own->mac : arrived_to, ETH_ALEN);
	__builtin_memcpy(eth->h_dest, next_hop, ETH_ALEN);
	eth->h_proto = proto;
	return port == xnf_ingress_port(pkt) ? XNF_TX : XNF_REDIRECT(port);
}

/* The tunnel's rule: for its TEID and QFI, else for its TEID and any QFI. */
static __always_inline struct upf_pdr *upf_uplink_rule(const struct upf_tunnel *t)
{
	struct upf_teid_key key = { .teid = t->teid, .qfi = t->qfi };
	struct upf_pdr *pdr = xnf_rules_lookup(upf_uplink, &key);

	if (pdr || !t->qfi)
		return pdr;
	key.qfi = 0;
	return xnf_rules_lookup(upf_uplink, &key);
}

/* Where an uplink packet to inner (an IPv4 header, checked) breaks out locally: a FAR to its port, filled in;
 * 0 when its destination is in no breakout prefix. */
static __always_inline int upf_breakout_for(const struct xnf_pkt *pkt, const __u8 *inner, struct upf_far *out)
{
	struct upf_breakout_key key = { .prefixlen = 32 };
	struct upf_breakout *local;

	if ((const void *)(inner + 20) > pkt->data_end || (inner[0] >> 4) != 4)
		return 0;
	__builtin_memcpy(&key.addr, inner + 16, 4);
	local = xnf_rules_lookup(upf_breakout, &key);
	if (!local)
		return 0;
	__builtin_memset(out, 0, sizeof(*out));
	out->action = UPF_FAR_FORWARD;
	out->interface = UPF_NINTERFACES;
	out->port = local->port;
	__builtin_memcpy(out->mac, local->mac, ETH_ALEN);
	return 1;
}

/* A G-PDU: its outer headers off (all but room for an Ethernet header), the inner packet on as its rule says. */
static __always_inline xnf_verdict upf_uplink_pdu(struct xnf_pkt *pkt, const __u8 *gtp, const struct upf_tunnel *t)
{
	const __u8 *inner = gtp + (t->inner_offset & 2047);
	struct upf_pdr *pdr = upf_uplink_rule(t);
	__u8 arrived_to[ETH_ALEN];
	struct upf_far *far, local;
	__u32 inner_len;
	__be16 proto;

	if (!pdr) {
		xnf_count_event(UPF_CNT_UNKNOWN_TEID);
		return XNF_DROP;
	}
	inner_len = upf_inner_len(pkt, inner, t->inner_len, &proto);
	if (!inner_len) {
		xnf_count_event(UPF_CNT_MALFORMED_TUNNEL);
		return XNF_DROP_MALFORMED;
	}
	far = upf_action(pdr, inner_len);
	if (!far)
		return XNF_DROP;
	if (upf_breakout_for(pkt, inner, &local)) {
		xnf_count_event(UPF_CNT_BREAKOUT);
		far = &local;
	}
	__builtin_memcpy(arrived_to, ((struct ethhdr *)pkt->data)->h_dest, ETH_ALEN);
	if (xnf_frame_is_segment(pkt)) {
		xnf_count_event(UPF_CNT_SEGMENT_REFUSED);
		return XNF_DROP;
	}
	if (xnf_frame_move_start(pkt, (int)(inner - (const __u8 *)pkt->data) - ETH_HLEN)) {
		xnf_count_event(UPF_CNT_NO_ROOM);
		return XNF_DROP;
	}
	xnf_count_event(UPF_CNT_UPLINK);
	return upf_send(pkt, far, proto, inner_len, arrived_to);
}

/* The answer to an echo request: the same sequence number, a Recovery IE (restart counter 0: the UPF keeps no
 * count of its restarts), from the address and port it was sent to. Written whole over a frame of its size. */
static __always_inline xnf_verdict upf_echo_response(struct xnf_pkt *pkt, const struct xnf_headers *h,
						     const struct upf_tunnel *t)
{
	const __u32 len = ETH_HLEN + 20 + 8 + sizeof(struct gtpu_hdr) + sizeof(struct gtpu_opt) + 2;
	__u8 peer_mac[ETH_ALEN], own_mac[ETH_ALEN];
	__be32 peer = h->ip4->saddr, self = h->ip4->daddr;
	__be16 peer_port = h->udp->source;
	struct ethhdr *eth;
	struct iphdr *ip;
	struct udphdr *udp;
	struct gtpu_hdr *gtp;
	struct gtpu_opt *opt;
	__u8 *ie;

	__builtin_memcpy(peer_mac, h->eth->h_source, ETH_ALEN);
	__builtin_memcpy(own_mac, h->eth->h_dest, ETH_ALEN);
	if (xnf_frame_move_start(pkt, (int)xnf_pkt_len(pkt) - (int)len) ||
	    (__u8 *)pkt->data + len > (__u8 *)pkt->data_end) {
		xnf_count_event(UPF_CNT_NO_ROOM);
		return XNF_DROP;
	}
	eth = pkt->data;
	ip = (struct iphdr *)(eth + 1);
	udp = (struct udphdr *)(ip + 1);
	gtp = (struct gtpu_hdr *)(udp + 1);
	opt = (struct gtpu_opt *)(gtp + 1);
	ie = (__u8 *)(opt + 1);
	__builtin_memcpy(eth->h_dest, peer_mac, ETH_ALEN);
	__builtin_memcpy(eth->h_source, own_mac, ETH_ALEN);
	eth->h_proto = bpf_htons(ETH_P_IP);
	upf_write_ipv4_udp(ip, self, peer, len - ETH_HLEN);
	udp->source = bpf_htons(GTPU_PORT);
	udp->dest = peer_port;
	udp->len = bpf_htons((__u16)(len - ETH_HLEN - 20));
	udp->check = 0;
	gtp->flags = GTPU_FLAGS_V1 | GTPU_FLAG_S;
	gtp->type = GTPU_ECHO_RESPONSE;
	gtp->length = bpf_htons((__u16)(sizeof(*opt) + 2));
	gtp->teid = 0;
	opt->seq = t->seq;
	opt->npdu = 0;
	opt->next_ext = 0;
	ie[0] = GTPU_IE_RECOVERY;
	ie[1] = 0;
	xnf_count_event(UPF_CNT_ECHO_ANSWERED);
	return XNF_TX;
}

/* A GTP-U message to one of the UPF's N3 addresses. */
static __always_inline xnf_verdict upf_tunnel_in(struct xnf_pkt *pkt, const struct xnf_headers *h)
{
	struct upf_tunnel t;
	int err = upf_parse_tunnel(pkt, h->udp, &t);

	if (err == UPF_TUNNEL_UNKNOWN_EXT) {
		xnf_count_event(UPF_CNT_UNKNOWN_EXT_HEADER);
		return XNF_DROP;
	}
	if (err) {
		xnf_count_event(UPF_CNT_MALFORMED_TUNNEL);
		return XNF_DROP_MALFORMED;
	}
	switch (t.type) {
	case GTPU_G_PDU:
		return upf_uplink_pdu(pkt, (const __u8 *)(h->udp + 1), &t);
	case GTPU_ECHO_REQUEST:
		return upf_echo_response(pkt, h, &t);
	case GTPU_ERROR_INDICATION:
		xnf_count_event(UPF_CNT_ERROR_INDICATION);
		return XNF_DROP;
	case GTPU_END_MARKER:
		xnf_count_event(UPF_CNT_END_MARKER);
		return XNF_DROP;
	default:
		xnf_count_event(UPF_CNT_OTHER_MESSAGE);
		return XNF_DROP;
	}
}

static __always_inline int upf_is_n3_addr(__be32 addr)
{
	struct upf_iface *n3 = upf_iface(UPF_IF_N3);
	struct upf_n3_addr key = { .addr = addr };

	return (n3 && n3->addr == addr) || xnf_rules_lookup(upf_n3_addrs, &key) != NULL;
}

/* A packet to a UE: its rule by the UE's address (an IPv6 UE's /64 prefix). */
static __always_inline struct upf_pdr *upf_downlink_rule(const struct xnf_headers *h)
{
	struct upf_ue_key key;

	__builtin_memset(&key, 0, sizeof(key));
	/* Each pointer tested before it is read: the verifier does not take one's being set for the other's not. */
	if (h->ip4) {
		key.family = 4;
		__builtin_memcpy(key.addr, &h->ip4->daddr, 4);
	} else if (h->ip6) {
		key.family = 6;
		__builtin_memcpy(key.addr, &h->ip6->daddr, 8);
	} else {
		return 0;
	}
	return xnf_rules_lookup(upf_downlink, &key);
}

static __always_inline xnf_verdict upf_downlink_packet(struct xnf_pkt *pkt, const struct xnf_headers *h,
						       struct upf_pdr *pdr)
{
	const __u8 *ip = (const __u8 *)(h->eth + 1);
	__u8 arrived_to[ETH_ALEN];
	struct upf_far *far;
	__u32 inner_len;
	__be16 proto;

	if (h->eth->h_proto != bpf_htons(ETH_P_IP) && h->eth->h_proto != bpf_htons(ETH_P_IPV6)) {
		xnf_count_event(UPF_CNT_NO_ROUTE); /* behind a VLAN tag: the tunnel would carry the tag's bytes */
		return XNF_DROP;
	}
	/* At tc a GSO segment would leave as frames that all carry its GTP-U length: refused, counted. */
	if (xnf_frame_is_segment(pkt)) {
		xnf_count_event(UPF_CNT_SEGMENT_REFUSED);
		return XNF_DROP;
	}
	inner_len = upf_inner_len(pkt, ip, xnf_frame_len(pkt) - (__u32)(ip - (const __u8 *)pkt->data), &proto);
	if (!inner_len)
		return XNF_DROP_MALFORMED;   /* shorter than its IP header says */
	far = upf_action(pdr, inner_len);
	if (!far)
		return XNF_DROP;
	__builtin_memcpy(arrived_to, h->eth->h_dest, ETH_ALEN);
	xnf_count_event(UPF_CNT_DOWNLINK);
	return upf_send(pkt, far, proto, inner_len, arrived_to);
}

static __always_inline xnf_verdict upf(struct xnf_pkt *pkt)
{
	struct xnf_headers h;
	struct upf_pdr *pdr;

	if (xnf_parse_headers(pkt, &h) < 0)
		return XNF_DROP_MALFORMED;
	if (!h.ip4 && !h.ip6)
		return XNF_PASS;
	if (h.ip4 && h.udp && h.udp->dest == bpf_htons(GTPU_PORT) && upf_is_n3_addr(h.ip4->daddr))
		return upf_tunnel_in(pkt, &h);
	pdr = upf_downlink_rule(&h);
	if (pdr)
		return upf_downlink_packet(pkt, &h, pdr);
	xnf_count_event(UPF_CNT_NOT_A_SESSION);
	return XNF_PASS;
}
XNF_DEFINE_NF(upf);
