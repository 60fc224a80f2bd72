/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What a size given for one map (--map-size) says of others: a rules table's second generation
 * (xnf/rules_tables.h) and a connection table's ring of its newest connections (xnf/conntrack.h) have the
 * table's size, and are sized only through it.
 */
#ifndef XNF_RUNTIME_MAP_SIZES_H
#define XNF_RUNTIME_MAP_SIZES_H

#include <stdbool.h>
#include <stddef.h>

/* Whether a size given for the map called name is also map's (map being name itself or one sized with it). */
bool xnf_map_sized_with(const char *map, const char *name);

enum xnf_ct_part {
	XNF_CT_NOT_A_PART,
	XNF_CT_PART_RING,    /* sized with its table */
	XNF_CT_PART_WINDOWS, /* its connections' TCP windows: sized with its table */
	XNF_CT_PART_FIXED,   /* the idle times, the ring's ends: a size of their own */
};

/* Whether map is a part of a connection table (its name the table's and one of XNF_CT_TABLE's suffixes), with the
 * table's name in table. A part of a table the NF has no map for is not one: the caller checks. */
enum xnf_ct_part xnf_ct_table_part(const char *map, char *table, size_t len);

#endif
