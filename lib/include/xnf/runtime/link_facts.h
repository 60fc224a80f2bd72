/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the kernel says of an interface (rtnetlink's link message and the
 * netdev family's XDP features), of a veth's peer in whatever namespace it
 * lives, and of that namespace: the facts the port checks (port_checks.c)
 * judge. Netlink through libmnl.
 */
#ifndef XNF_RUNTIME_LINK_FACTS_H
#define XNF_RUNTIME_LINK_FACTS_H

#include <linux/types.h>
#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>

/* NETDEV_XDP_ACT_* (linux/netdev.h, newer than the C library's headers here). */
#define XNF_XDP_ACT_BASIC (1u << 0)
#define XNF_XDP_ACT_REDIRECT (1u << 1)
/* The interface takes frames redirected to it from XDP. A veth has it while its peer has an XDP program
 * or GRO. */
#define XNF_XDP_ACT_NDO_XMIT (1u << 2)
#define XNF_XDP_ACT_XSK_ZEROCOPY (1u << 3)

/* The namespace an interface's peer lives in is this one. */
#define XNF_NSID_SAME (-1)

struct xnf_link {
	char name[IF_NAMESIZE];
	char kind[16];         /* IFLA_INFO_KIND: "veth", "bridge"...; "" for a plain device */
	int ifindex;
	int peer_ifindex;      /* IFLA_LINK: a veth's peer (0: none) */
	int peer_nsid;         /* IFLA_LINK_NETNSID: the peer's namespace as this one numbers it, or XNF_NSID_SAME */
	__u32 mtu;
	__u32 flags;           /* IFF_UP ... */
	__u32 rx_queues;
	__u32 tx_queues;
	bool xdp_attached;     /* an XDP program of any mode */
	__u32 xdp_prog_id;     /* its id (IFLA_XDP_PROG_ID), 0 when none */
	bool hardware;         /* a device on a bus (IFLA_PARENT_DEV_NAME): a NIC, not a virtual interface */
	__u64 tx_dropped;      /* IFLA_STATS64: frames it could not send (a veth: its peer's receive ring was full) */
	char parent[32];       /* its bus address, when hardware */
};

/* The link ifindex of the namespace nsid (as this one numbers it; XNF_NSID_SAME for this one). 0 or -errno. */
int xnf_link_get(int ifindex, int nsid, struct xnf_link *out);

/* A filter at an interface's clsact ingress (another party's, or xnf's own with --attach clsact). */
struct xnf_tc_filter {
	__u16 pref;
	char kind[16];         /* "bpf", "u32", "matchall"... */
	char name[64];         /* a bpf filter's program name (as tc loaded it), else "" */
	__u32 prog_id;         /* a bpf filter's program id, else 0 */
};

/* The filters at ifindex's clsact ingress (or egress) in this namespace, in priority order: up to max in out, how
 * many there are in *count (0 without a clsact qdisc). They run after every TCX program there. 0 or -errno. */
int xnf_clsact_filters(int ifindex, bool egress, struct xnf_tc_filter *out, __u32 max, __u32 *count);

/* The MAC address of the interface called name in this namespace. 0, or -1. */
int xnf_iface_mac(const char *name, __u8 mac[6]);

/* The interface's NETDEV_XDP_ACT_* flags in this namespace. 0, or -errno (-ENOENT: the kernel predates
 * the netdev netlink family, Linux 6.3). */
int xnf_netdev_xdp_features(int ifindex, __u64 *features);

/*
 * The namespace this one numbers nsid, opened (O_RDONLY): searched among the named ones (/run/netns) and
 * every process's. *how_to_enter gets what a user types to run a command there ("ip netns exec NAME",
 * "nsenter --net=/proc/PID/ns/net"). A file descriptor, or -errno (-ENOENT: no named namespace and no
 * process holds it).
 */
int xnf_netns_open(int nsid, char *how_to_enter, size_t len);

/* A datagram socket made inside the namespace ns_fd (for ioctls there: ethtool, interface names), and the
 * namespace's cookie (never reused while the system runs). The socket, or -errno. */
int xnf_netns_socket(int ns_fd, __u64 *cookie);

/* This namespace's cookie: 0 or -errno. */
int xnf_netns_cookie_here(__u64 *cookie);

/* Whether the namespace of this cookie still exists where xnf can reach it (named, or a process's), found by
 * its inode. */
bool xnf_netns_exists(__u64 cookie, __u64 inode);

#endif
