// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --verifier-stats: what the kernel's verifier took to accept the NF's program (instructions processed of its
 * budget, states, time), said as the program loads. An NF near the budget fails to load after its next lookup; this
 * makes measuring it a command rather than a patch.
 */
#include <xnf/runtime/verifier_stats.h>

#include <bpf/libbpf.h>
#include <stdio.h>
#include <string.h>

/* The kernel's statistics only (BPF_LOG_STATS): a few lines, not the trace of every instruction. The buffer is large
 * all the same: the kernel refuses the load (ENOSPC) where its log was ever longer than the buffer, counting lines it
 * wrote and took back while verifying (a program with a bpf_loop callback went past 4 KiB so on 6.18); pages never
 * written take no memory. */
#define LOG_STATS 4
static char stats_log[1 << 20];

int xnf_verifier_stats_ask(struct bpf_program *prog)
{
	stats_log[0] = '\0';
	if (bpf_program__set_log_buf(prog, stats_log, sizeof(stats_log)) ||
	    bpf_program__set_log_level(prog, LOG_STATS)) {
		fprintf(stderr, "xnf: cannot ask the verifier for its statistics: this libbpf lacks a program's log\n");
		return -1;
	}
	return 0;
}

void xnf_verifier_stats_say(const char *what)
{
	char *line, *rest = stats_log;

	if (!stats_log[0]) {
		fprintf(stderr, "xnf: the verifier gave no statistics for the %s program\n", what);
		return;
	}
	while ((line = strtok_r(rest, "\n", &rest)))
		fprintf(stderr, "xnf: verifier, %s program: %s\n", what, line);
}
