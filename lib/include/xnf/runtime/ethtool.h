/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * An interface's offload features by name (what `ethtool -k/-K` shows and
 * sets), its queue counts (`ethtool -l`) and its driver (`ethtool -i`),
 * through the ethtool ioctl on a socket of the interface's namespace
 * (xnf_netns_socket for another namespace's).
 */
#ifndef XNF_RUNTIME_ETHTOOL_H
#define XNF_RUNTIME_ETHTOOL_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

/* The features xnf reads and changes, by the kernel's names. */
#define XNF_FEATURE_GRO "rx-gro"
/* A stack that sees any of these on its interface leaves TCP/UDP checksums to the "hardware". */
extern const char *const xnf_tx_checksum_features[];

struct xnf_features;

/* The interface's features, or NULL with errno. */
struct xnf_features *xnf_features_read(int sock, const char *ifname);
void xnf_features_free(struct xnf_features *f);
bool xnf_feature_active(const struct xnf_features *f, const char *name);
/* Whether any of names (NULL-terminated) is active. */
bool xnf_features_any_active(const struct xnf_features *f, const char *const names[]);
/* Requests names (NULL-terminated) on or off; names the interface lacks are skipped. 0 or -errno. */
int xnf_features_set(int sock, const char *ifname, const struct xnf_features *f, const char *const names[],
		     bool on);

/* Queues in use: rx and tx (a combined channel counts for both). 0 or -errno. */
int xnf_channels(int sock, const char *ifname, __u32 *rx, __u32 *tx);
/* The driver's name ("veth", "ixgbe"). 0 or -errno. */
int xnf_driver(int sock, const char *ifname, char *driver, size_t len);

#endif
