// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <xnf/runtime/map_ref.h>
#include <xnf/internal/native_maps.h>

#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* libbpf 1.x returns -errno directly from these calls. */

int xnf_map_ref_update(const struct xnf_map_ref *ref, const void *key, const void *value, __u64 flags)
{
	if (ref->native)
		return xnf_map_update(ref->native, key, value, flags);
	return bpf_map_update_elem(ref->fd, key, value, flags);
}

int xnf_map_ref_delete(const struct xnf_map_ref *ref, const void *key)
{
	if (ref->native)
		return xnf_map_delete(ref->native, key);
	return bpf_map_delete_elem(ref->fd, key);
}

int xnf_map_ref_lookup(const struct xnf_map_ref *ref, const void *key, void *value)
{
	if (ref->native)
		return xnf_native_map_lookup_copy(ref->native, key, value);
	return bpf_map_lookup_elem(ref->fd, key, value);
}

int xnf_map_ref_next_key(const struct xnf_map_ref *ref, const void *key, void *next_key)
{
	if (ref->native)
		return xnf_native_map_get_next_key(ref->native, key, next_key);
	return bpf_map_get_next_key(ref->fd, key, next_key);
}

int xnf_map_ref_update_batch(const struct xnf_map_ref *ref, const void *keys, const void *values, __u32 count)
{
	if (ref->native) {
		for (__u32 i = 0; i < count; i++) {
			int err = xnf_map_update(ref->native, (const char *)keys + (size_t)i * ref->key_size,
						 (const char *)values + (size_t)i * ref->value_size, BPF_ANY);

			if (err)
				return err;
		}
		return 0;
	}
	return bpf_map_update_batch(ref->fd, keys, values, &count, NULL);
}

static int read_native_batch(const struct xnf_map_ref *ref, struct xnf_map_walk *walk, void *keys, void *values,
			     __u32 *count)
{
	__u32 wanted = *count, n = 0;
	int err = 0;

	if (ref->key_size > sizeof(walk->at))
		return -E2BIG;
	while (n < wanted) {
		__u8 *key = (__u8 *)keys + (size_t)n * ref->key_size;

		err = xnf_native_map_get_next_key(ref->native, walk->started ? walk->at : NULL, key);
		if (err)
			break;
		memcpy(walk->at, key, ref->key_size);
		walk->started = 1;
		/* deleted by the data path between the two calls: left out */
		if (xnf_native_map_lookup_copy(ref->native, key, (__u8 *)values + (size_t)n * ref->value_size) == 0)
			n++;
	}
	*count = n;
	return err;
}

static int read_kernel_batch(const struct xnf_map_ref *ref, struct xnf_map_walk *walk, void *keys, void *values,
			     __u32 *count)
{
	__u8 next[sizeof(walk->at)];
	int err = bpf_map_lookup_batch(ref->fd, walk->started ? walk->at : NULL, next, keys, values, count, NULL);

	if (err == 0) {
		memcpy(walk->at, next, sizeof(walk->at));
		walk->started = 1;
	}
	return err;
}

int xnf_map_ref_read_batch(const struct xnf_map_ref *ref, struct xnf_map_walk *walk, void *keys, void *values,
			   __u32 *count)
{
	__u32 wanted = *count;
	int err = ref->native ? read_native_batch(ref, walk, keys, values, count) :
				read_kernel_batch(ref, walk, keys, values, count);

	if (err) {
		walk->started = 0;
		if (err == -ENOENT)
			walk->ends++;
		else
			*count = 0;
	}
	return wanted && err == 0 && *count == 0 ? -ENOENT : err;
}

__u32 xnf_map_ref_sweep(const struct xnf_map_ref *ref, struct xnf_map_walk *walk, __u32 budget,
			xnf_map_entry_over over, void *ctx)
{
	__u8 *keys = malloc((size_t)budget * ref->key_size), *values = malloc((size_t)budget * ref->value_size);
	__u8 *now = malloc(ref->value_size);
	__u32 n = budget, gone = 0;
	int err = keys && values && now ? xnf_map_ref_read_batch(ref, walk, keys, values, &n) : -ENOMEM;

	for (__u32 i = 0; (err == 0 || err == -ENOENT) && i < n; i++) {
		const __u8 *key = keys + (size_t)i * ref->key_size;

		if (over(ctx, key, values + (size_t)i * ref->value_size, 0) && xnf_map_ref_lookup(ref, key, now) == 0 &&
		    over(ctx, key, now, 1) && xnf_map_ref_delete(ref, key) == 0)
			gone++;
	}
	free(keys);
	free(values);
	free(now);
	return gone;
}

long long xnf_map_ref_count(const struct xnf_map_ref *ref)
{
	void *key = calloc(2, ref->key_size ? ref->key_size : 1);
	void *next = (char *)key + ref->key_size;
	long long count = 0;
	int err;

	if (!key)
		return -ENOMEM;
	err = xnf_map_ref_next_key(ref, NULL, next);
	while (err == 0 && count < ref->max_entries) {
		count++;
		memcpy(key, next, ref->key_size);
		err = xnf_map_ref_next_key(ref, key, next);
	}
	free(key);
	return err == 0 || err == -ENOENT ? count : err;
}
