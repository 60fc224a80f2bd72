/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* One running NF instance, shared by the NF binary's option parsing, life cycle and reports. */
#ifndef XNF_LIB_RUNTIME_INSTANCE_H
#define XNF_LIB_RUNTIME_INSTANCE_H

#include <stdio.h>
#include <time.h>

#include <xnf/runtime/afxdp.h>
#include <xnf/runtime/control.h>
#include <xnf/runtime/egress_watch.h>
#include <xnf/runtime/rules_engine.h>
#include <xnf/runtime/rules_generations.h>
#include <xnf/runtime/xdp_instance.h>

#include "drop_offload.h"
#include "port_guard.h"

struct mode_info {
	const char *name;
	bool available;
	bool generic;                /* skb-mode XDP */
	enum xnf_datapath datapath;  /* where the NF runs */
	bool sockets;                /* AF_XDP sockets are opened */
	enum xnf_afxdp_wait wait;
	const char *summary;
	enum xnf_kernel_hook hook;   /* where the kernel build runs: XDP, or tc ingress (the skb layer) */
	unsigned needs;              /* the kernel facilities it cannot run without: XNF_NEEDS(XNF_KF_...) bits */
};

#define XNF_NEEDS(facility) (1u << (facility))

extern const struct mode_info xnf_modes[];
extern const size_t xnf_nmodes;
const struct mode_info *xnf_find_mode(const char *name);
bool xnf_mode_keeps_state(const struct mode_info *mode);
/* Whether its AF_XDP workers transmit what the NF forwards (the xdp-sk modes' workers never do). */
bool xnf_mode_workers_send(const struct mode_info *mode);
/* The first facility mode needs that this kernel refuses, or -1; the tc hook takes TCX or, without it, clsact. */
int xnf_mode_missing_facility(const struct mode_info *mode);
/* Refuses a mode this kernel cannot run, naming the facility: 0, or -1 after one message. */
int xnf_mode_check_kernel(const struct mode_info *mode);
/* The table's modes as "a, b, c", for messages: those whose NF runs in user space, those with AF_XDP sockets,
 * those whose workers send (lib/include/xnf/runtime/modes.h declares them for the rest of libxnf). */
#include <xnf/runtime/modes.h>

#define XNF_MAX_MAP_SIZES 16
#define XNF_MAX_OPTION_RULES 8

struct run_options {
	const struct mode_info *mode;
	char *ifaces[XNF_MAX_PORTS + 1];
	__u32 nifaces;
	const char *rules;
	const char *name;
	const char *run_dir;
	struct xnf_afxdp_config afxdp;
	bool no_need_wakeup;
	bool verbose;
	bool verifier_stats;              /* --verifier-stats */
	struct xnf_map_size map_sizes[XNF_MAX_MAP_SIZES]; /* --map-size NAME=ENTRIES */
	__u32 nmap_sizes;
	char *option_rules[XNF_MAX_OPTION_RULES]; /* the NF's own options, as the rule lines they stand for */
	const char *option_names[XNF_MAX_OPTION_RULES];
	__u32 noption_rules;
	struct xnf_local_dispatch local;  /* --local */
	__u32 chain_split;                /* --split: a chain's members that run in XDP (0: not split) */
	struct drop_offload_config offload; /* --offload-drops and its settings */
	int attach;                       /* --attach: enum xnf_attach_via */
	__u32 priority;                   /* --priority: the run priority in libxdp's dispatcher */
	const char *pin_dir;              /* --pin: where the maps are pinned while it runs, or NULL */
	const char *state_dir;            /* --state: where the kernel path is kept across restarts, or NULL */
	int peers;                        /* --peers: enum xnf_peers_policy */
	int tc_send;                      /* --tc-send: enum xnf_tc_send */
};

/* --mode tc: how a frame leaves a veth whose peer is in another namespace. */
enum xnf_tc_send { XNF_TC_SEND_PEER, XNF_TC_SEND_DEVICE };
extern const char *const xnf_tc_send_names[];

/* How the program reaches the hook: alone through bpf_links, or in libxdp's dispatcher beside others. */
enum xnf_attach_via { XNF_ATTACH_LINK, XNF_ATTACH_LIBXDP, XNF_ATTACH_CLSACT };
extern const char *const xnf_attach_names[];

struct instance {
	const struct run_options *opt;
	const struct mode_info *mode;
	struct xnf_xdp_instance xdp;
	const struct xnf_xdp_plan *plan;   /* what the kernel side was loaded with */
	struct xnf_afxdp *afxdp;
	struct drop_offload *offload;      /* --offload-drops, or NULL */
	struct xnf_rules_file *rules;      /* --rules, read once at the start */
	struct xnf_control_server control;
	struct timespec started;
	bool state_kept;                   /* --state: attached through kept links, which outlive the process */
	struct capture_session *capture;   /* xnf dump's running (or last) capture, or NULL */
	struct port_guard ports;           /* the ports' checks, their peers' fixes, checksum finishing */
	struct xnf_egress_watch *egress;   /* what the kernel did with the frames the NF sent from XDP, or NULL */
	struct xnf_rules_view rules_view;  /* the maps as the rules see them (xnf_instance_maps) */
};

/* The NF's maps, on the side that runs it (native in the user-space modes, the kernel's otherwise). */
struct xnf_rules_target xnf_instance_maps(struct instance *in);

/* --map-size names one of the NF's own maps; its native twin gets the same size (before the native maps are made). */
int xnf_size_native_maps(const struct run_options *opt);

/* Sets up, serves until SIGINT/SIGTERM/SIGHUP, tears down. Returns the exit code. */
int xnf_instance_run(const struct run_options *opt, const struct mode_info *mode);

/* Control-socket answers (instance_report.c). */
int xnf_report_info(void *ctx, FILE *out);
int xnf_report_stats(void *ctx, FILE *out);
int xnf_report_frames(void *ctx, FILE *out);
/* One line when it stops: how long it ran and its frames per verdict. */
void xnf_report_summary(struct instance *in, FILE *out);

#endif
