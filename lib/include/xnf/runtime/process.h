/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A process as state xnf leaves behind records its owner: its pid and start time (pids are reused, the pair is
 * not). */
#ifndef XNF_RUNTIME_PROCESS_H
#define XNF_RUNTIME_PROCESS_H

/* The start time of a process in clock ticks after boot (field 22 of /proc/PID/stat); 0 if there is none. */
unsigned long long xnf_process_start_time(int pid);

#endif
