/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Layouts shared by the NAT, its rules codec and its start and sweep steps. */
#ifndef XNF_NF_NAT_H
#define XNF_NF_NAT_H

#include <linux/types.h>

#define NAT_DEFAULT_MAPPINGS 65536  /* inside endpoints translated at once */
#define NAT_DEFAULT_SESSIONS 262144 /* (inside endpoint, remote endpoint) pairs */
#define NAT_MAX_LOCAL_ADDRS 64
#define NAT_MAX_FORWARDS 4096
#define NAT_PORT_TRIES 32           /* public ports tried for a new mapping before the pool counts as full */
#define NAT_MAX_PUBLIC 16           /* public addresses */
#define NAT_MAX_INSIDE_PREFIXES 1024
#define NAT_MAX_PREFIXES6 64        /* NPTv6 prefix pairs */
#define NAT_MAX_PREFIX6_LEN 64      /* RFC 6296: the adjustment goes in the subnet or interface identifier */

/* Idle times after which a mapping or session is over (RFC 4787 REQ-5, RFC 5382 REQ-5, RFC 5508 REQ-1). */
#define NAT_DEFAULT_TIMEOUT_TCP_S 7440
#define NAT_DEFAULT_TIMEOUT_UDP_S 300
#define NAT_DEFAULT_TIMEOUT_ICMP_S 60
/* A TCP connection after a FIN or RST (RFC 5382 REQ-5's transitory idle time). */
#define NAT_DEFAULT_TIMEOUT_TCP_CLOSING_S 240

/* An endpoint of the inside: address, port (the echo identifier for ICMP), protocol. */
struct nat_endpoint {
	__be32 addr;
	__be16 port;
	__u8 proto;
	__u8 pad;
};

/* What an inside endpoint is seen as from outside: the same public port to every remote (endpoint-independent
 * mapping, RFC 4787 REQ-1). */
struct nat_mapping {
	__be16 public_port;
	__u8 addr_index; /* its public address's slot in nat_public */
	__u8 pad;
	__u32 pad2;
	__u64 last_seen_ns; /* CLOCK_MONOTONIC on both sides */
};

/* A public port of a protocol on one of the public addresses (its slot in nat_public), as it arrives from outside.
 * Port forwards are on the first slot's address. */
struct nat_public_key {
	__be16 port;
	__u8 proto;
	__u8 addr_index;
};

/* The inside endpoint behind a public port, and where to find it. */
struct nat_binding {
	struct nat_endpoint inside;
	__u8 mac[6];    /* the inside host's, from its first packet */
	__u16 pad;
	__u64 last_seen_ns;
	__u32 closing;  /* TCP: a FIN or RST seen since the last SYN, so the closing idle time applies */
	__u32 pad2;
};

/* A conversation between an inside endpoint and a remote one: only remotes the inside has sent to get in
 * (address-and-port-dependent filtering, RFC 4787 REQ-8's stricter choice, as Linux's conntrack does). */
struct nat_session_key {
	struct nat_endpoint inside;
	__be32 remote_addr;
	__be16 remote_port;
	__u16 pad;
};

struct nat_session {
	__u64 last_seen_ns;
	__u32 closing;  /* as the binding's */
	__u32 pad;
};

/* A port forward (destination NAT): a public port of a protocol that leads to an inside server, from any remote. */
struct nat_forward {
	struct nat_endpoint inside;
	__u8 mac[6];    /* the inside server's */
	__u16 pad;
};

/* The public port an inside server answers from: nat_forwards read backwards (built after every rule change). */
struct nat_forward_back {
	__be16 public_port;
	__u16 pad;
};

/* An inside prefix (nat_inside, longest-prefix match): where the rules name any, only sources within one of them are
 * translated. */
struct nat_inside_prefix {
	__u32 prefixlen;
	__be32 addr;
};

/* An IPv6 prefix translated by NPTv6 (RFC 6296): stateless, and checksum-neutral, so no L4 checksum changes. */
struct nat_prefix6_key {
	__u32 prefixlen;
	__u8 addr[16];
};

/* What a prefix becomes: the other side's prefix of the same length, and what is added (ones' complement, network
 * order) to the word that keeps the address's checksum sum as it was. */
struct nat_prefix6 {
	__u8 addr[16];
	__u16 adjustment;
	__u8 len;       /* the prefixes' length (an LPM lookup gives the value, not the key it matched) */
	__u8 pad;
};

/* One of the box's own addresses (read at start): frames to it are the local stack's. */
struct nat_local_addr {
	__be32 addr;
};

struct nat_local6_addr {
	__u8 addr[16];
};

/* A public address and its pool of ports (host order), in the slot the NAT's commit step gave it: a slot keeps its
 * address while the address is in the rules, so that the mappings made on it stay right. */
struct nat_public {
	__be32 addr;
	__u16 port_lo;
	__u16 port_hi;
};

/* A public address as the rules give it (nat_public_set, keyed by the address): its pool of ports. */
struct nat_public_ports {
	__u16 port_lo;
	__u16 port_hi;
};

/* The outside: the port translated frames leave by and the next hop's MAC. */
struct nat_outside {
	__u32 port;
	__u8 gateway_mac[6];
	__u16 set;
};

/* A port's own MAC, the source of frames it sends (read at start). */
struct nat_port_mac {
	__u8 mac[6];
	__u16 set;
};

enum nat_setting {
	NAT_SETTING_INSIDE_PORT = 0, /* the port index + 1; 0: not given */
	NAT_SETTING_TIMEOUT_TCP_S,
	NAT_SETTING_TIMEOUT_UDP_S,
	NAT_SETTING_TIMEOUT_ICMP_S,
	NAT_SETTING_TIMEOUT_TCP_CLOSING_S,
	NAT_SETTING_PUBLIC_SLOTS,    /* slots of nat_public in use: the highest + 1 (the commit step's) */
	NAT_SETTING_INSIDE_PREFIXES, /* entries of nat_inside (the commit step's): 0, every source is inside */
	NAT_NSETTINGS,
};

enum nat_counter {
	NAT_CNT_NEW_MAPPING,
	NAT_CNT_NEW_SESSION,
	NAT_CNT_OUT,
	NAT_CNT_IN,
	NAT_CNT_FILTERED,
	NAT_CNT_NOT_MAPPED,
	NAT_CNT_POOL_FULL,
	NAT_CNT_TABLE_FULL,
	NAT_CNT_ICMP_ERROR_IN,
	NAT_CNT_FORWARD_IN,
	NAT_CNT_HAIRPIN,
	NAT_CNT_FRAGMENT,
	NAT_CNT_UNTRANSLATED,
	NAT_CNT_ICMP_ERROR_OUT,
	NAT_CNT_PREFIX6_OUT,
	NAT_CNT_PREFIX6_IN,
	NAT_CNT_UNTRANSLATABLE,
};

/* Every setting in one value (nat_settings): what the packet path reads, once a frame. The commit step writes it from
 * nat_config's slots, which the rules and the commit step itself set one by one. */
struct nat_settings {
	__u32 value[NAT_NSETTINGS];
};

/* The setting that holds the idle time of an entry of the protocol, closing or not. */
static inline __attribute__((always_inline)) __u32 nat_timeout_slot(__u8 proto, __u32 closing)
{
	if (proto == 6)
		return closing ? NAT_SETTING_TIMEOUT_TCP_CLOSING_S : NAT_SETTING_TIMEOUT_TCP_S;
	return proto == 17 ? NAT_SETTING_TIMEOUT_UDP_S : NAT_SETTING_TIMEOUT_ICMP_S;
}

static inline __attribute__((always_inline)) __u32 nat_default_timeout_s(__u32 slot)
{
	switch (slot) {
	case NAT_SETTING_TIMEOUT_TCP_S:
		return NAT_DEFAULT_TIMEOUT_TCP_S;
	case NAT_SETTING_TIMEOUT_TCP_CLOSING_S:
		return NAT_DEFAULT_TIMEOUT_TCP_CLOSING_S;
	case NAT_SETTING_TIMEOUT_UDP_S:
		return NAT_DEFAULT_TIMEOUT_UDP_S;
	default:
		return NAT_DEFAULT_TIMEOUT_ICMP_S;
	}
}

#endif
