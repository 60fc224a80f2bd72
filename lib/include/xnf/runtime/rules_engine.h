/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Applies an NF's rules (through its codec) to the maps of a running
 * instance, on whichever side holds them.
 */
#ifndef XNF_RUNTIME_RULES_ENGINE_H
#define XNF_RUNTIME_RULES_ENGINE_H

#include <stdio.h>

#include <xnf/control.h>
#include <xnf/runtime/map_ref.h>

/* Parses every line of path first; applies them only if all are valid, and
 * undoes what it applied if one fails, so a file is loaded whole or not at all.
 * Errors name the file and line. Returns the number of rules, or -1. */
int xnf_rules_load_file(const char *path, const struct xnf_rules_target *target, char *err, size_t errlen);
/* Parses a whole file without touching any map. Returns the number of rules, or -1. */
int xnf_rules_check_file(const char *path, char *err, size_t errlen);

int xnf_rules_add(const char *text, const struct xnf_rules_target *target, char *err, size_t errlen);
int xnf_rules_del(const char *text, const struct xnf_rules_target *target, char *err, size_t errlen);
/* Writes one rule per line. Returns the count, or -1. */
int xnf_rules_list(FILE *out, const struct xnf_rules_target *target, char *err, size_t errlen);

#endif
