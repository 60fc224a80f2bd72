// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <net/if.h>

#include <xnf/control.h>
#include <xnf/runtime/link_facts.h>
#include <xnf/internal/nf_entry.h>

/* The native twin of the BPF object's .rodata xnf_cfg; the runtime fills it before traffic. */
struct xnf_config xnf_cfg;

const struct xnf_config *xnf_instance_ports(void)
{
	return &xnf_cfg;
}

int xnf_instance_port_mac(__u32 port, __u8 mac[6])
{
	char name[IF_NAMESIZE];

	if (port >= xnf_cfg.nports || !if_indextoname(xnf_cfg.ifindex[port], name))
		return -1;
	return xnf_iface_mac(name, mac);
}
