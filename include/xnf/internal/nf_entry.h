/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What the native object of an NF gives the runtime it is linked with. */
#if !defined(XNF_INTERNAL_OK) && !defined(XNF__FROM_SDK)
#error "xnf/internal/ is xnf's own glue, not the NF API: include <xnf/nf.h> (the data path) or <xnf/control.h> (the control side)"
#endif
#ifndef XNF_NF_ENTRY_H
#define XNF_NF_ENTRY_H

#include <xnf/pkt.h>
#include <xnf/verdict.h>

/* The name of the NF linked into this binary, and its batch entry point. */
extern const char xnf_nf_name[];
void xnf_nf_run_batch(struct xnf_pkt *pkts, xnf_verdict *verdicts, unsigned int n);

/* Names of the NF's own counters (XNF_COUNTER_NAMES), NULL-terminated; empty when it has none. */
extern const char *xnf_nf_counter_names[];

/* Ports of the running instance, as the NF's xnf_forward() and xnf_nports() see them. */
extern struct xnf_config xnf_cfg;

#endif
