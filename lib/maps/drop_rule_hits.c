// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A worker's count of one pure-drop rule's hit (xnf_drop_rule_hit, natively). A
 * rule's entry is made on its first hit and never removed or replaced, so the
 * controller may read it by pointer while workers add to it.
 */
#include <errno.h>

#include <xnf/drop_rules.h>

void xnf__drop_rule_hit(struct xnf_map *hits, const void *key)
{
	static const struct xnf_drop_rule_hits first = { 0 };
	struct xnf_drop_rule_hits *h = xnf_map_lookup(hits, key);

	if (!h) {
		/* EEXIST: another worker made it first; ENOSPC: the table is full and the hit is not counted
		 * per rule (the NF's own counters still have it). */
		xnf_map_update(hits, key, &first, BPF_NOEXIST);
		h = xnf_map_lookup(hits, key);
		if (!h)
			return;
	}
	__atomic_fetch_add(&h->user, 1, __ATOMIC_RELAXED);
}
