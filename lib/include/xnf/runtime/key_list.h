/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A growing list of a map's keys: collected first wherever a walk would change the map it walks (a hash map's walk
 * restarts when its current key is deleted). */
#ifndef XNF_RUNTIME_KEY_LIST_H
#define XNF_RUNTIME_KEY_LIST_H

#include <stddef.h>
#include <linux/types.h>

struct xnf_key_list {
	__u8 *keys;
	size_t n, cap, size; /* size: one key's bytes, set before the first push */
};

/* 0, or -ENOMEM (the list stays as it was). */
int xnf_key_list_push(struct xnf_key_list *l, const void *key);
static inline const void *xnf_key_list_at(const struct xnf_key_list *l, size_t i)
{
	return l->keys + i * l->size;
}
void xnf_key_list_free(struct xnf_key_list *l);

#endif
