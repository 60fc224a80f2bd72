/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* One clear message per user error: "xnf: error: what was wrong; what to do". */
#ifndef XNF_RUNTIME_LOG_H
#define XNF_RUNTIME_LOG_H

#include <stdbool.h>

extern bool xnf_verbose;

void xnf_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void xnf_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void xnf_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
