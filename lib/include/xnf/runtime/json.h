/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef XNF_RUNTIME_JSON_H
#define XNF_RUNTIME_JSON_H

#include <stdio.h>

/* Writes s as a JSON string literal, escaped. */
void xnf_json_string(FILE *out, const char *s);

#endif
