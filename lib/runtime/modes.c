// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Every mode the research measures, and what each one sets up. */
#include <string.h>

#include "instance.h"

const struct mode_info xnf_modes[] = {
	{ "xdp", true, false, XNF_DATAPATH_KERNEL, false, XNF_WAIT_BUSY,
	  "the NF runs in the kernel, native (driver) XDP" },
	{ "xdp-generic", true, true, XNF_DATAPATH_KERNEL, false, XNF_WAIT_BUSY,
	  "the NF runs in the kernel, generic (skb) XDP" },
	{ "afxdp", true, false, XNF_DATAPATH_USER, true, XNF_WAIT_BUSY,
	  "user space: workers spin on the rings, the driver runs from softirq" },
	{ "afxdp-sysc", true, false, XNF_DATAPATH_USER, true, XNF_WAIT_SYSCALL,
	  "user space: preferred busy poll, the driver runs in the workers' syscalls" },
	{ "afxdp-poll", true, false, XNF_DATAPATH_USER, true, XNF_WAIT_POLL,
	  "user space: workers sleep in poll() until packets arrive" },
	{ "xdp-sk", true, false, XNF_DATAPATH_KERNEL, true, XNF_WAIT_BUSY,
	  "the NF runs in XDP while AF_XDP sockets are open" },
	{ "xdp-sk-sysc", true, false, XNF_DATAPATH_KERNEL, true, XNF_WAIT_SYSCALL,
	  "the NF runs in XDP; AF_XDP sockets in preferred busy-poll mode" },
	{ "hybrid", true, false, XNF_DATAPATH_HYBRID, true, XNF_WAIT_BUSY,
	  "the NF runs in XDP: drops and passes stay in the kernel, AF_XDP workers forward" },
};

const size_t xnf_nmodes = sizeof(xnf_modes) / sizeof(xnf_modes[0]);

const struct mode_info *xnf_find_mode(const char *name)
{
	for (size_t i = 0; i < xnf_nmodes; i++) {
		if (strcmp(xnf_modes[i].name, name) == 0)
			return &xnf_modes[i];
	}
	return NULL;
}
