/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* xnf-<nf> cost (nf_cost.c). */
#ifndef XNF_LIB_RUNTIME_NF_COST_H
#define XNF_LIB_RUNTIME_NF_COST_H

#include "instance.h"

struct cost_options {
	struct run_options run; /* first: --rules and --map-size are parsed into it as for run */
	const char *frames;
	__u32 repeat;
};

/* Prints one JSON line: the NF's native and XDP time per frame on the frames, and their verdicts. Exit code. */
int xnf_cost_run(const struct cost_options *opt);

#endif
