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
	RT_CNT_TO_KERNEL, /* --fib kernel: the host's table leaves it to the stack (no neighbour yet, not ours...) */
};

/* Slots of rt_config. */
enum rt_setting {
	RT_SETTING_FIB_KERNEL = 0, /* 1: route by the host's table ("fib kernel"); 0: by our own */
	RT_NSETTINGS,
};

/*
 * The host's table as user space mirrors it for --fib kernel (router_control.c;
 * the kernel side asks bpf_fib_lookup instead).
 */
enum rt_kernel_route_kind {
	RT_KROUTE_UNICAST = 1, /* out of `port`, to `gateway` or, without one, to the destination itself */
	RT_KROUTE_LOCAL,       /* one of the host's own addresses: to the stack */
	RT_KROUTE_DROP,        /* blackhole, unreachable, prohibit */
	RT_KROUTE_ELSEWHERE,   /* out of an interface this instance does not hold: to the stack */
};

struct rt_kernel_route {
	__u32 kind;
	__u32 port;
	__u32 has_gateway;
	__be32 gateway[4];
	__u32 generation; /* the mirror's refresh that last saw it: older ones are gone from the host */
};

struct rt_neigh_key {
	__u32 family; /* 4 or 6 */
	__be32 addr[4];
};

struct rt_neigh {
	__u8 mac[6];
	__u16 pad;
	__u32 generation;
};

#endif
