/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A set of frames read from a pcap file (libpcap): what `xnf-<nf> cost` runs the NF on. */
#ifndef XNF_LIB_RUNTIME_FRAME_SET_H
#define XNF_LIB_RUNTIME_FRAME_SET_H

#include <linux/types.h>

#define FRAME_SET_MAX 4096  /* the longest frame taken, as an AF_XDP frame holds it */

struct frame_set {
	__u8 **data;
	__u32 *len;
	__u32 n;
};

/* Reads every frame of path; 0, or -1 after a message (not a pcap, a frame over FRAME_SET_MAX, no frame). */
int frame_set_read(const char *path, struct frame_set *out);
void frame_set_free(struct frame_set *s);

#endif
