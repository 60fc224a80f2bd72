/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef XNF_RUNTIME_VERIFIER_STATS_H
#define XNF_RUNTIME_VERIFIER_STATS_H

struct bpf_program;

/* Before the object loads: the verifier is to keep its statistics for prog. 0, or -1 with a message. */
int xnf_verifier_stats_ask(struct bpf_program *prog);
/* After it loaded (or failed to): its statistics on stderr, each line naming what program it was (XDP, tc). */
void xnf_verifier_stats_say(const char *what);

#endif
