// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <xnf/runtime/xdp_attach.h>
#include <xnf/runtime/log.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/if_link.h>
#include <string.h>
#include <unistd.h>

static void explain_attach_failure(const struct xnf_port *port, bool generic, int err)
{
	switch (err) {
	case -EBUSY:
	case -EEXIST:
		xnf_error("interface %s already has an XDP program attached: stop the other NF, or "
			  "remove it with 'ip link set dev %s xdp off'", port->name, port->name);
		break;
	case -EOPNOTSUPP:
		xnf_error("the driver of %s does not support %s XDP%s", port->name,
			  generic ? "generic" : "native", generic ? "" : ": use --mode xdp-generic instead");
		break;
	case -EPERM:
		xnf_error("attaching XDP to %s needs root (CAP_NET_ADMIN): run xnf with sudo", port->name);
		break;
	default:
		xnf_error("cannot attach XDP to %s: %s", port->name, strerror(-err));
	}
}

int xnf_xdp_attach_ports(int prog_fd, const struct xnf_port *ports, __u32 n, bool generic, int *link_fds)
{
	LIBBPF_OPTS(bpf_link_create_opts, opts, .flags = generic ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE);

	for (__u32 i = 0; i < n; i++)
		link_fds[i] = -1;
	for (__u32 i = 0; i < n; i++) {
		/* A bpf_link: the attachment goes away with its last fd, i.e. with this process. */
		int fd = bpf_link_create(prog_fd, ports[i].ifindex, BPF_XDP, &opts);

		if (fd < 0) {
			explain_attach_failure(&ports[i], generic, fd);
			xnf_xdp_detach_ports(link_fds, i);
			return -1;
		}
		link_fds[i] = fd;
	}
	return 0;
}

void xnf_xdp_detach_ports(int *link_fds, __u32 n)
{
	for (__u32 i = 0; i < n; i++) {
		if (link_fds[i] >= 0) {
			close(link_fds[i]);
			link_fds[i] = -1;
		}
	}
}
