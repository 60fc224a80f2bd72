/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Layouts shared by the container forwarder and its rules codec. */
#ifndef XNF_NF_FWD_H
#define XNF_NF_FWD_H

#include <linux/types.h>

#define FWD_MAX_ENTRIES 65536
#define FWD_UPLINK_PORT 0
#define FWD_MAX_VLANS 4094

struct fwd_ip_key {
	__u32 prefixlen;
	__u8 addr[4];
};

struct fwd_ip6_key {
	__u32 prefixlen;
	__u8 addr[16];
};

struct fwd_mac_key {
	__u8 mac[6];
	__u16 pad;
};

/* Where a frame for a container goes: its port, and the container's MAC as the new destination. */
struct fwd_target {
	__u32 port;
	__u8 mac[6];
	__u16 pad;
};

/* The uplink's next hop (destination) and the MAC frames leave the uplink with (source). */
struct fwd_uplink {
	__u8 next_hop[6];
	__u8 source[6];
	__u32 set;
};

/* A VLAN of the uplink (an outermost 802.1Q tag's id) bridged to a container port (fwd_by_vlan: id -> port): its
 * frames go there with the tag taken off, whatever they are, and every frame of the port leaves the uplink with the
 * tag put on (fwd_port_vlan: port -> id, 0 for none, built from fwd_by_vlan after every change of the rules). */
struct fwd_vlan_key {
	__u16 id;
	__u16 pad;
};

enum fwd_counter {
	FWD_CNT_TO_CONTAINER,
	FWD_CNT_TO_UPLINK,
	FWD_CNT_TO_HOST,
	FWD_CNT_VLAN_ERROR,   /* a tag that could not be put on or taken off (no room in front): dropped */
};

#endif
