/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A chained hash table of fixed-size keys and values: the building block of
 * native maps. Readers (find, value access) need no lock and may run while a
 * writer changes the table; writers are serialised by the caller, and free
 * what they replaced or removed with hash_node_retire() once unlocked.
 */
#ifndef XNF_LIB_HASH_TABLE_H
#define XNF_LIB_HASH_TABLE_H

#include <linux/types.h>
#include <urcu/call-rcu.h>

struct hash_node {
	struct hash_node *next;
	__u64 hash;
	struct rcu_head rcu;
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
/* Frees the table and its nodes: only once no reader can be inside it. */
void hash_table_free(struct hash_table *t);
__u64 hash_bytes(const void *data, __u32 len);

struct hash_node *hash_table_find(const struct hash_table *t, const void *key);
/*
 * Inserts, or replaces the node of an existing key with a new one (readers see
 * the old value or the new one, never a mix). *replaced is the node to retire,
 * or NULL. Returns the node holding the value now, NULL on ENOMEM.
 */
struct hash_node *hash_table_put(struct hash_table *t, const void *key, const void *value,
				 struct hash_node **replaced);
/* Unlinks the key's node into *removed (to retire). 0, or -ENOENT. */
int hash_table_remove(struct hash_table *t, const void *key, struct hash_node **removed);
/* The node after key in iteration order, the first one for key == NULL or unknown. Writers only. */
struct hash_node *hash_table_next(const struct hash_table *t, const void *key);
/* Frees a replaced or removed node once no reader can hold it. Call with no lock held. */
void hash_node_retire(struct hash_node *n);

static inline void *hash_node_value(const struct hash_table *t, struct hash_node *n)
{
	return n->data + t->value_offset;
}

#endif
