// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * User-space maps with the kernel's semantics, so that an NF and its control
 * plane behave the same on both data paths. Error codes follow bpf(2) per map
 * type; tests/c/test_native_maps.c checks them against real kernel maps.
 */
#include <xnf/internal/native_maps.h>

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "hash_table.h"
#include "map_memory.h"

/*
 * Concurrency: lookups from the data path take no lock (RCU, see
 * hash_table.h); writers of a map serialise on its lock and retire what they
 * replaced once they have let go of it; control-plane reads take the lock so
 * that no writer frees what they are reading.
 */
#define LPM_MAX_DATA 64

__thread __u32 xnf_native_cpu;

struct array_impl {
	__u32 ncpus;
	__u32 stride; /* value size rounded up to 8, as per-CPU syscall buffers are */
	__u8 *values; /* [cpu][index] */
};

struct hash_impl {
	pthread_mutex_t lock;
	struct hash_table table;
};

/* An LPM trie as one hash table per prefix length, searched longest first. */
struct lpm_impl {
	pthread_mutex_t lock;
	__u32 data_size;
	__u32 max_prefixlen;
	__u32 count;
	/* [max_prefixlen + 1]; a table is live once its buckets exist (published with release) */
	struct hash_table *by_len;
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
	a->values = map_memory_zeroed((size_t)a->ncpus * map->max_entries, a->stride);
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
	struct hash_impl *h = calloc(1, sizeof(*h));
	int err;

	if (!h)
		return -ENOMEM;
	err = hash_table_init(&h->table, map->key_size, map->value_size, map->max_entries);
	if (err) {
		free(h);
		return err;
	}
	pthread_mutex_init(&h->lock, NULL);
	map->impl = h;
	return 0;
}

static int hash_update_locked(struct xnf_map *map, struct hash_table *t, const void *key, const void *value,
			      __u64 flags, struct hash_node **replaced)
{
	struct hash_node *n = hash_table_find(t, key);
	int err = check_update_flags(n != NULL, flags);

	if (err)
		return err;
	if (!n && t->count >= map->max_entries)
		return -E2BIG;
	return hash_table_put(t, key, value, replaced) ? 0 : -ENOMEM;
}

static int hash_update(struct xnf_map *map, const void *key, const void *value, __u64 flags)
{
	struct hash_impl *h = map->impl;
	struct hash_node *replaced = NULL;
	int err;

	if (flags > BPF_EXIST)
		return -EINVAL;
	pthread_mutex_lock(&h->lock);
	err = hash_update_locked(map, &h->table, key, value, flags, &replaced);
	pthread_mutex_unlock(&h->lock);
	hash_node_retire(replaced);
	return err;
}

static int hash_delete(struct xnf_map *map, const void *key)
{
	struct hash_impl *h = map->impl;
	struct hash_node *removed;
	int err;

	pthread_mutex_lock(&h->lock);
	err = hash_table_remove(&h->table, key, &removed);
	pthread_mutex_unlock(&h->lock);
	hash_node_retire(removed);
	return err;
}

static int hash_next_key(const struct xnf_map *map, const void *key, void *next)
{
	struct hash_impl *h = map->impl;
	struct hash_node *n;

	pthread_mutex_lock(&h->lock);
	n = hash_table_next(&h->table, key);
	if (n)
		memcpy(next, n->data, map->key_size);
	pthread_mutex_unlock(&h->lock);
	return n ? 0 : -ENOENT;
}

/* ---------------------------------------------------------------- LPM */

static int lpm_create(struct xnf_map *map)
{
	struct lpm_impl *l;

	if (map->key_size <= sizeof(__u32) || map->key_size - sizeof(__u32) > LPM_MAX_DATA)
		return -EINVAL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->data_size = map->key_size - sizeof(__u32);
	l->max_prefixlen = l->data_size * 8;
	l->by_len = calloc(l->max_prefixlen + 1, sizeof(*l->by_len));
	if (!l->by_len) {
		free(l);
		return -ENOMEM;
	}
	pthread_mutex_init(&l->lock, NULL);
	map->impl = l;
	return 0;
}

static void lpm_free(struct lpm_impl *l)
{
	for (__u32 len = 0; len <= l->max_prefixlen; len++)
		hash_table_free(&l->by_len[len]);
	free(l->by_len);
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
	__u8 masked[LPM_MAX_DATA];

	if (want > l->max_prefixlen)
		return NULL; /* as the kernel's trie_lookup_elem */
	for (int len = (int)want; len >= 0; len--) {
		struct hash_table *t = &l->by_len[len];
		struct hash_node *n;

		if (!__atomic_load_n(&t->buckets, __ATOMIC_ACQUIRE) || !__atomic_load_n(&t->count, __ATOMIC_RELAXED))
			continue;
		lpm_mask(l, data, len, masked);
		n = hash_table_find(t, masked);
		if (n)
			return hash_node_value(t, n);
	}
	return NULL;
}

static struct hash_table *lpm_table(struct lpm_impl *l, const struct xnf_map *map, __u32 prefixlen)
{
	struct hash_table *t = &l->by_len[prefixlen];
	__u32 hint = map->max_entries;

	if (t->buckets)
		return t;
	struct hash_table fresh;

	if (prefixlen < 20 && hint > (1u << prefixlen))
		hint = 1u << prefixlen; /* a /8 table can never hold more than 256 */
	if (hash_table_init(&fresh, l->data_size, map->value_size, hint))
		return NULL;
	/* Readers test buckets first: publish it last. */
	t->bucket_mask = fresh.bucket_mask;
	t->key_size = fresh.key_size;
	t->value_size = fresh.value_size;
	t->value_offset = fresh.value_offset;
	t->count = 0;
	__atomic_store_n(&t->buckets, fresh.buckets, __ATOMIC_RELEASE);
	return t;
}

static int lpm_update_locked(struct xnf_map *map, struct lpm_impl *l, const void *key, const void *value,
			     __u64 flags, struct hash_node **replaced)
{
	__u32 prefixlen = *(const __u32 *)key;
	__u8 masked[LPM_MAX_DATA];
	struct hash_table *t;
	struct hash_node *n;
	int err;

	t = lpm_table(l, map, prefixlen);
	if (!t)
		return -ENOMEM;
	lpm_mask(l, (const __u8 *)key + sizeof(__u32), prefixlen, masked);
	n = hash_table_find(t, masked);
	err = check_update_flags(n != NULL, flags);
	if (err)
		return err;
	if (!n && l->count >= map->max_entries)
		return -ENOSPC;
	if (!hash_table_put(t, masked, value, replaced))
		return -ENOMEM;
	if (!n)
		l->count++;
	return 0;
}

static int lpm_update(struct xnf_map *map, const void *key, const void *value, __u64 flags)
{
	struct lpm_impl *l = map->impl;
	struct hash_node *replaced = NULL;
	int err;

	if (flags > BPF_EXIST || *(const __u32 *)key > l->max_prefixlen)
		return -EINVAL;
	pthread_mutex_lock(&l->lock);
	err = lpm_update_locked(map, l, key, value, flags, &replaced);
	pthread_mutex_unlock(&l->lock);
	hash_node_retire(replaced);
	return err;
}

static int lpm_delete(struct xnf_map *map, const void *key)
{
	struct lpm_impl *l = map->impl;
	__u32 prefixlen = *(const __u32 *)key;
	struct hash_node *removed = NULL;
	__u8 masked[LPM_MAX_DATA];
	int err = -ENOENT;

	if (prefixlen > l->max_prefixlen)
		return -EINVAL;
	lpm_mask(l, (const __u8 *)key + sizeof(__u32), prefixlen, masked);
	pthread_mutex_lock(&l->lock);
	if (l->by_len[prefixlen].buckets)
		err = hash_table_remove(&l->by_len[prefixlen], masked, &removed);
	if (!err)
		l->count--;
	pthread_mutex_unlock(&l->lock);
	hash_node_retire(removed);
	return err;
}

static void lpm_write_key(const struct lpm_impl *l, __u32 prefixlen, const struct hash_node *n,
			  void *out)
{
	memcpy(out, &prefixlen, sizeof(prefixlen));
	memcpy((__u8 *)out + sizeof(__u32), n->data, l->data_size);
}

static int lpm_next_key_locked(const struct lpm_impl *l, const void *key, void *next)
{
	int start = (int)l->max_prefixlen;
	__u8 masked[LPM_MAX_DATA];
	const void *after = NULL;

	if (key) {
		__u32 prefixlen = *(const __u32 *)key;

		if (prefixlen <= l->max_prefixlen && l->by_len[prefixlen].buckets) {
			lpm_mask(l, (const __u8 *)key + sizeof(__u32), prefixlen, masked);
			if (hash_table_find(&l->by_len[prefixlen], masked)) {
				start = (int)prefixlen;
				after = masked;
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

/* Iterates longest prefixes first, as the kernel's trie does (children before parents). */
static int lpm_next_key(const struct xnf_map *map, const void *key, void *next)
{
	struct lpm_impl *l = map->impl;
	int err;

	pthread_mutex_lock(&l->lock);
	err = lpm_next_key_locked(l, key, next);
	pthread_mutex_unlock(&l->lock);
	return err;
}

/* ---------------------------------------------------------------- dispatch */

void *xnf_map_lookup(struct xnf_map *map, const void *key)
{
	switch (map->type) {
	case XNF_MAP_TYPE_HASH: {
		struct hash_table *t = &((struct hash_impl *)map->impl)->table;
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
		return hash_delete(map, key);
	case XNF_MAP_TYPE_ARRAY:
	case XNF_MAP_TYPE_PERCPU_ARRAY:
		return -EINVAL;
	case XNF_MAP_TYPE_LPM:
		return lpm_delete(map, key);
	}
	return -EINVAL;
}

/* The writers' lock of a map, which control-plane readers take too; NULL for arrays. */
static pthread_mutex_t *map_lock(const struct xnf_map *map)
{
	if (map->type == XNF_MAP_TYPE_HASH)
		return &((struct hash_impl *)map->impl)->lock;
	if (map->type == XNF_MAP_TYPE_LPM)
		return &((struct lpm_impl *)map->impl)->lock;
	return NULL;
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
	pthread_mutex_t *lock = map_lock(map);
	void *v;

	if (lock)
		pthread_mutex_lock(lock);
	v = xnf_map_lookup(map, key);
	if (v)
		memcpy(value, v, map->value_size);
	if (lock)
		pthread_mutex_unlock(lock);
	return v ? 0 : -ENOENT;
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
		hash_table_free(&((struct hash_impl *)map->impl)->table);
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

struct xnf_map *xnf_native_map_at(size_t index)
{
	size_t count = __start_xnf_maps ? (size_t)(__stop_xnf_maps - __start_xnf_maps) : 0;

	return index < count ? __start_xnf_maps[index] : NULL;
}
