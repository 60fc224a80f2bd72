// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <xnf/runtime/xdp_attach.h>
#include <xnf/runtime/link_facts.h>
#include <xnf/runtime/log.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <linux/if_link.h>
#include <string.h>
#include <unistd.h>

/* The bpf_link that attaches a program to ifindex, or 0 when none does (it was attached by netlink: ip link). */
static __u32 link_holding(int ifindex)
{
	__u32 id = 0;

	while (bpf_link_get_next_id(id, &id) == 0) {
		struct bpf_link_info info = { 0 };
		__u32 len = sizeof(info);
		int fd = bpf_link_get_fd_by_id(id);

		if (fd < 0)
			continue;
		if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0 && info.type == BPF_LINK_TYPE_XDP &&
		    (int)info.xdp.ifindex == ifindex) {
			close(fd);
			return id;
		}
		close(fd);
	}
	return 0;
}

/* The process holding bpf_link id (its fdinfo says link_id), as "pid N (COMM)"; "" when none is found. */
static void link_owner(__u32 link_id, char *out, size_t len)
{
	char want[32], path[300], line[128];
	DIR *procs = opendir("/proc");
	struct dirent *p;

	out[0] = '\0';
	snprintf(want, sizeof(want), "link_id:\t%u\n", link_id);
	while (procs && !out[0] && (p = readdir(procs))) {
		DIR *fds;
		struct dirent *fd;

		if (p->d_name[0] < '0' || p->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/fdinfo", p->d_name);
		fds = opendir(path);
		while (fds && !out[0] && (fd = readdir(fds))) {
			FILE *f;

			snprintf(path, sizeof(path), "/proc/%s/fdinfo/%s", p->d_name, fd->d_name);
			f = fopen(path, "re");
			while (f && fgets(line, sizeof(line), f)) {
				if (strcmp(line, want) == 0) {
					char comm[32] = "?";
					FILE *c;

					snprintf(path, sizeof(path), "/proc/%s/comm", p->d_name);
					if ((c = fopen(path, "re"))) {
						if (fgets(comm, sizeof(comm), c))
							comm[strcspn(comm, "\n")] = '\0';
						fclose(c);
					}
					snprintf(out, len, "pid %s (%s)", p->d_name, comm);
					break;
				}
			}
			if (f)
				fclose(f);
		}
		if (fds)
			closedir(fds);
	}
	if (procs)
		closedir(procs);
}

/* The hook is someone else's: say whose, and the way to free it that works for the way it was attached. */
static void explain_taken(const struct xnf_port *port)
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info), link_id = link_holding(port->ifindex);
	struct xnf_link link;
	char owner[128] = "", what[96] = "";
	int fd;

	if (xnf_link_get(port->ifindex, XNF_NSID_SAME, &link) == 0 && link.xdp_prog_id &&
	    (fd = bpf_prog_get_fd_by_id(link.xdp_prog_id)) >= 0) {
		if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0)
			snprintf(what, sizeof(what), " (program %s, id %u)", info.name, info.id);
		close(fd);
	}
	if (!link_id) {
		xnf_error("interface %s already has an XDP program attached%s: stop what attached it, or remove it with "
			  "'ip link set dev %s xdp off'", port->name, what, port->name);
		return;
	}
	link_owner(link_id, owner, sizeof(owner));
	xnf_error("interface %s already has an XDP program attached%s through a bpf_link (id %u)%s%s: it leaves with "
		  "the process that holds the link (stop %s); 'ip link set ... xdp off' cannot remove it", port->name,
		  what, link_id, owner[0] ? " held by " : "", owner, owner[0] ? "it" : "that process: bpftool link show");
}

static void explain_attach_failure(const struct xnf_port *port, bool generic, int err)
{
	switch (err) {
	case -EBUSY:
	case -EEXIST:
		explain_taken(port);
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
