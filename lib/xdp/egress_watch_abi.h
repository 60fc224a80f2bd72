/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What the egress watcher (egress_watch.bpf.c) counts, shared with its loader (egress_watch.c). */
#ifndef XNF_LIB_XDP_EGRESS_WATCH_ABI_H
#define XNF_LIB_XDP_EGRESS_WATCH_ABI_H

#include <linux/types.h>

#define XNF_EGRESS_MAX_PORTS 8 /* XNF_MAX_PORTS: the loader checks they agree */
/* The kernel functions that carry out a tc redirect and free the skb where they cannot (egress_watch.c names them). */
#define XNF_EGRESS_REDIRECT_TEXTS 3

/* Per port, per CPU: the frames the NF sent out of it from XDP, after its verdict. */
struct xnf_egress_counts {
	__u64 sent;       /* a device took them */
	__u64 dropped;    /* the device refused them when the queue was flushed (a full ring) */
	__u64 refused;    /* the kernel would not queue them (no XDP frames taken, port down, over the MTU) */
	__s64 last_error; /* the errno (negative) of the last refusal or drop */
};

#endif
