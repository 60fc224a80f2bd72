/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The BPF objects embedded in an NF binary (libbpf skeletons of its XDP and tc builds, generated at build
 * time). lib/xdp/skel_glue.c implements this once per NF.
 */
#ifndef XNF_RUNTIME_EMBEDDED_H
#define XNF_RUNTIME_EMBEDDED_H

#include <xnf/common.h>

struct bpf_object;
struct xnf_embedded;

/* The kernel hooks an NF's kernel build is made for: one embedded object each. */
enum xnf_kernel_hook { XNF_AT_XDP, XNF_AT_TC };

/* Opens (does not load) the embedded object for hook. NULL with errno set on failure. */
struct xnf_embedded *xnf_embedded_open(enum xnf_kernel_hook hook);
struct bpf_object *xnf_embedded_object(struct xnf_embedded *e);
/* Must be called between open and load: the values become verifier constants. */
void xnf_embedded_set_config(struct xnf_embedded *e, const struct xnf_config *cfg);
void xnf_embedded_destroy(struct xnf_embedded *e);

#endif
