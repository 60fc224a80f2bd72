/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The runtime's own small types, shared by its layers (ports, the XDP loader, the AF_XDP runtime). */
#ifndef XNF_RUNTIME_TYPES_H
#define XNF_RUNTIME_TYPES_H

#include <linux/types.h>
#include <net/if.h>

#include <xnf/common.h> /* XNF_MAX_PORTS, XNF_MAX_QUEUES */

/* A port: an interface the instance runs on, numbered in command-line order. */
struct xnf_port {
	char name[IF_NAMESIZE];
	int ifindex;
};

/* A map's max_entries chosen at run time (--map-size), for both of its sides. */
struct xnf_map_size {
	const char *name;
	__u32 entries;
};

/* The dispatcher's table (--local): what goes to the local stack in XDP, before the NF in user space. */
struct xnf_local_dispatch {
	__u32 queues;                /* a bit per rx queue */
	__u32 nports;
	struct xnf_local_key ports[XNF_MAX_LOCAL_PORTS];
};

#endif
