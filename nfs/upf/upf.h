/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Layouts shared by the user plane function, its rules codec and its start step. */
#ifndef XNF_NF_UPF_H
#define XNF_NF_UPF_H

#include <linux/types.h>
#include <xnf/gtpu.h>

#define UPF_DEFAULT_RULES 262144   /* PDRs, FARs and QERs each: two PDRs and FARs a session, 100,000 sessions */
#define UPF_MAX_N3_ADDRS 64
#define UPF_MAX_BREAKOUTS 1024
#define UPF_MAX_EXT_HEADERS 4      /* GTP-U extension headers read before a G-PDU counts as malformed */

/* An uplink PDR's key: the tunnel's TEID and the QFI its PDU Session Container carries (0: any QFI). */
struct upf_teid_key {
	__be32 teid;
	__u8 qfi;
	__u8 pad[3];
};

/* A downlink PDR's key: the UE's IPv4 address, or its IPv6 /64 prefix (the rest zero). */
struct upf_ue_key {
	__u8 family;    /* 4 or 6 */
	__u8 pad[3];
	__u8 addr[16];
};

/* A rule of a session (its PDR, FAR or QER id within the session). */
struct upf_rule_key {
	__u64 seid;
	__u32 id;
	__u32 pad;
};

/* Packet detection rule: where matching packets go (FAR), at what rate (QER, 0: none), and its usage counters
 * (what a URR reports), counted on the data path. */
struct upf_pdr {
	__u64 seid;
	__u32 pdr_id;
	__u32 far_id;
	__u32 qer_id;
	__u32 pad;
	__u64 packets;
	__u64 bytes;    /* of the inner packet, as TS 29.244 counts volume on N3 */
};

enum upf_far_action {
	UPF_FAR_FORWARD = 1,
	UPF_FAR_DROP,
	UPF_FAR_BUFFER, /* buffering is not done: such packets are dropped and counted */
};

enum upf_interface {
	UPF_IF_N3 = 0,  /* towards the gNBs (the access side) */
	UPF_IF_N6,      /* towards the data network */
	UPF_NINTERFACES,
};

/* Forwarding action rule: drop, or forward out of an interface (or a port of its own: local breakout), with
 * outer header creation when teid_set. */
struct upf_far {
	__u8 action;    /* enum upf_far_action */
	__u8 interface; /* enum upf_interface, or UPF_NINTERFACES: the port below */
	__u8 encap;     /* outer header creation: GTP-U/UDP/IPv4 to peer with teid */
	__u8 qfi;
	__u32 port;     /* with interface UPF_NINTERFACES */
	__be32 teid;
	__be32 peer;    /* the gNB's (or next UPF's) N3 address */
	__u8 mac[6];    /* with interface UPF_NINTERFACES: the next hop's */
	__u16 pad;
};

/* QoS enforcement rule: a maximum bit rate as a token bucket. tokens and last_ns are the data path's. */
struct upf_qer {
	__u64 rate_bits;   /* per second */
	__u64 burst_bytes;
	__s64 tokens;
	__u64 last_ns;
};

/* An interface of the UPF: the port it is, the next hop's MAC, and (N3) the UPF's address on it, the source of
 * the tunnels it sends. */
struct upf_iface {
	__u32 port;
	__be32 addr;
	__u8 gateway_mac[6];
	__u16 set;
};

/* A port's own MAC, the source of frames it sends (read at start). */
struct upf_port_mac {
	__u8 mac[6];
	__u16 set;
};

struct upf_n3_addr {
	__be32 addr;
};

/* Local breakout (an uplink classifier's job): inner IPv4 destinations in a prefix leave decapsulated by a port of
 * their own, to an application at the edge, whatever the session's FAR says. */
struct upf_breakout_key {
	__u32 prefixlen;
	__be32 addr;
};

struct upf_breakout {
	__u32 port;
	__u8 mac[6];
	__u16 pad;
};

enum upf_counter {
	UPF_CNT_UPLINK,
	UPF_CNT_DOWNLINK,
	UPF_CNT_UNKNOWN_TEID,
	UPF_CNT_MALFORMED_TUNNEL,
	UPF_CNT_UNKNOWN_EXT_HEADER,
	UPF_CNT_ECHO_ANSWERED,
	UPF_CNT_ERROR_INDICATION,
	UPF_CNT_END_MARKER,
	UPF_CNT_OTHER_MESSAGE,
	UPF_CNT_FAR_DROP,
	UPF_CNT_BUFFER_DROP,
	UPF_CNT_QER_DROP,
	UPF_CNT_NO_ROUTE,
	UPF_CNT_NO_ROOM,
	UPF_CNT_NOT_A_SESSION,
	UPF_CNT_BREAKOUT,
	UPF_CNT_SEGMENT_REFUSED,
};

#endif
