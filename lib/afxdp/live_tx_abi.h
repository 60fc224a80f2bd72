/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the live-frames transmit program (live_tx.bpf.c) and the workers that
 * call it (live_tx.c) agree on: the layout of the maps they share.
 *
 * A worker writes one descriptor per outgoing frame into its own stretch of
 * xnf_live_descs, sets its cursor's count and makes one BPF_PROG_RUN call in
 * live-frames mode; the program runs once per frame, takes descriptor `next`,
 * copies the frame's bytes from the UMEM (which is the xnf_live_umem map,
 * mmapped by the workers) into the live frame and redirects it to its port,
 * or, for a frame the NF passed, hands it to the local stack (XDP_PASS): the
 * kernel then receives it as if it had come in on the call's ingress port.
 */
#ifndef XNF_LIB_AFXDP_LIVE_TX_ABI_H
#define XNF_LIB_AFXDP_LIVE_TX_ABI_H

#include <linux/types.h>

/* Frames one call can carry: the size of each worker's stretch of descriptors. */
#define XNF_LIVE_MAX_BATCH 4096
/*
 * The dummy frame every live frame starts as, before the program sets the
 * real length. Its length says whose call it is: XNF_LIVE_SEED_LEN + the
 * worker's index (the kernel restores it for every frame of the call; the
 * call's rx queue, by contrast, is always 0). Small, because the kernel
 * copies it into every fresh page of the call.
 */
#define XNF_LIVE_SEED_LEN 64
#define XNF_LIVE_MAX_WORKERS 64
/* A frame's data must start in the first 512 bytes of its UMEM frame (copy mode puts it at 256) and end
 * within the frame: the verifier can then prove every copy in bounds without knowing the two together. */
#define XNF_LIVE_MAX_OFFSET 512
#define XNF_LIVE_MIN_LEN 14
#define XNF_LIVE_MAX_PORTS 8

struct xnf_live_desc {
	__u32 frame;  /* index of the UMEM frame in xnf_live_umem (all workers' frames, end to end) */
	__u16 offset; /* where the frame's data starts in it */
	__u16 len;
	__u32 port;   /* egress port: the key in xnf_live_ports */
	__u32 to_stack; /* XNF_PASS: into the local stack, as received on the call's ingress port */
};

/*
 * One per worker, on a cache line of its own. The worker writes count and
 * resets next before a call; everything else is the kernel side's.
 */
struct xnf_live_cursor {
	__u32 next;            /* the descriptor the program takes next */
	__u32 count;           /* descriptors in this call */
	__u64 refused;         /* frames the program could not build (length, offset, port): dropped */
	__u64 redirect_errors; /* frames the kernel would not queue for their port (down, too long, no XDP send) */
	__s32 last_error;      /* the errno of the last redirect error or device refusal (negative) */
	__u32 last_error_port; /* and the port it was for */
	__u64 device_sent;     /* frames the ports' drivers took */
	__u64 device_dropped;  /* frames handed to a driver that it refused (e.g. the veth peer's ring was full) */
	__u64 passed;          /* frames handed to the local stack */
	__u64 padding;
};

/*
 * Per CPU: whose frames sit in the kernel's per-CPU redirect queues right
 * now. The program counts each frame it redirects; the tracepoint programs
 * take the count back when the kernel queues (fails) or flushes them, so a
 * flush is only ever attributed to the worker whose frames it carried.
 */
struct xnf_live_inflight {
	__u32 worker;
	__u16 queued[XNF_LIVE_MAX_PORTS];
	__u32 reserved;
};

#endif
