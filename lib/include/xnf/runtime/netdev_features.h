/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What an interface can do with XDP frames right now, as the kernel advertises it. */
#ifndef XNF_RUNTIME_NETDEV_FEATURES_H
#define XNF_RUNTIME_NETDEV_FEATURES_H

#include <linux/types.h>

/* NETDEV_XDP_ACT_NDO_XMIT: the interface takes frames redirected to it from XDP. A veth has it while
 * its peer has an XDP program or GRO. */
#define XNF_XDP_ACT_NDO_XMIT 4

/* The interface's NETDEV_XDP_ACT_* flags in this namespace. 0, or -errno (-ENOENT: the kernel predates
 * the netdev netlink family, Linux 6.3). */
int xnf_netdev_xdp_features(int ifindex, __u64 *features);

#endif
