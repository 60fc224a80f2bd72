/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A process as state xnf leaves behind records its owner: its pid, start time (pids are reused, the pair is not)
 * and pid namespace (a pid means something only in its namespace: an NF in a container writes its own). */
#ifndef XNF_RUNTIME_PROCESS_H
#define XNF_RUNTIME_PROCESS_H

#include <stdbool.h>

struct xnf_process_id {
	int pid;                      /* in the owner's pid namespace */
	unsigned long long start;     /* clock ticks after boot (field 22 of /proc/PID/stat) */
	unsigned long long pid_ns;    /* the inode of its /proc/PID/ns/pid; 0: not recorded (the reader's own) */
};

/* The start time of a process of this pid namespace; 0 if there is none. */
unsigned long long xnf_process_start_time(int pid);

void xnf_process_self(struct xnf_process_id *id);

/* Whether the process recorded still runs. One of another pid namespace (an NF in a container, seen from the
 * host) is looked for among the processes this one can see, by that namespace's pid of each (NSpid); not found,
 * it is taken as gone. */
bool xnf_process_lives(const struct xnf_process_id *id);

/* "PID START PIDNS", what owner records hold, and its reader (an older record's two fields: this namespace). */
#define XNF_PROCESS_ID_FORMAT "%d %llu %llu"
bool xnf_process_id_parse(const char *text, struct xnf_process_id *id);

#endif
