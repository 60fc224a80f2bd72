// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Maps sized with another (<xnf/runtime/map_sizes.h>). */
#include <xnf/runtime/map_sizes.h>
#include <xnf/runtime/rules_generations.h>
#include <xnf/conntrack.h>

#include <string.h>

bool xnf_ct_ring_table(const char *map, char *table, size_t len)
{
	size_t n = strlen(map), suffix = strlen(XNF_CT_RING_SUFFIX);

	if (n <= suffix || strcmp(map + n - suffix, XNF_CT_RING_SUFFIX) != 0 || n - suffix >= len)
		return false;
	memcpy(table, map, n - suffix);
	table[n - suffix] = '\0';
	return true;
}

bool xnf_map_sized_with(const char *map, const char *name)
{
	char table[128];

	if (xnf_rules_same_table(map, name))
		return true;
	return xnf_ct_ring_table(map, table, sizeof(table)) && strcmp(table, name) == 0;
}
