/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* --state in the AF_XDP modes: the NF's tables handed over between the native maps and the kernel's kept twins. */
#ifndef XNF_LIB_RUNTIME_STATE_HANDOVER_H
#define XNF_LIB_RUNTIME_STATE_HANDOVER_H

#include <stdbool.h>

#include <xnf/runtime/afxdp.h>
#include <xnf/runtime/xdp_instance.h>

/* The kernel's tables into the native maps: all of them, or only the entries the native maps do not have yet.
 * 0, or -1 with a message. */
int state_import(const struct xnf_xdp_instance *x, bool only_new);
/* The native maps into the kernel's: made equal, or only the entries the kernel's do not have yet. */
int state_export(const struct xnf_xdp_instance *x, bool only_new);
/* While the workers run: up to budget of the entries they hold copied on to the kernel's tables (new ones, and the
 * ones they changed since: a session's last-seen time), from where the last call stopped, so that a killed process
 * leaves the kernel build tables at most a pass old. */
int state_sync(const struct xnf_xdp_instance *x, __u32 budget);
/* Hybrid at a stop: the sockets taken out of the XSKMAP, so that the program sends on what it would have handed
 * them (xnf_cfg.kernel_fallback), and the workers given the time to finish what their rings hold. */
int state_leave_sockets(const struct xnf_xdp_instance *x, struct xnf_afxdp *workers);
/* At a stop: the kept tables made equal to the native ones, then the sockets taken out of the program's way, so that
 * it runs the NF itself on them (xnf_cfg.kernel_fallback); the workers finish what their rings hold, and what they
 * add goes over too. 0, or -1 with a message. */
int state_hand_to_kernel(struct xnf_xdp_instance *x, struct xnf_afxdp *workers);

#endif
