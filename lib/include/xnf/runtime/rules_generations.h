/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The control side of rules tables (xnf/rules_tables.h): which generation of a table is in force, and a whole
 * change of the rules made in the other generation and put in force with one write.
 */
#ifndef XNF_RUNTIME_RULES_GENERATIONS_H
#define XNF_RUNTIME_RULES_GENERATIONS_H

#include <stdbool.h>
#include <xnf/control.h>

/* The maps of an instance as the rules see them: a rules table by its first name is its generation in force (or,
 * staging, the other one); every other map is itself. */
struct xnf_rules_view {
	struct xnf_rules_target sides;  /* the maps on the side(s) that run the NF */
	xnf_map_resolver user_side;     /* a split chain's workers' maps: the generation is written there too */
	bool staging;
};

/* A target reading through view (which must outlive it). */
struct xnf_rules_target xnf_rules_view_target(struct xnf_rules_view *view);

/* The name of the second generation of a table called name (which exists only if name is a rules table): 0, or
 * -ENAMETOOLONG. */
int xnf_rules_second_name(const char *name, char *out, size_t len);

/* Whether map is the table called name or its second generation: what is said of a table (its size) is said of
 * both. */
bool xnf_rules_same_table(const char *map, const char *name);

typedef int (*xnf_rules_change_fn)(const struct xnf_rules_target *maps, void *arg, char *err, size_t errlen);

/*
 * Makes a change of many rules at once. Where target is a view of an NF with rules tables: the tables in force
 * are copied into the other generation, change runs there, one write puts that generation in force, and once no
 * frame can still read the old one (an RCU grace period in the kernel and among the workers) the old one is
 * emptied. If change fails, nothing was in force but what was. Elsewhere change runs on target as it is.
 * change's result, or -1 with why in err.
 */
int xnf_rules_change_whole(const struct xnf_rules_target *target, xnf_rules_change_fn change, void *arg, char *err,
			   size_t errlen);

#endif
