/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The probes behind the kernel facility table (kernel_facilities.c): 0 where the kernel gives it, else -1 with why. */
#ifndef XNF_KERNEL_PROBES_H
#define XNF_KERNEL_PROBES_H

#include <linux/bpf.h>
#include <stddef.h>

int xnf_probe_bpf(char *why, size_t len);
int xnf_probe_btf(char *why, size_t len);
int xnf_probe_live_frames(char *why, size_t len);
int xnf_probe_xdp_frags(char *why, size_t len);
int xnf_probe_tcx(char *why, size_t len);
int xnf_probe_clsact(char *why, size_t len);
int xnf_probe_afxdp(char *why, size_t len);
int xnf_probe_afxdp_sg(char *why, size_t len);
int xnf_probe_xsk_tx_budget(char *why, size_t len);
int xnf_probe_xsk_xmit_batch(char *why, size_t len);
int xnf_probe_busy_poll(char *why, size_t len);
int xnf_probe_freplace(char *why, size_t len);
int xnf_probe_tp_btf(char *why, size_t len);
/* Whether a program of type may call helper id (its arguments aside). */
int xnf_probe_helper(int id, enum bpf_prog_type type, char *why, size_t len);

#endif
