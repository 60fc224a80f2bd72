/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The verdict counters' names (slots of enum xnf_stat_slot): the one list stats and describe use. */
#ifndef XNF_RUNTIME_STATS_H
#define XNF_RUNTIME_STATS_H

#include <xnf/common.h>

extern const char *const xnf_stat_names[XNF_STAT_NSLOTS];

#endif
