/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* xnf dump's server side (capture_session.c). */
#ifndef XNF_LIB_RUNTIME_CAPTURE_SESSION_H
#define XNF_LIB_RUNTIME_CAPTURE_SESSION_H

#include <stddef.h>

struct instance;

/* Takes the control connection fd for a capture ("VERDICTS COUNT"): 0 when it owns fd from now on (it answers
 * and closes it), -1 with the reason in err (the caller answers and closes). */
int capture_session_start(struct instance *in, int fd, const char *args, char *err, size_t errlen);
/* Ends the running capture, if any, and waits for its thread: before the data path is torn down. */
void capture_session_stop(struct instance *in);
/* Each enum xnf_capture_side's name, by value, NULL-terminated: what describe says a record's side byte means. */
extern const char *const capture_side_names[];

#endif
