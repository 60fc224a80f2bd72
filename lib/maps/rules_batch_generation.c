// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <linux/types.h>

/* The rules generation a worker read as its batch started (xnf/rules_tables.h). */
__thread __u32 xnf_rules_batch_generation;
