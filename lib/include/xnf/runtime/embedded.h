/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The BPF object embedded in an NF binary (a libbpf skeleton, generated at
 * build time). lib/xdp/skel_glue.c implements this once per NF.
 */
#ifndef XNF_RUNTIME_EMBEDDED_H
#define XNF_RUNTIME_EMBEDDED_H

#include <xnf/common.h>

struct bpf_object;
struct xnf_embedded;

/* Opens (does not load) the embedded object. NULL with errno set on failure. */
struct xnf_embedded *xnf_embedded_open(void);
struct bpf_object *xnf_embedded_object(struct xnf_embedded *e);
/* Must be called between open and load: the values become verifier constants. */
void xnf_embedded_set_config(struct xnf_embedded *e, const struct xnf_config *cfg);
void xnf_embedded_destroy(struct xnf_embedded *e);

#endif
