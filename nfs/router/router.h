/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Layouts shared by the router NF and its routes codec. */
#ifndef XNF_NF_ROUTER_H
#define XNF_NF_ROUTER_H

#include <linux/types.h>

#define RT_MAX_ROUTES (1u << 20)
#define RT_LOCAL_PORT 0xffffffffu /* "local PREFIX": to this host's own stack */

struct rt_key4 {
	__u32 prefixlen;
	__u8 addr[4];
};

struct rt_key6 {
	__u32 prefixlen;
	__u8 addr[16];
};

struct rt_nexthop {
	__u32 port;     /* egress port, or RT_LOCAL_PORT */
	__u8 mac[6];    /* next hop's MAC: the new destination */
	__u16 pad;
};

/* Source MAC per egress port; all zero: keep the frame's destination (our ingress MAC). */
struct rt_port_mac {
	__u8 mac[6];
	__u16 set;
};

enum rt_counter {
	RT_CNT_FORWARDED,
	RT_CNT_EXPIRED,
	RT_CNT_NO_ROUTE,
	RT_CNT_LOCAL,
	RT_CNT_NON_IP,
};

#endif
