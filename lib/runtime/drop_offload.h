/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The offload controller (--offload-drops): on the control thread, it watches the
 * drop rate of each of the NF's pure-drop rules (xnf/drop_rules.h), copies a rule
 * into the XDP pre-filter above one rate and takes it out below another. Each
 * switch is one kernel map update: a packet is dropped by the kernel's copy or
 * reaches the NF, which still holds the rule; nothing that should pass is lost.
 */
#ifndef XNF_RUNTIME_DROP_OFFLOAD_H
#define XNF_RUNTIME_DROP_OFFLOAD_H

#include <stdbool.h>
#include <stdio.h>
#include <time.h>

#include <linux/types.h>

struct xnf_xdp_instance;

struct drop_offload_config {
	bool enabled;        /* --offload-drops */
	__u32 above_pps;     /* a rule dropping at least this often goes to the kernel */
	__u32 below_pps;     /* an offloaded rule dropping less than this comes back */
	__u32 table;         /* rules the kernel holds at once */
	__u32 interval_ms;   /* how often rates are measured */
};

struct drop_offload;

/* Why the NF or mode cannot offload, in one message; 0 when it can. */
int drop_offload_check(const struct drop_offload_config *cfg, bool user_space_mode, const char *nf_name);
/* After the program is loaded. NULL with a message on failure. */
struct drop_offload *drop_offload_start(const struct drop_offload_config *cfg, struct xnf_xdp_instance *xdp);
/* One measurement and the switches it calls for, when an interval has passed; the ms until the next. */
int drop_offload_tick(struct drop_offload *o);
/* Before any rule changes: every rule leaves the kernel (they come back when still hot and still drops). */
void drop_offload_withdraw_all(struct drop_offload *o);
/* `, "offload": {...}` for the stats: each rule hit, where it lives, its hits and rate. */
void drop_offload_report(struct drop_offload *o, FILE *out);
void drop_offload_stop(struct drop_offload *o);

#endif
