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

/*
 * A rules file read and parsed once, whole (a pipe or /dev/stdin can be read only once): lines are bounded,
 * a NUL byte or a read error is an error, never a shorter file. NULL with "path:line: reason" in err.
 */
struct xnf_rules_file;
struct xnf_rules_file *xnf_rules_read_file(const char *path, char *err, size_t errlen);
/* Applies every rule of the file, or none: what was applied is undone if one fails. An NF with rules tables gets
 * them all at once (xnf_rules_change_whole). Count, or -1. */
int xnf_rules_apply_file(const struct xnf_rules_file *file, const struct xnf_rules_target *target, char *err,
			 size_t errlen);
void xnf_rules_free_file(struct xnf_rules_file *file);
/* The rules of next in force in place of those of in_force: each of next's rules written over what its key held (a
 * rule both files have, or one changed under the same key, is never absent), then every key of in_force's that next
 * does not have deleted, then the NF's commit; all of it undone if a step fails. An NF with rules tables makes the
 * change in the generation not in force and switches to it at once (xnf_rules_change_whole); others, entry by
 * entry. The number of next's rules, with how many were deleted in *removed; or -1. */
int xnf_rules_replace_file(const struct xnf_rules_file *in_force, const struct xnf_rules_file *next,
			   const struct xnf_rules_target *target, int *removed, char *err, size_t errlen);

/* Reads, then applies (the two above). Parses every line of path first; applies them only if all are valid, and
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
