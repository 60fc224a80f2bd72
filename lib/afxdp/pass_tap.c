// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * XNF_PASS in user space: frames go back to the local stack through a TAP
 * device, one per port, with that port's MAC so the stack takes them as its
 * own. Replies leave by routing, through the real port. The device exists as
 * long as the instance's file descriptor: it goes away with the process.
 */
#include "afxdp_internal.h"

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

int xnf_pass_tap_open(struct xnf_afxdp *a, __u32 port)
{
	struct ifreq ifr = { .ifr_flags = IFF_TAP | IFF_NO_PI };
	int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);

	/* Short and unique per instance and port: IFNAMSIZ is 16. */
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "xnfp%u.%u", (unsigned)getpid() % 100000u, port);
	if (fd < 0 || ioctl(fd, TUNSETIFF, &ifr) || copy_mac_and_raise(ifr.ifr_name, a->ports[port].name)) {
		xnf_error("cannot create the pass-to-stack device %s for port %s: %s (XNF_PASS in user space "
			  "needs /dev/net/tun)", ifr.ifr_name, a->ports[port].name, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	a->pass_fds[port] = fd;
	return 0;
}

void xnf_pass_tap_close_all(struct xnf_afxdp *a)
{
	for (__u32 p = 0; p < XNF_MAX_PORTS; p++) {
		if (a->pass_fds[p] > 0)
			close(a->pass_fds[p]);
		a->pass_fds[p] = -1;
	}
}
