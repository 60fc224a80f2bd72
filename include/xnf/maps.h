/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Portable maps. In the kernel they are ordinary BPF maps; natively they are
 * user-space maps with the same semantics (lib/maps), registered in a linker
 * section so the runtime and the control plane can find them by name.
 *
 *   XNF_MAP_HASH(name, key_type, value_type, max_entries)          memory allocated up front
 *   XNF_MAP_HASH_GROWING(name, key_type, value_type, max_entries)  memory allocated per entry
 *   XNF_MAP_ARRAY(name, value_type, max_entries)          key: __u32 index
 *   XNF_MAP_PERCPU_ARRAY(name, value_type, max_entries)   one slot per CPU/worker
 *   XNF_MAP_LPM(name, key_type, value_type, max_entries)  key starts with __u32 prefixlen
 *
 *   xnf_map_lookup(&name, &key)            -> value pointer or NULL
 *   xnf_map_update(&name, &key, &value, f) -> 0 or -errno; f: BPF_ANY, BPF_NOEXIST, BPF_EXIST
 *   xnf_map_delete(&name, &key)            -> 0 or -errno
 *   xnf_map_capacity(&name)                -> its entries as made (--map-size), not as declared
 */
#ifndef XNF_MAPS_H
#define XNF_MAPS_H

#include <xnf/common.h>

/* A chain member's position in its chain (chain.c defines it around each member); native maps record it. */
#ifndef XNF_CHAIN_POSITION
#define XNF_CHAIN_POSITION 0
#endif

#ifdef XNF_TARGET_BPF

#define XNF__BPF_MAP(name, map_type, K, V, N, flags)                           \
	struct {                                                               \
		__uint(type, map_type);                                        \
		__type(key, K);                                                \
		__type(value, V);                                              \
		__uint(max_entries, N);                                        \
		__uint(map_flags, flags);                                      \
	} name SEC(".maps")

#define XNF_MAP_HASH(name, K, V, N) XNF__BPF_MAP(name, BPF_MAP_TYPE_HASH, K, V, N, 0)
#define XNF_MAP_HASH_GROWING(name, K, V, N)                                    \
	XNF__BPF_MAP(name, BPF_MAP_TYPE_HASH, K, V, N, BPF_F_NO_PREALLOC)
#define XNF_MAP_ARRAY(name, V, N) XNF__BPF_MAP(name, BPF_MAP_TYPE_ARRAY, __u32, V, N, 0)
#define XNF_MAP_PERCPU_ARRAY(name, V, N)                                      \
	XNF__BPF_MAP(name, BPF_MAP_TYPE_PERCPU_ARRAY, __u32, V, N, 0)
#define XNF_MAP_LPM(name, K, V, N)                                             \
	XNF__BPF_MAP(name, BPF_MAP_TYPE_LPM_TRIE, K, V, N, BPF_F_NO_PREALLOC)

#define xnf_map_lookup(map, key) bpf_map_lookup_elem(map, key)
#define xnf_map_update(map, key, value, flags) bpf_map_update_elem(map, key, value, flags)
#define xnf_map_delete(map, key) bpf_map_delete_elem(map, key)

/* The kernel's struct bpf_map as far as xnf_map_capacity reads it; CO-RE finds the field in the running kernel. */
struct bpf_map___xnf {
	__u32 max_entries;
} __attribute__((preserve_access_index));

/* How many entries the map was made with: its size at load time (--map-size), not its declaration's. */
#define xnf_map_capacity(map) (((const struct bpf_map___xnf *)(map))->max_entries)

#else /* native */

#include <linux/bpf.h> /* BPF_ANY, BPF_NOEXIST, BPF_EXIST */

enum xnf_map_type {
	XNF_MAP_TYPE_HASH = 1,
	XNF_MAP_TYPE_ARRAY,
	XNF_MAP_TYPE_PERCPU_ARRAY,
	XNF_MAP_TYPE_LPM,
};

struct xnf_map {
	const char *name;
	enum xnf_map_type type;
	__u32 key_size;
	__u32 value_size;
	__u32 max_entries;
	__u32 chain_position; /* the declaring member's place in a chain (0 outside one): split chains
			       * serve each member's maps on the side that runs it */
	void *impl; /* set by xnf_maps_init() */
};

#define XNF__NATIVE_MAP(mname, mtype, K, V, N)                                 \
	struct xnf_map mname = {                                               \
		.name = #mname,                                                \
		.type = mtype,                                                 \
		.key_size = sizeof(K),                                         \
		.value_size = sizeof(V),                                       \
		.max_entries = N,                                              \
		.chain_position = XNF_CHAIN_POSITION,                          \
	};                                                                     \
	static struct xnf_map *xnf__registered_##mname                         \
		__attribute__((used, section("xnf_maps"))) = &mname

#define XNF_MAP_HASH(name, K, V, N) XNF__NATIVE_MAP(name, XNF_MAP_TYPE_HASH, K, V, N)
#define XNF_MAP_HASH_GROWING(name, K, V, N) XNF_MAP_HASH(name, K, V, N)
#define XNF_MAP_ARRAY(name, V, N) XNF__NATIVE_MAP(name, XNF_MAP_TYPE_ARRAY, __u32, V, N)
#define XNF_MAP_PERCPU_ARRAY(name, V, N)                                      \
	XNF__NATIVE_MAP(name, XNF_MAP_TYPE_PERCPU_ARRAY, __u32, V, N)
#define XNF_MAP_LPM(name, K, V, N) XNF__NATIVE_MAP(name, XNF_MAP_TYPE_LPM, K, V, N)

#define xnf_map_capacity(map) ((map)->max_entries)

void *xnf_map_lookup(struct xnf_map *map, const void *key);
int xnf_map_update(struct xnf_map *map, const void *key, const void *value, __u64 flags);
int xnf_map_delete(struct xnf_map *map, const void *key);

#endif

#endif /* XNF_MAPS_H */
