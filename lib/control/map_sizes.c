// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Maps sized with another (<xnf/runtime/map_sizes.h>). */
#include <xnf/runtime/map_sizes.h>
#include <xnf/runtime/rules_generations.h>
#include <xnf/conntrack.h>

#include <string.h>

static bool has_suffix(const char *map, const char *suffix, char *table, size_t len)
{
	size_t n = strlen(map), tail = strlen(suffix);

	if (n <= tail || strcmp(map + n - tail, suffix) != 0 || n - tail >= len)
		return false;
	memcpy(table, map, n - tail);
	table[n - tail] = '\0';
	return true;
}

enum xnf_ct_part xnf_ct_table_part(const char *map, char *table, size_t len)
{
	if (has_suffix(map, XNF_CT_RING_ENDS_SUFFIX, table, len) || has_suffix(map, XNF_CT_TIMEOUTS_SUFFIX, table, len) ||
	    has_suffix(map, XNF_CT_FRAGMENTS_SUFFIX, table, len))
		return XNF_CT_PART_FIXED;
	if (has_suffix(map, XNF_CT_WINDOWS_SUFFIX, table, len))
		return XNF_CT_PART_WINDOWS;
	return has_suffix(map, XNF_CT_RING_SUFFIX, table, len) ? XNF_CT_PART_RING : XNF_CT_NOT_A_PART;
}

bool xnf_map_sized_with(const char *map, const char *name)
{
	char table[128];
	enum xnf_ct_part part = xnf_ct_table_part(map, table, sizeof(table));

	return xnf_rules_same_table(map, name) ||
	       ((part == XNF_CT_PART_RING || part == XNF_CT_PART_WINDOWS) && strcmp(table, name) == 0);
}
