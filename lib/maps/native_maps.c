// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * User-space maps with the kernel's semantics, so that an NF and its control
 * plane behave the same on both data paths. Error codes follow bpf(2) per map
 * type; tests/c/test_native_maps.c checks them against real kernel maps.
 */
#include <xnf/native_maps.h>

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "hash_table.h"

__thread __u32 xnf_native_cpu;

struct array_impl {
	__u32 ncpus;
	__u32 stride; /* value size rounded up to 8, as per-CPU syscall buffers are */
	__u8 *values; /* [cpu][index] */
};

/* An LPM trie as one hash table per prefix length, searched longest first. */
struct lpm_impl {
	__u32 data_size;
	__u32 max_prefixlen;
	__u32 count;
	struct hash_table *by_len; /* [max_prefixlen + 1], a table is live if buckets != NULL */
	__u8 *scratch;             /* key buffer for lookups; per-thread copies come with RCU */
};

static __u32 round8(__u32 n)
{
	return (n + 7) & ~7u;
}

/* bpf(2)'s answer to an update of a key that exists or not, before capacity is considered. */
static int check_update_flags(bool exists, __u64 flags)
{
	if (exists && flags == BPF_NOEXIST)
		return -EEXIST;
	if (!exists && flags == BPF_EXIST)
		return -ENOENT;
	return 0;
}

/* ---------------------------------------------------------------- arrays */

static int array_create(struct xnf_map *map, __u32 ncpus)
{
	struct array_impl *a = calloc(1, sizeof(*a));

	if (!a)
		return -ENOMEM;
	a->ncpus = map->type == XNF_MAP_TYPE_PERCPU_ARRAY ? ncpus : 1;
	a->stride = round8(map->value_size);
	a->values = calloc((size_t)a->ncpus * map->max_entries, a->stride);
	if (!a->values) {
		free(a);
		return -ENOMEM;
	}
	map->impl = a;
	return 0;
}

static void *array_slot(const struct xnf_map *map, __u32 cpu, __u32 index)
{
	const struct array_impl *a = map->impl;

	return a->values + ((size_t)cpu * map->max_entries + index) * a->stride;
}

static void *array_lookup(const struct xnf_map *map, const void *key)
{
	const struct array_impl *a = map->impl;
	__u32 index = *(const __u32 *)key;
	__u32 cpu = a->ncpus > 1 ? xnf_native_cpu % a->ncpus : 0;

	if (index >= map->max_entries)
		return NULL;
	return array_slot(map, cpu, index);
}

static int array_check_update(const struct xnf_map *map, const void *key, __u64 flags)
{
	if (flags > BPF_EXIST)
		return -EINVAL;
	if (*(const __u32 *)key >= map->max_entries)
		return -E2BIG;
	if (flags == BPF_NOEXIST)
		return -EEXIST; /* every array slot always exists */
	return 0;
}

static int array_next_key(const struct xnf_map *map, const void *key, void *next)
{
	__u32 index = key ? *(const __u32 *)key : (__u32)-1;

	if (index >= map->max_entries) {
		*(__u32 *)next = 0;
		return 0;
	}
	if (index + 1 >= map->max_entries)
		return -ENOENT;
	*(__u32 *)next = index + 1;
	return 0;
}

/* ---------------------------------------------------------------- hash */

static int hash_create(struct xnf_map *map)
{
	struct hash_table *t = calloc(1, sizeof(*t));
	int err;

	if (!t)
		return -ENOMEM;
	err = hash_table_init(t, map->key_size, map->value_size, map->max_entries);
	if (err) {
		free(t);
		return err;
	}
	map->impl = t;
	return 0;
}

static int hash_update(struct xnf_map *map, const void *key, const void *value, __u64 flags)
{
	struct hash_table *t = map->impl;
	struct hash_node *n;
	int err;

	if (flags > BPF_EXIST)
		return -EINVAL;
	n = hash_table_find(t, key);
	err = check_update_flags(n != NULL, flags);
	if (err)
		return err;
	if (!n && t->count >= map->max_entries)
		return -E2BIG;
	return hash_table_put(t, key, value) ? 0 : -ENOMEM;
}

static int hash_next_key(const struct xnf_map *map, const void *key, void *next)
{
	const struct hash_table *t = map->impl;
	struct hash_node *n = hash_table_next(t, key);

	if (!n)
		return -ENOENT;
	memcpy(next, n->data, map->key_size);
	return 0;
}

/* ---------------------------------------------------------------- LPM */

static int lpm_create(struct xnf_map *map)
{
	struct lpm_impl *l;

	if (map->key_size <= sizeof(__u32))
		return -EINVAL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->data_size = map->key_size - sizeof(__u32);
	l->max_prefixlen = l->data_size * 8;
	l->by_len = calloc(l->max_prefixlen + 1, sizeof(*l->by_len));
	l->scratch = calloc(1, l->data_size);
	if (!l->by_len || !l->scratch) {
		free(l->by_len);
		free(l->scratch);
		free(l);
		return -ENOMEM;
	}
	map->impl = l;
	return 0;
}

static void lpm_free(struct lpm_impl *l)
{
	for (__u32 len = 0; len <= l->max_prefixlen; len++)
		hash_table_free(&l->by_len[len]);
	free(l->by_len);
	free(l->scratch);
	free(l);
}

/* Copies the first prefixlen bits of data into out and zeroes the rest. */
static void lpm_mask(const struct lpm_impl *l, const __u8 *data, __u32 prefixlen, __u8 *out)
{
	__u32 full = prefixlen / 8, rest = prefixlen % 8;

	memset(out, 0, l->data_size);
	memcpy(out, data, full);
	if (rest)
		out[full] = data[full] & (__u8)(0xff << (8 - rest));
}

static void *lpm_lookup(const struct xnf_map *map, const void *key)
{
	struct lpm_impl *l = map->impl;
	__u32 want = *(const __u32 *)key;
	const __u8 *data = (const __u8 *)key + sizeof(__u32);

	if (want > l->max_prefixlen)
		return NULL; /* as the kernel's trie_lookup_elem */
	for (int len = (int)want; len >= 0; len--) {
		struct hash_node *n;

		if (!l->by_len[len].buckets || !l->by_len[len].count)
			continue;
		lpm_mask(l, data, len, l->scratch);
		n = hash_table_find(&l->by_len[len], l->scratch);
		if (n)
			return hash_node_value(&l->by_len[len], n);
	}
	return NULL;
}

static struct hash_table *lpm_table(struct lpm_impl *l, const struct xnf_map *map, __u32 prefixlen)
{
	struct hash_table *t = &l->by_len[prefixlen];
	__u32 hint = map->max_entries;

	if (t->buckets)
		return t;
	if (prefixlen < 20 && hint > (1u << prefixlen))
		hint = 1u << prefixlen; /* a /8 table can never hold more than 256 */
	if (hash_table_init(t, l->data_size, map->value_size, hint))
		return NULL;
	return t;
}

static int lpm_update(struct xnf_map *map, const void *key, const void *value, __u64 flags)
{
	struct lpm_impl *l = map->impl;
	__u32 prefixlen = *(const __u32 *)key;
	struct hash_table *t;
	struct hash_node *n;
	int err;

	if (flags > BPF_EXIST || prefixlen > l->max_prefixlen)
		return -EINVAL;
	t = lpm_table(l, map, prefixlen);
	if (!t)
		return -ENOMEM;
	lpm_mask(l, (const __u8 *)key + sizeof(__u32), prefixlen, l->scratch);
	n = hash_table_find(t, l->scratch);
	err = check_update_flags(n != NULL, flags);
	if (err)
		return err;
	if (!n && l->count >= map->max_entries)
		return -ENOSPC;
	if (!hash_table_put(t, l->scratch, value))
		return -ENOMEM;
	if (!n)
		l->count++;
	return 0;
}

static int lpm_delete(struct xnf_map *map, const void *key)
{
	struct lpm_impl *l = map->impl;
	__u32 prefixlen = *(const __u32 *)key;

	if (prefixlen > l->max_prefixlen)
		return -EINVAL;
	if (!l->by_len[prefixlen].buckets)
		return -ENOENT;
	lpm_mask(l, (const __u8 *)key + sizeof(__u32), prefixlen, l->scratch);
	if (hash_table_remove(&l->by_len[prefixlen], l->scratch))
		return -ENOENT;
	l->count--;
	return 0;
}

static void lpm_write_key(const struct lpm_impl *l, __u32 prefixlen, const struct hash_node *n,
			  void *out)
{
	memcpy(out, &prefixlen, sizeof(prefixlen));
	memcpy((__u8 *)out + sizeof(__u32), n->data, l->data_size);
}

/* Iterates longest prefixes first, as the kernel's trie does (children before parents). */
static int lpm_next_key(const struct xnf_map *map, const void *key, void *next)
{
	struct lpm_impl *l = map->impl;
	int start = (int)l->max_prefixlen;
	const void *after = NULL;

	if (key) {
		__u32 prefixlen = *(const __u32 *)key;

		if (prefixlen <= l->max_prefixlen && l->by_len[prefixlen].buckets) {
			lpm_mask(l, (const __u8 *)key + sizeof(__u32), prefixlen, l->scratch);
			if (hash_table_find(&l->by_len[prefixlen], l->scratch)) {
				start = (int)prefixlen;
				after = l->scratch;
			}
		}
	}
	for (int len = start; len >= 0; len--) {
		struct hash_table *t = &l->by_len[len];
		struct hash_node *n;

		if (!t->buckets || !t->count)
			continue;
		n = hash_table_next(t, len == start ? after : NULL);
		if (n) {
			lpm_write_key(l, (__u32)len, n, next);
			return 0;
		}
	}
	return -ENOENT;
}

/* ---------------------------------------------------------------- dispatch */

void *xnf_map_lookup(struct xnf_map *map, const void *key)
{
	switch (map->type) {
	case XNF_MAP_TYPE_HASH: {
		struct hash_table *t = map->impl;
		struct hash_node *n = hash_table_find(t, key);

		return n ? hash_node_value(t, n) : NULL;
	}
	case XNF_MAP_TYPE_ARRAY:
	case XNF_MAP_TYPE_PERCPU_ARRAY:
		return array_lookup(map, key);
	case XNF_MAP_TYPE_LPM:
		return lpm_lookup(map, key);
	}
	return NULL;
}

int xnf_map_update(struct xnf_map *map, const void *key, const void *value, __u64 flags)
{
	switch (map->type) {
	case XNF_MAP_TYPE_HASH:
		return hash_update(map, key, value, flags);
	case XNF_MAP_TYPE_ARRAY:
	case XNF_MAP_TYPE_PERCPU_ARRAY: {
		int err = array_check_update(map, key, flags);

		if (!err)
			memcpy(array_lookup(map, key), value, map->value_size);
		return err;
	}
	case XNF_MAP_TYPE_LPM:
		return lpm_update(map, key, value, flags);
	}
	return -EINVAL;
}

int xnf_map_delete(struct xnf_map *map, const void *key)
{
	switch (map->type) {
	case XNF_MAP_TYPE_HASH:
		return hash_table_remove(map->impl, key);
	case XNF_MAP_TYPE_ARRAY:
	case XNF_MAP_TYPE_PERCPU_ARRAY:
		return -EINVAL;
	case XNF_MAP_TYPE_LPM:
		return lpm_delete(map, key);
	}
	return -EINVAL;
}

__u32 xnf_native_map_ncpus(const struct xnf_map *map)
{
	return map->type == XNF_MAP_TYPE_PERCPU_ARRAY ? ((struct array_impl *)map->impl)->ncpus : 1;
}

__u32 xnf_native_map_value_buffer_size(const struct xnf_map *map)
{
	if (map->type == XNF_MAP_TYPE_PERCPU_ARRAY)
		return xnf_native_map_ncpus(map) * round8(map->value_size);
	return map->value_size;
}

int xnf_native_map_lookup_copy(struct xnf_map *map, const void *key, void *value)
{
	if (map->type == XNF_MAP_TYPE_PERCPU_ARRAY) {
		const struct array_impl *a = map->impl;
		__u32 index = *(const __u32 *)key;

		if (index >= map->max_entries)
			return -ENOENT;
		for (__u32 cpu = 0; cpu < a->ncpus; cpu++)
			memcpy((__u8 *)value + cpu * a->stride, array_slot(map, cpu, index), a->stride);
		return 0;
	}
	void *v = xnf_map_lookup(map, key);

	if (!v)
		return -ENOENT;
	memcpy(value, v, map->value_size);
	return 0;
}

int xnf_native_map_get_next_key(struct xnf_map *map, const void *key, void *next_key)
{
	switch (map->type) {
	case XNF_MAP_TYPE_HASH:
		return hash_next_key(map, key, next_key);
	case XNF_MAP_TYPE_ARRAY:
	case XNF_MAP_TYPE_PERCPU_ARRAY:
		return array_next_key(map, key, next_key);
	case XNF_MAP_TYPE_LPM:
		return lpm_next_key(map, key, next_key);
	}
	return -EINVAL;
}

int xnf_native_map_create(struct xnf_map *map, __u32 ncpus)
{
	if (!map->max_entries || !map->key_size || !map->value_size)
		return -EINVAL;
	if (ncpus == 0 || ncpus > XNF_NATIVE_MAX_CPUS)
		return -EINVAL;
	switch (map->type) {
	case XNF_MAP_TYPE_HASH:
		return hash_create(map);
	case XNF_MAP_TYPE_ARRAY:
	case XNF_MAP_TYPE_PERCPU_ARRAY:
		return array_create(map, ncpus);
	case XNF_MAP_TYPE_LPM:
		return lpm_create(map);
	}
	return -EINVAL;
}

void xnf_native_map_destroy(struct xnf_map *map)
{
	if (!map->impl)
		return;
	switch (map->type) {
	case XNF_MAP_TYPE_HASH:
		hash_table_free(map->impl);
		free(map->impl);
		break;
	case XNF_MAP_TYPE_ARRAY:
	case XNF_MAP_TYPE_PERCPU_ARRAY:
		free(((struct array_impl *)map->impl)->values);
		free(map->impl);
		break;
	case XNF_MAP_TYPE_LPM:
		lpm_free(map->impl);
		break;
	}
	map->impl = NULL;
}

/* ---------------------------------------------------------------- registry */

/* Filled by XNF_MAP_* declarations; weak so a binary without maps still links. */
extern struct xnf_map *__start_xnf_maps[] __attribute__((weak));
extern struct xnf_map *__stop_xnf_maps[] __attribute__((weak));

int xnf_native_maps_init(__u32 ncpus)
{
	for (struct xnf_map **m = __start_xnf_maps; m && m < __stop_xnf_maps; m++) {
		int err = (*m)->impl ? 0 : xnf_native_map_create(*m, ncpus);

		if (err) {
			xnf_native_maps_free();
			return err;
		}
	}
	return 0;
}

void xnf_native_maps_free(void)
{
	for (struct xnf_map **m = __start_xnf_maps; m && m < __stop_xnf_maps; m++)
		xnf_native_map_destroy(*m);
}

struct xnf_map *xnf_native_map_find(const char *name)
{
	for (struct xnf_map **m = __start_xnf_maps; m && m < __stop_xnf_maps; m++) {
		if (strcmp((*m)->name, name) == 0)
			return *m;
	}
	return NULL;
}
