// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <xnf/runtime/map_ref.h>
#include <xnf/internal/native_maps.h>

#include <errno.h>

int xnf_native_resolve_map(void *ctx, const char *name, struct xnf_map_ref *ref)
{
	struct xnf_map *m = xnf_native_map_find(name);

	(void)ctx;
	if (!m)
		return -ENOENT;
	ref->name = m->name;
	ref->fd = -1;
	ref->native = m;
	ref->key_size = m->key_size;
	ref->value_size = m->value_size;
	ref->max_entries = m->max_entries;
	return 0;
}
