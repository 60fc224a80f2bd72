// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <xnf/runtime/ports.h>
#include <xnf/runtime/log.h>

#include <string.h>

int xnf_ports_add_name(char **names, __u32 *count, const char *name)
{
	if (*count == XNF_MAX_PORTS) {
		xnf_error("more than %d interfaces given", XNF_MAX_PORTS);
		return -1;
	}
	names[(*count)++] = (char *)name;
	return 0;
}

int xnf_ports_resolve(char *const *names, __u32 count, struct xnf_port *ports)
{
	if (count == 0) {
		xnf_error("no interface given: name one with --iface IF");
		return -1;
	}
	if (count > XNF_MAX_PORTS) {
		xnf_error("%u interfaces given, at most %d are supported", count, XNF_MAX_PORTS);
		return -1;
	}
	for (__u32 i = 0; i < count; i++) {
		if (strlen(names[i]) >= IF_NAMESIZE) {
			xnf_error("interface name '%s' is too long (at most %d characters)", names[i],
				  IF_NAMESIZE - 1);
			return -1;
		}
		for (__u32 j = 0; j < i; j++) {
			if (strcmp(names[i], names[j]) == 0) {
				xnf_error("interface '%s' is given twice: name each port once", names[i]);
				return -1;
			}
		}
		ports[i].ifindex = (int)if_nametoindex(names[i]);
		if (!ports[i].ifindex) {
			xnf_error("interface '%s' does not exist in this network namespace "
				  "(see 'ip link show'; inside a namespace run xnf with 'ip netns exec NS')",
				  names[i]);
			return -1;
		}
		strcpy(ports[i].name, names[i]);
	}
	return 0;
}
