/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef XNF_RUNTIME_PORTS_H
#define XNF_RUNTIME_PORTS_H

#include <xnf/runtime/types.h>

/* Adds one --iface to names[*count] (at most XNF_MAX_PORTS). 0, or -1 after saying why. */
int xnf_ports_add_name(char **names, __u32 *count, const char *name);
/* Resolves interface names in this network namespace. Prints the reason and returns -1 on error. */
int xnf_ports_resolve(char *const *names, __u32 count, struct xnf_port *ports);

#endif
