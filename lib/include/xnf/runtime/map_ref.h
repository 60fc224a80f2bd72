/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The runtime's side of map references (the type and its calls are the NF API's, <xnf/control.h>). */
#ifndef XNF_RUNTIME_MAP_REF_H
#define XNF_RUNTIME_MAP_REF_H

#include <xnf/control.h>

/* Resolver for the native maps of the linked NF (ctx unused). */
int xnf_native_resolve_map(void *ctx, const char *name, struct xnf_map_ref *ref);

/* The entries the map holds now, walked key by key, at most its capacity: a hash map changed during the walk
 * may restart it (the kernel starts over when the current key is deleted), so the count is approximate while
 * the data path writes. -errno if the map cannot be walked. */
long long xnf_map_ref_count(const struct xnf_map_ref *ref);

#endif
