/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef XNF_GEN_IFACE_STATS_H
#define XNF_GEN_IFACE_STATS_H

#include <linux/types.h>

/* Sum of the interface's ethtool statistics whose name ends with suffix; -1 if unreadable. */
long long iface_stat_sum(const char *ifname, const char *suffix);

#endif
