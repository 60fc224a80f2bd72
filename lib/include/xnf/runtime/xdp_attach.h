/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Attaching an XDP program to ports with bpf_links, all or none. */
#ifndef XNF_RUNTIME_XDP_ATTACH_H
#define XNF_RUNTIME_XDP_ATTACH_H

#include <stdbool.h>

#include <xnf/runtime/xdp_instance.h>

/* Fills link_fds[0..n) or, on failure, prints why, detaches what it attached and returns -1. */
int xnf_xdp_attach_ports(int prog_fd, const struct xnf_port *ports, __u32 n, bool generic, int *link_fds);
/* Closes the link fds that are open (>= 0) and marks them closed. */
void xnf_xdp_detach_ports(int *link_fds, __u32 n);

#endif
