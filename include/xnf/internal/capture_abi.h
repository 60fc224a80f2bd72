/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What a capture (xnf dump) carries from the data path to the instance's capture thread, the same on both
 * sides: the kernel glue puts these in a BPF ring buffer, the AF_XDP workers in their capture queues, and the
 * thread sends them on to the client as they are (header, then cap_len bytes of the frame).
 */
#if !defined(XNF_INTERNAL_OK) && !defined(XNF__FROM_SDK)
#error "xnf/internal/ is xnf's own glue, not the NF API"
#endif
#ifndef XNF_CAPTURE_ABI_H
#define XNF_CAPTURE_ABI_H

#include <linux/types.h>

/* The bytes of each frame kept: its headers and then some (the wire length is kept whole). */
#define XNF_CAPTURE_SNAP 256
/* The kernel's ring buffer: about 3,600 records between two reads of the capture thread. */
#define XNF_CAPTURE_RING_BYTES (1u << 20)

enum xnf_capture_side {
	XNF_CAPTURE_KERNEL = 0,  /* the NF ran in XDP */
	XNF_CAPTURE_WORKER = 1,  /* the NF ran (or, in hybrid mode, its verdict was carried out) in a worker */
	XNF_CAPTURE_END = 255,   /* the stream's last header: a JSON line with the totals follows */
};

struct xnf_capture_header {
	__u64 mono_ns;  /* CLOCK_MONOTONIC, when the verdict was given */
	__u32 wire_len; /* the frame's length after the NF (it may have grown or shrunk it) */
	__u32 cap_len;  /* bytes that follow: min(wire_len, XNF_CAPTURE_SNAP) */
	__u32 ifindex;  /* the port it came in on */
	__u16 queue;
	__u8 slot;      /* enum xnf_stat_slot: the verdict */
	__u8 side;      /* enum xnf_capture_side */
};

struct xnf_capture_record {
	struct xnf_capture_header h;
	__u8 data[XNF_CAPTURE_SNAP];
};

/* The capture switch the kernel reads per frame: which verdict slots to capture (0: none), and the records
 * the ring buffer had no room for. */
struct xnf_capture_control {
	__u32 slots;
	__u32 reserved;
	__u64 lost;
};

#endif
