/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The live-frames transmit path (--tx-path live): the program of
 * live_tx.bpf.c loaded for one instance, the UMEM that the workers and the
 * program share, and the call that sends a worker's gathered frames.
 */
#ifndef XNF_LIB_AFXDP_LIVE_TX_H
#define XNF_LIB_AFXDP_LIVE_TX_H

#include <stddef.h>

#include <xnf/runtime/port_checks.h>   /* XNF_LIVE_MAX_FRAME */
#include <xnf/runtime/types.h>

#include "live_tx_abi.h"

struct xnf_live_tx;

/*
 * Loads the program for these ports and workers, with frames[w] UMEM frames
 * of frame_size bytes for worker w, and checks that this kernel runs live
 * frames. On failure writes the reason into err and returns NULL.
 */
struct xnf_live_tx *xnf_live_tx_open(const struct xnf_port *ports, __u32 nports, __u32 nworkers,
				     const __u64 *frames, __u32 frame_size, char *err, size_t err_len);
void xnf_live_tx_close(struct xnf_live_tx *t);

/* Worker w's stretch of the shared UMEM (frames[w] frames), and the index of its first frame. */
void *xnf_live_tx_umem(const struct xnf_live_tx *t, __u32 worker);
__u32 xnf_live_tx_first_frame(const struct xnf_live_tx *t, __u32 worker);
/* Worker w's XNF_LIVE_MAX_BATCH descriptors, and its cursor (read for its counters). */
struct xnf_live_desc *xnf_live_tx_descs(const struct xnf_live_tx *t, __u32 worker);
const struct xnf_live_cursor *xnf_live_tx_cursor(const struct xnf_live_tx *t, __u32 worker);

/* The errno (negative) of the last frame the kernel or a device refused in worker w's calls, and its port;
 * 0 if none since the last time. Only between the worker's own calls. */
int xnf_live_tx_take_error(struct xnf_live_tx *t, __u32 worker, __u32 *port);

/*
 * Sends worker w's first count descriptors: one BPF_PROG_RUN call (more
 * only if a signal cuts one short), entering on ingress_port, where the frames
 * marked to_stack are received. When it returns, every frame has been copied
 * out of the UMEM. Returns the number of calls made, or -errno with *unsent
 * set to the frames no call reached.
 */
int xnf_live_tx_send(struct xnf_live_tx *t, __u32 worker, __u32 count, __u32 ingress_port, __u32 *unsent);

#endif
