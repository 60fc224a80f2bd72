/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The kernel data path of one NF instance: the embedded BPF object loaded and
 * attached to its ports through bpf_links, so that nothing stays attached when
 * the process ends, however it ends; or (--attach libxdp) through libxdp's
 * multi-program dispatcher, beside other programs (xdp_libxdp.c).
 */
#ifndef XNF_RUNTIME_XDP_INSTANCE_H
#define XNF_RUNTIME_XDP_INSTANCE_H

#include <net/if.h>
#include <stdbool.h>

#include <xnf/common.h>
#include <xnf/runtime/embedded.h>
#include <xnf/runtime/map_ref.h>
#include <xnf/runtime/types.h>

struct bpf_object;
struct xnf_embedded;
struct xnf_libxdp;

/* How a tc program sits at a port, and so what taking it off means. */
enum xnf_tc_via {
	XNF_TC_VIA_LINK,       /* a TCX link: closing it takes the program off */
	XNF_TC_VIA_FILTER,     /* a filter in a clsact qdisc that was there before xnf: the filter is taken off */
	XNF_TC_VIA_OWN_QDISC,  /* a filter in the clsact qdisc xnf added: the filter, then the qdisc once it is empty */
};

struct xnf_xdp_instance {
	struct xnf_embedded *embedded;
	struct bpf_object *obj;
	int prog_fd;
	int stats_fd;
	bool generic; /* skb mode instead of the driver's native XDP */
	__u32 nports;
	struct xnf_port ports[XNF_MAX_PORTS];
	enum xnf_kernel_hook hook;   /* XDP, or tc ingress */
	int link_fds[XNF_MAX_PORTS]; /* bpf_link fds: closing the last one detaches */
	enum xnf_tc_via tc_via[XNF_MAX_PORTS]; /* at tc: how the program is attached at each port */
	struct xnf_config cfg;       /* what the program's .rodata says: the same for every copy of it */
	bool attach_libxdp;          /* --attach libxdp */
	bool attach_clsact;          /* --attach clsact */
	unsigned libxdp_priority;    /* its run priority in the dispatcher: lower runs first */
	const char *journal_dir;     /* where a libxdp attachment is written down (the run directory) */
	struct xnf_libxdp *libxdp;   /* the attachments, while attached through libxdp */
	bool pinned;                 /* --pin: its maps are pinned in bpffs */
	char state_dir[256];         /* --state: where the maps and links are kept across restarts, or "" */
	bool adopted;                /* --state: the maps are the kept ones, its rules and sessions in force */
	char *state_layout;          /* --state: what this build's maps are, as kept beside them */
	const char *nf_name;         /* the NF whose state --state keeps */
	char pin_dir[256];           /* --pin's folder, while its record is written */
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
	bool attach_libxdp;                       /* --attach libxdp, at --priority */
	bool attach_clsact;                       /* --attach clsact: tc through a clsact filter, not TCX */
	const char *state_dir;                    /* --state DIR, or NULL */
	const char *nf_name;                      /* whose state it is, for --state */
	unsigned libxdp_priority;
	const char *journal_dir;                  /* the run directory */
	bool held;                                /* frames dropped as not_ready until xnf_xdp_put_in_force */
	enum xnf_kernel_hook hook;                /* XDP, or tc ingress (--mode tc) */
	__u32 peer_ports;                         /* tc: veth ports whose peer is in another namespace */
	bool verifier_stats;                      /* --verifier-stats: say what the verifier's pass took */
	bool frags;                               /* XDP taking multi-buffer frames (BPF_F_XDP_HAS_FRAGS) */
	bool verdict_in_frame;                    /* hybrid: the verdict in front of the frame, not in its metadata */
};

int xnf_xdp_load(struct xnf_xdp_instance *x, const struct xnf_port *ports, __u32 nports, bool generic,
		 const struct xnf_xdp_plan *plan, const struct xnf_map_size *sizes, __u32 nsizes);
/* Lets frames through to the NF: from now on its rules are in force. 0, or -1 with a message. */
int xnf_xdp_put_in_force(struct xnf_xdp_instance *x);
/* tc_attach.c: the tc build at every port's ingress through TCX links (a clsact filter where the kernel has no
 * TCX), or at none; and taking it off. */
int xnf_tc_attach_ports(struct xnf_xdp_instance *x);
void xnf_tc_detach_ports(struct xnf_xdp_instance *x);
/* Any tc program at port's ingress or egress: through a TCX link where the kernel has TCX (returns its fd), else
 * (or with want_clsact) as a clsact filter (returns XNF_TC_NO_LINK); *via says which. A negative errno where neither
 * took it. Taken off by xnf_tc_detach. */
#define XNF_TC_NO_LINK (-4096)
/* xnf's clsact filter's handle and priority ("xn"): behind a filter of a lower pref, ahead of a higher one. */
#define XNF_TC_HANDLE 0x786e
#define XNF_TC_PRIORITY 0x786e
int xnf_tc_attach(int prog_fd, const struct xnf_port *port, bool egress, bool want_clsact, enum xnf_tc_via *via);
void xnf_tc_detach(const struct xnf_port *port, bool egress, int fd, enum xnf_tc_via via);
/* The programs at ifindex's TCX ingress, first to last: up to max ids, their number in *count (0 without TCX). */
int xnf_tc_ingress_programs(int ifindex, __u32 *ids, __u32 max, __u32 *count);
/* state_keep.c: --state DIR, the maps and links kept in bpffs so that the program forwards on when the process
 * stops and the next start adopts them. Before load: the kept maps reused (x->adopted), or a build whose maps
 * differ refused with the difference. Instead of attaching: maps and layout kept, each port's kept link moved to
 * this program (bpf_link_update), or a new one made and kept. */
int xnf_state_adopt_maps(struct xnf_xdp_instance *x, const char *dir);
/* All a --state folder holds, each xnf's: DIR/layout, DIR/maps/MAP, DIR/links/PORT (describe's state_folder: what
 * the service removes, and all it removes). */
#define XNF_STATE_LAYOUT "layout"
#define XNF_STATE_MAPS "maps"
#define XNF_STATE_LINKS "links"
int xnf_state_attach(struct xnf_xdp_instance *x);
/* Attaches to every port, or to none: on failure nothing stays attached. */
int xnf_xdp_attach(struct xnf_xdp_instance *x);
void xnf_xdp_detach(struct xnf_xdp_instance *x);
void xnf_xdp_destroy(struct xnf_xdp_instance *x);

/* xdp_libxdp.c: attach to every port through libxdp's dispatcher, or to none; detach; and, before any start on
 * port, remove what a killed instance left in its dispatcher. */
int xnf_libxdp_attach(struct xnf_xdp_instance *x, const char *journal_dir);
void xnf_libxdp_detach(struct xnf_xdp_instance *x);
void xnf_libxdp_recover(const char *dir, const struct xnf_port *port);
/* map_pins.c: --pin DIR, every map of the object pinned as DIR/NAME until unpinned (xnf_xdp_destroy does it). */
int xnf_xdp_pin_maps(struct xnf_xdp_instance *x, const char *dir);
void xnf_xdp_unpin_maps(struct xnf_xdp_instance *x);
/* libxdp's run priority when --priority is not given: its own default. */
#define XNF_LIBXDP_DEFAULT_PRIORITY 50

/* The socket map (XSKMAP) the program redirects to in the AF_XDP modes; -1 if the object has none. */
int xnf_xdp_socket_map_fd(const struct xnf_xdp_instance *x);

/* Map resolver for the control plane (ctx is the instance). */
int xnf_xdp_resolve_map(void *ctx, const char *name, struct xnf_map_ref *ref);
/* Sums the per-CPU verdict counters. 0 or -errno. */
int xnf_xdp_read_stats(const struct xnf_xdp_instance *x, struct xnf_counter totals[XNF_STAT_NSLOTS]);

#endif
