/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What this kernel gives xnf: every kernel facility xnf uses, declared once (lib/util/kernel_facilities.c) with a
 * probe that tries it for real, the first upstream version that has it, and what xnf does without it. Probed once
 * per boot and cached in the run directory; XNF_KERNEL_WITHOUT=NAME,... treats facilities as refused (a machine
 * that has them then runs as one without). Every command asks here before it uses a facility, takes the fallback
 * where there is one, and refuses naming the facility where there is none.
 */
#ifndef XNF_RUNTIME_KERNEL_H
#define XNF_RUNTIME_KERNEL_H

#include <stdbool.h>
#include <stdio.h>

/* The environment variable that treats facilities as refused: a comma-separated list of their names. */
#define XNF_KERNEL_WITHOUT_ENV "XNF_KERNEL_WITHOUT"

enum xnf_facility {
	XNF_KF_BPF,           /* loading BPF programs at all */
	XNF_KF_BTF,           /* the kernel's own types, /sys/kernel/btf/vmlinux */
	XNF_KF_LIVE_FRAMES,   /* BPF_PROG_RUN with BPF_F_TEST_XDP_LIVE_FRAMES */
	XNF_KF_XDP_META,      /* bpf_xdp_adjust_meta in XDP programs */
	XNF_KF_XDP_FRAGS,     /* XDP programs on multi-buffer frames (BPF_F_XDP_HAS_FRAGS) */
	XNF_KF_TCX,           /* tc programs through bpf_link (TCX) */
	XNF_KF_CLSACT,        /* tc programs in a clsact qdisc's filter */
	XNF_KF_AFXDP,         /* AF_XDP sockets */
	XNF_KF_AFXDP_SG,      /* AF_XDP multi-buffer (XDP_USE_SG) */
	XNF_KF_BUSY_POLL,     /* preferred busy polling (SO_PREFER_BUSY_POLL) */
	XNF_KF_XSK_TX_BUDGET, /* the xsk ring's transmit budget (XDP_MAX_TX_SKB_BUDGET) */
	XNF_KF_XSK_XMIT_BATCH, /* the xsk ring's transmit batch (XDP_GENERIC_XMIT_BATCH) */
	XNF_KF_FREPLACE,      /* freplace programs: libxdp's dispatcher */
	XNF_KF_TP_BTF,        /* BTF tracepoint programs: the egress watch */
	XNF_KF_HELPERS,       /* every helper the SDK's glue calls, for the program types it calls them in */
	XNF_NFACILITIES
};

struct xnf_facility_info {
	const char *name;     /* as XNF_KERNEL_WITHOUT, xnf doctor and the tests' kernel marker write it */
	const char *title;    /* what it is, for people */
	const char *since;    /* the first upstream Linux version that has it: "Linux 5.18" */
	const char *without;  /* what xnf does on a kernel that refuses it */
};

/* The program types the glue's programs have, for the helper rows. */
enum xnf_helper_user { XNF_HELPER_IN_XDP = 1, XNF_HELPER_IN_TC = 2, XNF_HELPER_IN_TRACING = 4 };

struct xnf_helper_info {
	int id;               /* BPF_FUNC_... */
	const char *name;     /* bpf_... */
	const char *since;
	unsigned users;       /* enum xnf_helper_user bits: the program types the glue calls it in */
};

const struct xnf_facility_info *xnf_facility(enum xnf_facility f);
/* Whether this kernel gives f (probed once per boot; XNF_KERNEL_WITHOUT counts). */
bool xnf_kernel_has(enum xnf_facility f);
/* Why it does not: the probe's answer, or that XNF_KERNEL_WITHOUT names it; "" where it works. */
const char *xnf_kernel_why(enum xnf_facility f);
/* One line for a refusal: "this kernel refuses TITLE (NAME, SINCE): WHY", into out. */
const char *xnf_kernel_refusal(enum xnf_facility f, char *out, size_t len);

/* Says once per process, on stderr, that the fallback for refused facility f is taken, and what it costs. */
void xnf_kernel_say_fallback(enum xnf_facility f);

size_t xnf_helper_count(void);
const struct xnf_helper_info *xnf_helper(size_t i);
/* The row of helper id, or NULL for a helper the glue does not call. */
const struct xnf_helper_info *xnf_helper_by_id(int id);
/* Whether this kernel lets the glue's program types call helper id (BPF_FUNC_...; true for one without a row). */
bool xnf_kernel_has_helper(int id);
/* Why not, as xnf_kernel_refusal says it for a facility. */
const char *xnf_kernel_helper_refusal(int id, char *out, size_t len);

/* The table as JSON (one object, no newline: kernel release, facilities, helpers, the override in force). */
void xnf_kernel_table_json(FILE *out);
/* The table for people: one line per facility, then the helpers this kernel refuses. */
void xnf_kernel_table_print(FILE *out);
/* Forget the cache: probe again now (xnf-kernel --probe). */
void xnf_kernel_probe_again(void);

#endif
