/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The runtime's side of map references (the type and its calls are the NF API's, <xnf/control.h>). */
#ifndef XNF_RUNTIME_MAP_REF_H
#define XNF_RUNTIME_MAP_REF_H

#include <xnf/control.h>

/* Resolver for the native maps of the linked NF (ctx unused). */
int xnf_native_resolve_map(void *ctx, const char *name, struct xnf_map_ref *ref);

#endif
