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

/* The most bytes of a frame a capture keeps (its snap length, chosen per capture: xnf dump -s): a jumbo frame's.
 * The wire length is kept whole either way. */
#define XNF_CAPTURE_SNAP_MAX 9216
/* The kernel's ring buffer: about 3,600 records of 256 bytes between two reads of the capture thread. */
#define XNF_CAPTURE_RING_BYTES (1u << 20)
/* Where a frame is captured: as it came in, before anything ran (xdpdump's entry), and after the NF's verdict. */
#define XNF_CAPTURE_AT_ENTRY (1u << 0)
#define XNF_CAPTURE_AT_EXIT (1u << 1)
/* The slot of a record captured at the entry: no verdict yet. */
#define XNF_CAPTURE_SLOT_ENTRY 254

enum xnf_capture_side {
	XNF_CAPTURE_KERNEL = 0,  /* the NF ran in XDP */
	XNF_CAPTURE_WORKER = 1,  /* the NF ran (or, in hybrid mode, its verdict was carried out) in a worker */
	XNF_CAPTURE_TC = 2,      /* the NF ran at tc (--mode tc) */
	XNF_CAPTURE_END = 255,   /* the stream's last header: a JSON line with the totals follows */
};

struct xnf_capture_header {
	__u64 mono_ns;  /* CLOCK_MONOTONIC, when the verdict was given */
	__u32 wire_len; /* the frame's length after the NF (it may have grown or shrunk it) */
	__u32 cap_len;  /* bytes that follow: min(wire_len, the capture's snap length) */
	__u32 ifindex;  /* the port it came in on */
	__u16 queue;
	__u8 slot;      /* enum xnf_stat_slot: the verdict; XNF_CAPTURE_SLOT_ENTRY before it */
	__u8 side;      /* enum xnf_capture_side */
};

struct xnf_capture_record {
	struct xnf_capture_header h;
	__u8 data[XNF_CAPTURE_SNAP_MAX];
};

/* A record whose kept bytes fit here is reserved in the kernel's ring at this size and filled in place: one copy,
 * where a longer one is built aside first. */
#define XNF_CAPTURE_SHORT 256
struct xnf_capture_short_record {
	struct xnf_capture_header h;
	__u8 data[XNF_CAPTURE_SHORT];
};

/* The capture switch the kernel reads per frame: which verdict slots to capture at the exit (0: none), whether
 * to capture at the entry too, the snap length, and the records the ring buffer had no room for. */
struct xnf_capture_control {
	__u32 slots;
	__u32 at;    /* XNF_CAPTURE_AT_ENTRY: every frame as it came in */
	__u32 snap;  /* 1..XNF_CAPTURE_SNAP_MAX */
	__u32 reserved;
	__u64 lost;
};

#endif
