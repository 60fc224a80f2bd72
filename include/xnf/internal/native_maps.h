/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Runtime side of the native maps: creating them, finding them by name, and
 * the control-plane operations with the kernel's semantics (lookup by copy,
 * get_next_key, per-CPU value arrays).
 */
#if !defined(XNF_INTERNAL_OK) && !defined(XNF__FROM_SDK)
#error "xnf/internal/ is xnf's own glue, not the NF API: include <xnf/nf.h> (the data path) or <xnf/control.h> (the control side)"
#endif
#ifndef XNF_NATIVE_MAPS_H
#define XNF_NATIVE_MAPS_H

#include <string.h>

#include <xnf/maps.h>

/* Number of "CPUs" a native per-CPU map has: one slot per worker thread. */
#define XNF_NATIVE_MAX_CPUS 64

/* The calling thread's slot in per-CPU maps (a worker sets it once). */
extern __thread __u32 xnf_native_cpu;

/* Allocates every map the linked NF declared; ncpus is the worker count. 0 or -errno. */
int xnf_native_maps_init(__u32 ncpus);
void xnf_native_maps_free(void);
struct xnf_map *xnf_native_map_find(const char *name);
/* The index-th declared map, or NULL past the last: for listing them. */
struct xnf_map *xnf_native_map_at(size_t index);

/* The glue's own maps (verdict counters, ports, sockets...) are named xnf_*: not the NF's to size or list. */
static inline int xnf_map_is_glue(const char *name)
{
	return strncmp(name, "xnf_", 4) == 0;
}

/* Creates and frees one map outside the registry (tests, tools). */
int xnf_native_map_create(struct xnf_map *map, __u32 ncpus);
void xnf_native_map_destroy(struct xnf_map *map);

/* Control plane, with the bpf(2) syscall's semantics for each map type. */
/* Per-CPU maps fill ncpus 8-byte-aligned values, as bpf(2) does. */
int xnf_native_map_lookup_copy(struct xnf_map *map, const void *key, void *value);
int xnf_native_map_get_next_key(struct xnf_map *map, const void *key, void *next_key);

#endif /* XNF_NATIVE_MAPS_H */
