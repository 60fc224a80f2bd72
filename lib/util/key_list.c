// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <xnf/runtime/key_list.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int xnf_key_list_push(struct xnf_key_list *l, const void *key)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		__u8 *bigger = realloc(l->keys, cap * l->size);

		if (!bigger)
			return -ENOMEM;
		l->keys = bigger;
		l->cap = cap;
	}
	memcpy(l->keys + l->n++ * l->size, key, l->size);
	return 0;
}

void xnf_key_list_free(struct xnf_key_list *l)
{
	free(l->keys);
	*l = (struct xnf_key_list){ .size = l->size };
}
