// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The user plane function's start step: each port's own MAC, the source of what the UPF sends out of it. */
#include <stdio.h>

#include <xnf/control.h>
#include "upf.h"

static int upf_start(const struct xnf_rules_target *maps, char *err, size_t errlen)
{
	struct xnf_map_ref port_mac;

	if (xnf_map_find(maps, "upf_port_mac", &port_mac)) {
		snprintf(err, errlen, "the UPF's maps are missing");
		return -1;
	}
	for (__u32 port = 0; port < xnf_instance_ports()->nports; port++) {
		struct upf_port_mac mac = { .set = 1 };

		if (xnf_instance_port_mac(port, mac.mac) == 0)
			xnf_map_ref_update(&port_mac, &port, &mac, BPF_ANY);
	}
	return 0;
}

XNF_EXPORT_START(upf, upf_start);
