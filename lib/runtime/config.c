// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <xnf/control.h>
#include <xnf/internal/nf_entry.h>

/* The native twin of the BPF object's .rodata xnf_cfg; the runtime fills it before traffic. */
struct xnf_config xnf_cfg;

const struct xnf_config *xnf_instance_ports(void)
{
	return &xnf_cfg;
}
