/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A chained hash table of fixed-size keys and values: the building block of native maps. */
#ifndef XNF_LIB_HASH_TABLE_H
#define XNF_LIB_HASH_TABLE_H

#include <linux/types.h>

struct hash_node {
	struct hash_node *next;
	__u64 hash;
	__u8 data[]; /* key, then the value at value_offset */
};

struct hash_table {
	struct hash_node **buckets;
	__u32 bucket_mask;
	__u32 count;
	__u32 key_size;
	__u32 value_size;
	__u32 value_offset;
};

int hash_table_init(struct hash_table *t, __u32 key_size, __u32 value_size, __u32 nbuckets_hint);
void hash_table_free(struct hash_table *t);
__u64 hash_bytes(const void *data, __u32 len);

struct hash_node *hash_table_find(const struct hash_table *t, const void *key);
/* Inserts or replaces; returns the node holding the value now. NULL on ENOMEM. */
struct hash_node *hash_table_put(struct hash_table *t, const void *key, const void *value);
/* 0, or -ENOENT. */
int hash_table_remove(struct hash_table *t, const void *key);
/* The node after key in iteration order, the first one for key == NULL or unknown. */
struct hash_node *hash_table_next(const struct hash_table *t, const void *key);

static inline void *hash_node_value(const struct hash_table *t, struct hash_node *n)
{
	return n->data + t->value_offset;
}

#endif
