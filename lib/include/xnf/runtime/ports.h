/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef XNF_RUNTIME_PORTS_H
#define XNF_RUNTIME_PORTS_H

#include <xnf/runtime/types.h>

/* Resolves interface names in this network namespace. Prints the reason and returns -1 on error. */
int xnf_ports_resolve(char *const *names, __u32 count, struct xnf_port *ports);

#endif
