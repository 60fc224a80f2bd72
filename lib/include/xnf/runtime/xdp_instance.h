/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The kernel data path of one NF instance: the embedded BPF object loaded and
 * attached to its ports through bpf_links, so that nothing stays attached when
 * the process ends, however it ends.
 */
#ifndef XNF_RUNTIME_XDP_INSTANCE_H
#define XNF_RUNTIME_XDP_INSTANCE_H

#include <net/if.h>
#include <stdbool.h>

#include <xnf/common.h>
#include <xnf/runtime/map_ref.h>
#include <xnf/runtime/types.h>

struct bpf_object;
struct xnf_embedded;

struct xnf_xdp_instance {
	struct xnf_embedded *embedded;
	struct bpf_object *obj;
	int prog_fd;
	int stats_fd;
	bool generic; /* skb mode instead of the driver's native XDP */
	__u32 nports;
	struct xnf_port ports[XNF_MAX_PORTS];
	int link_fds[XNF_MAX_PORTS]; /* bpf_link fds: closing the last one detaches */
};

/* Loads the NF for these ports. On failure prints one clear message (with the
 * verifier's last lines if it refused the program) and returns -1. */
/*
 * Opens and loads the embedded object. sizes override max_entries; when the
 * NF runs in user space its own maps are cut to one entry (only the native
 * twins hold data), so a large table is not allocated twice; in a split
 * chain, those of the members the workers run.
 */
/* What the program does around the NF, written into its .rodata. */
struct xnf_xdp_plan {
	enum xnf_datapath datapath;
	__u32 chain_split;                        /* XNF_DATAPATH_SPLIT: members the kernel runs */
	const struct xnf_local_dispatch *local;   /* the dispatcher (--local), or NULL */
	__u32 offload_table;                      /* --offload-drops: the pre-filter's rules; 0: off */
};

int xnf_xdp_load(struct xnf_xdp_instance *x, const struct xnf_port *ports, __u32 nports, bool generic,
		 const struct xnf_xdp_plan *plan, const struct xnf_map_size *sizes, __u32 nsizes);
/* Attaches to every port, or to none: on failure nothing stays attached. */
int xnf_xdp_attach(struct xnf_xdp_instance *x);
void xnf_xdp_detach(struct xnf_xdp_instance *x);
void xnf_xdp_destroy(struct xnf_xdp_instance *x);

/* The socket map (XSKMAP) the program redirects to in the AF_XDP modes; -1 if the object has none. */
int xnf_xdp_socket_map_fd(const struct xnf_xdp_instance *x);

/* Map resolver for the control plane (ctx is the instance). */
int xnf_xdp_resolve_map(void *ctx, const char *name, struct xnf_map_ref *ref);
/* Sums the per-CPU verdict counters. 0 or -errno. */
int xnf_xdp_read_stats(const struct xnf_xdp_instance *x, struct xnf_counter totals[XNF_STAT_NSLOTS]);

#endif
