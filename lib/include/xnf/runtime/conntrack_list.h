/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The connection tables of the running NF, for its control socket (`xnf conntrack`). */
#ifndef XNF_RUNTIME_CONNTRACK_LIST_H
#define XNF_RUNTIME_CONNTRACK_LIST_H

#include <stddef.h>
#include <stdio.h>

#include <xnf/control.h>

/* The NF's connection tables (XNF_CT_TABLE): the maps with the table's twins beside them, as a JSON array. */
void xnf_ct_tables_json(FILE *out);

/*
 * The control request `connections TABLE [LIMIT]`: the connections of the table in force now (those idle past their
 * state's time, not swept yet, left out: the data path treats them as absent), up to LIMIT of them, one JSON object
 * a line, and last a line that counts them all. 0, or -1 with why.
 */
int xnf_ct_list(const struct xnf_rules_target *maps, const char *request, FILE *out, char *err, size_t errlen);

#endif
