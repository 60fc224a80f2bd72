// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The tc build at each port's ingress, and any other tc program xnf puts somewhere. TCX attaches it through a
 * bpf_link, which goes away with the process however it ends, beside whatever other programs the port runs there. A
 * kernel that refuses TCX (the facility table, kernel.h), or --attach clsact (where tc filter show must list it:
 * iproute2 before 6.6 does not show TCX), gets a clsact qdisc filter instead: that one outlives the process, so it is
 * taken off here, and a killed instance leaves it behind (tc filter del dev PORT ingress removes it). A clsact qdisc
 * that xnf added for it goes too once no filter is left in it: the port is as xnf found it.
 */
#include <xnf/runtime/xdp_instance.h>
#include <xnf/runtime/xdp_attach.h>
#include <xnf/runtime/kernel.h>
#include <xnf/runtime/link_facts.h>
#include <xnf/runtime/log.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

/* libbpf 1.1 and bookworm's headers predate TCX; the kernel's values. */
#ifndef XNF_BPF_TCX_INGRESS
#define XNF_BPF_TCX_INGRESS 46
#endif
#define XNF_BPF_TCX_EGRESS 47
/*
 * Removes the clsact qdisc xnf added, unless a filter is in it: one another party put there meanwhile keeps it (and
 * its filters, which deleting the qdisc would take with it).
 */
static void remove_clsact_if_empty(const struct xnf_port *port)
{
	LIBBPF_OPTS(bpf_tc_hook, both, .ifindex = port->ifindex, .attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS);
	struct xnf_tc_filter filter;
	__u32 ingress = 1, egress = 1;

	if (xnf_clsact_filters(port->ifindex, false, &filter, 1, &ingress) ||
	    xnf_clsact_filters(port->ifindex, true, &filter, 1, &egress) || ingress || egress)
		return;
	bpf_tc_hook_destroy(&both);
}

static int attach_clsact(int prog_fd, const struct xnf_port *port, bool egress, enum xnf_tc_via *via)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = port->ifindex, .attach_point = egress ? BPF_TC_EGRESS : BPF_TC_INGRESS);
	LIBBPF_OPTS(bpf_tc_opts, opts, .prog_fd = prog_fd, .handle = XNF_TC_HANDLE, .priority = XNF_TC_PRIORITY);
	int err = bpf_tc_hook_create(&hook);

	if (err && err != -EEXIST)
		return err;
	*via = err ? XNF_TC_VIA_FILTER : XNF_TC_VIA_OWN_QDISC;
	err = bpf_tc_attach(&hook, &opts);
	if (err && *via == XNF_TC_VIA_OWN_QDISC)
		remove_clsact_if_empty(port);
	return err;
}

static void detach_clsact(const struct xnf_port *port, bool egress, enum xnf_tc_via via)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = port->ifindex, .attach_point = egress ? BPF_TC_EGRESS : BPF_TC_INGRESS);
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = XNF_TC_HANDLE, .priority = XNF_TC_PRIORITY);

	bpf_tc_detach(&hook, &opts);
	if (via == XNF_TC_VIA_OWN_QDISC)
		remove_clsact_if_empty(port);
}

static void explain_tc_failure(const struct xnf_port *port, int err)
{
	char why[512];

	if (err == -EPERM)
		xnf_error("attaching the tc program to %s needs root (CAP_NET_ADMIN): run xnf with sudo", port->name);
	else if (err == -EEXIST)
		xnf_error("%s already has a clsact filter at xnf's place (handle 0x%x, priority 0x%x): a killed xnf left "
			  "it; remove it with 'tc filter del dev %s ingress'", port->name, XNF_TC_HANDLE,
			  XNF_TC_PRIORITY, port->name);
	else if (!xnf_kernel_has(XNF_KF_TCX) && !xnf_kernel_has(XNF_KF_CLSACT))
		xnf_error("cannot attach the tc program to %s's ingress: %s", port->name,
			  xnf_kernel_refusal(XNF_KF_CLSACT, why, sizeof(why)));
	else
		xnf_error("cannot attach the tc program to %s's ingress: %s", port->name, strerror(-err));
}

int xnf_tc_attach(int prog_fd, const struct xnf_port *port, bool egress, bool want_clsact, enum xnf_tc_via *via)
{
	int err;

	*via = XNF_TC_VIA_LINK;
	if (!want_clsact && xnf_kernel_has(XNF_KF_TCX))
		return bpf_link_create(prog_fd, port->ifindex, egress ? XNF_BPF_TCX_EGRESS : XNF_BPF_TCX_INGRESS, NULL);
	if (!want_clsact)
		xnf_kernel_say_fallback(XNF_KF_TCX);
	err = attach_clsact(prog_fd, port, egress, via);
	return err ? err : XNF_TC_NO_LINK;
}

void xnf_tc_detach(const struct xnf_port *port, bool egress, int fd, enum xnf_tc_via via)
{
	if (via != XNF_TC_VIA_LINK)
		detach_clsact(port, egress, via);
	else if (fd >= 0)
		close(fd);
}

int xnf_tc_attach_ports(struct xnf_xdp_instance *x)
{
	for (__u32 i = 0; i < x->nports; i++) {
		const struct xnf_port *port = &x->ports[i];
		int fd = xnf_tc_attach(x->prog_fd, port, false, x->attach_clsact, &x->tc_via[i]);

		if (fd >= 0 || fd == XNF_TC_NO_LINK) {
			x->link_fds[i] = fd >= 0 ? fd : -1;
			continue;
		}
		explain_tc_failure(port, fd);
		xnf_tc_detach_ports(x);
		xnf_xdp_detach_ports(x->link_fds, x->nports);
		return -1;
	}
	return 0;
}

void xnf_tc_detach_ports(struct xnf_xdp_instance *x)
{
	for (__u32 i = 0; i < x->nports; i++) {
		if (x->tc_via[i] != XNF_TC_VIA_LINK)
			detach_clsact(&x->ports[i], false, x->tc_via[i]);
		x->tc_via[i] = XNF_TC_VIA_LINK;
	}
}

int xnf_tc_ingress_programs(int ifindex, __u32 *ids, __u32 max, __u32 *count)
{
	LIBBPF_OPTS(bpf_prog_query_opts, query, .prog_ids = ids, .prog_cnt = max);
	int err = bpf_prog_query_opts(ifindex, XNF_BPF_TCX_INGRESS, &query);

	*count = err ? 0 : query.prog_cnt;
	return err == -EINVAL || err == -EOPNOTSUPP ? 0 : err;
}
