/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What becomes of the frames an NF sends on from XDP after its verdict: the
 * egress watcher's tracepoint programs (lib/xdp/egress_watch.bpf.c) count,
 * per port, the frames a device took, dropped or the kernel refused, so that
 * a frame the kernel loses after the NF said "send" is counted, not silent.
 */
#ifndef XNF_RUNTIME_EGRESS_WATCH_H
#define XNF_RUNTIME_EGRESS_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <xnf/runtime/types.h>

struct xnf_egress_watch;

/* Watches the frames the program whose port map is ports_map_fd sends out of these ports (in this
 * namespace); at_tc: the program runs at tc, where only the redirects the kernel refused are counted, on the port
 * each frame came in by. NULL with the reason in err when this kernel does not let it. */
struct xnf_egress_watch *xnf_egress_watch_open(const struct xnf_port *ports, __u32 nports, int ports_map_fd,
					       bool at_tc, char *err, size_t err_len);
void xnf_egress_watch_close(struct xnf_egress_watch *w);
/* The counts as a JSON member: , "egress": {"sent": ..., "dropped": ..., "refused": ..., "ports": [...]}. */
int xnf_egress_watch_json(const struct xnf_egress_watch *w, FILE *out);
/* Frames lost after the verdict so far (dropped and refused), for the summary. */
__u64 xnf_egress_watch_lost(const struct xnf_egress_watch *w);

#endif
