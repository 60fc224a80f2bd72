/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A map as the control plane sees it, wherever it lives: a kernel BPF map
 * (by fd) or a native map in this process. Same calls, same error codes.
 */
#ifndef XNF_RUNTIME_MAP_REF_H
#define XNF_RUNTIME_MAP_REF_H

#include <xnf/maps.h>

struct xnf_map;

struct xnf_map_ref {
	const char *name;
	int fd;                 /* kernel map, or -1 */
	struct xnf_map *native; /* native map, or NULL */
	__u32 key_size;
	__u32 value_size;
	__u32 max_entries;
};

/* Finds map `name` on the side the instance runs on. 0, or -ENOENT. */
typedef int (*xnf_map_resolver)(void *ctx, const char *name, struct xnf_map_ref *ref);

/* Resolver for the native maps of the linked NF (ctx unused). */
int xnf_native_resolve_map(void *ctx, const char *name, struct xnf_map_ref *ref);

int xnf_map_ref_update(const struct xnf_map_ref *ref, const void *key, const void *value, __u64 flags);
int xnf_map_ref_delete(const struct xnf_map_ref *ref, const void *key);
int xnf_map_ref_lookup(const struct xnf_map_ref *ref, const void *key, void *value);
int xnf_map_ref_next_key(const struct xnf_map_ref *ref, const void *key, void *next_key);
/* count entries at once (one syscall for a kernel map): for filling large arrays. 0 or -errno. */
int xnf_map_ref_update_batch(const struct xnf_map_ref *ref, const void *keys, const void *values, __u32 count);

#endif
