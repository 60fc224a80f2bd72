// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * XNF_PASS in user space, where the live path does not carry it (a kernel without live frames, the xsk ring, a
 * frame too long for a live frame): frames go back to the local stack through a TAP device per port, with that
 * port's MAC, and a tc program at the TAP's ingress (pass_redirect.bpf.c) hands each one on into the port's own
 * receive. The stack sees the frame as received on the port, so ARP and neighbour discovery resolve the port's
 * neighbours, and replies leave through the port. The TAP exists as long as the instance's file descriptor, the
 * program as long as the TAP: both go away with the process, however it ends.
 */
#include "afxdp_internal.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <xnf/runtime/log.h>
#include <xnf/runtime/xdp_instance.h>

#include "pass_redirect.skel.h"

static int copy_mac_and_raise(const char *tap, const char *port)
{
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM, 0), rc = -1;

	if (fd < 0)
		return -1;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", port);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) == 0) {
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", tap);
		if (ioctl(fd, SIOCSIFHWADDR, &ifr) == 0 && ioctl(fd, SIOCGIFFLAGS, &ifr) == 0) {
			ifr.ifr_flags |= IFF_UP;
			rc = ioctl(fd, SIOCSIFFLAGS, &ifr);
		}
	}
	close(fd);
	return rc;
}

/* The TAP of port: created, given the port's MAC and raised; its name in name. */
static int open_tap(struct xnf_afxdp *a, __u32 port, char *name, size_t len)
{
	struct ifreq ifr = { .ifr_flags = IFF_TAP | IFF_NO_PI };
	int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);

	/* Short and unique per instance and port: IFNAMSIZ is 16. */
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "xnfp%u.%u", (unsigned)getpid() % 100000u, port);
	snprintf(name, len, "%s", ifr.ifr_name);
	if (fd < 0 || ioctl(fd, TUNSETIFF, &ifr) || copy_mac_and_raise(ifr.ifr_name, a->ports[port].name)) {
		xnf_error("cannot create the pass-to-stack device %s for port %s: %s (XNF_PASS in user space "
			  "needs /dev/net/tun)", ifr.ifr_name, a->ports[port].name, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* The program that hands the TAP's frames on into the port, attached at the TAP's ingress. */
static int hand_on_into_port(struct xnf_afxdp *a, __u32 port, const char *tap)
{
	struct xnf_port at = { .ifindex = (int)if_nametoindex(tap) };
	__u32 key = (__u32)at.ifindex, value = (__u32)a->ports[port].ifindex;
	enum xnf_tc_via via;
	int fd;

	snprintf(at.name, sizeof(at.name), "%s", tap);
	if (!a->pass_skel && !(a->pass_skel = pass_redirect_bpf__open_and_load())) {
		xnf_error("cannot load the program that hands passed frames to the stack: %s", strerror(errno));
		return -1;
	}
	if (bpf_map_update_elem(bpf_map__fd(a->pass_skel->maps.xnf_pass_ports), &key, &value, BPF_ANY)) {
		xnf_error("cannot map %s to port %s: %s", tap, a->ports[port].name, strerror(errno));
		return -1;
	}
	fd = xnf_tc_attach(bpf_program__fd(a->pass_skel->progs.xnf_pass_redirect), &at, false, false, &via);
	if (fd < 0 && fd != XNF_TC_NO_LINK) {
		xnf_error("cannot attach the pass-to-stack program at %s's ingress: %s", tap, strerror(-fd));
		return -1;
	}
	a->pass_links[port] = fd; /* a clsact filter needs no closing: it goes with the TAP */
	return 0;
}

int xnf_pass_tap_open(struct xnf_afxdp *a, __u32 port)
{
	char name[IFNAMSIZ];
	int fd = open_tap(a, port, name, sizeof(name));

	if (fd < 0)
		return -1;
	a->pass_fds[port] = fd;
	return hand_on_into_port(a, port, name);
}

void xnf_pass_tap_close_all(struct xnf_afxdp *a)
{
	for (__u32 p = 0; p < XNF_MAX_PORTS; p++) {
		if (a->pass_links[p] >= 0)
			close(a->pass_links[p]);
		if (a->pass_fds[p] >= 0)
			close(a->pass_fds[p]);
		a->pass_fds[p] = a->pass_links[p] = -1;
	}
	pass_redirect_bpf__destroy(a->pass_skel);
	a->pass_skel = NULL;
}
