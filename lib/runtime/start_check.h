/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef XNF_RUNTIME_START_CHECK_H
#define XNF_RUNTIME_START_CHECK_H

#include "instance.h"

/* The --state and --pin folders: each a folder of the instance's own in bpffs (said if not). */
int xnf_check_folders(const struct run_options *opt);

/* Every check a start makes before it attaches (ports, rules, folders); on success the options read, as JSON on
 * stdout. */
int xnf_start_check(const struct run_options *opt);

#endif
