// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#define _LGPL_SOURCE
#include <urcu-qsbr.h> /* rcu_dereference, rcu_assign_pointer */

#include "hash_table.h"
#include "map_memory.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <xnf/runtime/rcu.h>

static __u32 round_up_pow2(__u32 n)
{
	__u32 p = 16;

	while (p < n && p < (1u << 30))
		p <<= 1;
	return p;
}

int hash_table_init(struct hash_table *t, __u32 key_size, __u32 value_size, __u32 nbuckets_hint)
{
	__u32 nbuckets = round_up_pow2(nbuckets_hint);

	memset(t, 0, sizeof(*t));
	t->buckets = map_memory_zeroed(nbuckets, sizeof(*t->buckets));
	if (!t->buckets)
		return -ENOMEM;
	t->bucket_mask = nbuckets - 1;
	t->key_size = key_size;
	t->value_size = value_size;
	t->value_offset = (key_size + 7) & ~7u; /* values 8-byte aligned, as in the kernel */
	return 0;
}

void hash_table_free(struct hash_table *t)
{
	if (!t->buckets)
		return;
	for (__u32 i = 0; i <= t->bucket_mask; i++) {
		struct hash_node *n = t->buckets[i];

		while (n) {
			struct hash_node *next = n->next;

			free(n);
			n = next;
		}
	}
	free(t->buckets);
	t->buckets = NULL;
}

/* 64-bit FNV-1a with a final avalanche: keys are short, this is plenty. */
__u64 hash_bytes(const void *data, __u32 len)
{
	const __u8 *p = data;
	__u64 h = 0xcbf29ce484222325ull;

	for (__u32 i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h;
}

/* Writers only: the link that points at key's node, or the chain's terminating NULL. */
static struct hash_node **find_link(const struct hash_table *t, const void *key, __u64 hash)
{
	struct hash_node **link = &t->buckets[hash & t->bucket_mask];

	for (; *link; link = &(*link)->next) {
		if ((*link)->hash == hash && memcmp((*link)->data, key, t->key_size) == 0)
			return link;
	}
	return link;
}

struct hash_node *hash_table_find(const struct hash_table *t, const void *key)
{
	__u64 hash = hash_bytes(key, t->key_size);
	struct hash_node *n = rcu_dereference(t->buckets[hash & t->bucket_mask]);

	for (; n; n = rcu_dereference(n->next)) {
		if (n->hash == hash && memcmp(n->data, key, t->key_size) == 0)
			return n;
	}
	return NULL;
}

static struct hash_node *new_node(const struct hash_table *t, __u64 hash, const void *key, const void *value)
{
	struct hash_node *n = calloc(1, sizeof(*n) + t->value_offset + t->value_size);

	if (!n)
		return NULL;
	n->hash = hash;
	memcpy(n->data, key, t->key_size);
	memcpy(hash_node_value(t, n), value, t->value_size);
	return n;
}

struct hash_node *hash_table_put(struct hash_table *t, const void *key, const void *value,
				 struct hash_node **replaced)
{
	__u64 hash = hash_bytes(key, t->key_size);
	struct hash_node **link = find_link(t, key, hash);
	struct hash_node *old = *link, *n = new_node(t, hash, key, value);

	*replaced = NULL;
	if (!n)
		return NULL;
	/* Fully built before it is published: a reader sees all of it or none. */
	n->next = old ? old->next : NULL;
	rcu_assign_pointer(*link, n);
	if (old)
		*replaced = old;
	else
		t->count++;
	return n;
}

int hash_table_remove(struct hash_table *t, const void *key, struct hash_node **removed)
{
	struct hash_node **link = find_link(t, key, hash_bytes(key, t->key_size));
	struct hash_node *n = *link;

	*removed = NULL;
	if (!n)
		return -ENOENT;
	rcu_assign_pointer(*link, n->next); /* readers already on n still reach the rest of the chain */
	t->count--;
	*removed = n;
	return 0;
}

static void free_node(struct rcu_head *head)
{
	free((char *)head - offsetof(struct hash_node, rcu));
}

void hash_node_retire(struct hash_node *n)
{
	if (n)
		xnf_rcu_retire(&n->rcu, free_node);
}

static struct hash_node *first_from_bucket(const struct hash_table *t, __u64 bucket)
{
	for (; bucket <= t->bucket_mask; bucket++) {
		if (t->buckets[bucket])
			return t->buckets[bucket];
	}
	return NULL;
}

struct hash_node *hash_table_next(const struct hash_table *t, const void *key)
{
	struct hash_node *n;
	__u64 hash;

	if (!key)
		return first_from_bucket(t, 0);
	hash = hash_bytes(key, t->key_size);
	n = *find_link(t, key, hash);
	if (!n)
		return first_from_bucket(t, 0); /* as the kernel: unknown key restarts */
	if (n->next)
		return n->next;
	return first_from_bucket(t, (hash & t->bucket_mask) + 1);
}
