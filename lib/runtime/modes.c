// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Every mode the research measures, and what each one sets up: the one place a mode is declared. */
#include <string.h>

#include "instance.h"

const struct mode_info xnf_modes[] = {
	{ "xdp", true, false, XNF_DATAPATH_KERNEL, false, XNF_WAIT_BUSY,
	  "the NF runs in the kernel, native (driver) XDP", XNF_AT_XDP },
	{ "xdp-generic", true, true, XNF_DATAPATH_KERNEL, false, XNF_WAIT_BUSY,
	  "the NF runs in the kernel, generic (skb) XDP", XNF_AT_XDP },
	{ "afxdp", true, false, XNF_DATAPATH_USER, true, XNF_WAIT_BUSY,
	  "user space: workers spin on the rings, the driver runs from softirq", XNF_AT_XDP },
	{ "afxdp-sysc", true, false, XNF_DATAPATH_USER, true, XNF_WAIT_SYSCALL,
	  "user space: preferred busy poll, the driver runs in the workers' syscalls", XNF_AT_XDP },
	{ "afxdp-poll", true, false, XNF_DATAPATH_USER, true, XNF_WAIT_POLL,
	  "user space: workers sleep in poll() until packets arrive", XNF_AT_XDP },
	{ "xdp-sk", true, false, XNF_DATAPATH_KERNEL, true, XNF_WAIT_BUSY,
	  "the NF runs in XDP while AF_XDP sockets are open", XNF_AT_XDP },
	{ "xdp-sk-sysc", true, false, XNF_DATAPATH_KERNEL, true, XNF_WAIT_SYSCALL,
	  "the NF runs in XDP; AF_XDP sockets in preferred busy-poll mode", XNF_AT_XDP },
	{ "hybrid", true, false, XNF_DATAPATH_HYBRID, true, XNF_WAIT_BUSY,
	  "the NF runs in XDP: drops and passes stay in the kernel, AF_XDP workers forward", XNF_AT_XDP },
	{ "tc", true, false, XNF_DATAPATH_KERNEL, false, XNF_WAIT_BUSY,
	  "the NF runs in the kernel at tc ingress (TCX), on skbs: GSO segments stay whole", XNF_AT_TC },
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
