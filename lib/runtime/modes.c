// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Every mode the research measures, and what each one sets up: the one place a mode is declared. */
#include <stdio.h>
#include <string.h>

#include <xnf/runtime/kernel.h>
#include <xnf/runtime/log.h>

#include "instance.h"

#define SOCKETS XNF_NEEDS(XNF_KF_AFXDP)
#define BUSY_POLL XNF_NEEDS(XNF_KF_BUSY_POLL)

const struct mode_info xnf_modes[] = {
	{ "xdp", true, false, XNF_DATAPATH_KERNEL, false, XNF_WAIT_BUSY,
	  "the NF runs in the kernel, native (driver) XDP", XNF_AT_XDP, 0 },
	{ "xdp-generic", true, true, XNF_DATAPATH_KERNEL, false, XNF_WAIT_BUSY,
	  "the NF runs in the kernel, generic (skb) XDP", XNF_AT_XDP, 0 },
	{ "afxdp", true, false, XNF_DATAPATH_USER, true, XNF_WAIT_BUSY,
	  "user space: workers spin on the rings, the driver runs from softirq", XNF_AT_XDP, SOCKETS },
	{ "afxdp-sysc", true, false, XNF_DATAPATH_USER, true, XNF_WAIT_SYSCALL,
	  "user space: preferred busy poll, the driver runs in the workers' syscalls", XNF_AT_XDP, SOCKETS | BUSY_POLL },
	{ "afxdp-poll", true, false, XNF_DATAPATH_USER, true, XNF_WAIT_POLL,
	  "user space: workers sleep in poll() until packets arrive", XNF_AT_XDP, SOCKETS },
	{ "xdp-sk", true, false, XNF_DATAPATH_KERNEL, true, XNF_WAIT_BUSY,
	  "the NF runs in XDP while AF_XDP sockets are open", XNF_AT_XDP, SOCKETS },
	{ "xdp-sk-sysc", true, false, XNF_DATAPATH_KERNEL, true, XNF_WAIT_SYSCALL,
	  "the NF runs in XDP; AF_XDP sockets in preferred busy-poll mode", XNF_AT_XDP, SOCKETS | BUSY_POLL },
	{ "hybrid", true, false, XNF_DATAPATH_HYBRID, true, XNF_WAIT_BUSY,
	  "the NF runs in XDP: drops and passes stay in the kernel, AF_XDP workers forward", XNF_AT_XDP, SOCKETS },
	{ "tc", true, false, XNF_DATAPATH_KERNEL, false, XNF_WAIT_BUSY,
	  "the NF runs in the kernel at tc ingress (TCX), on skbs: GSO segments stay whole", XNF_AT_TC, 0 },
};

const size_t xnf_nmodes = sizeof(xnf_modes) / sizeof(xnf_modes[0]);

/* "a, b, c": the modes pred holds for, in the table's order, for messages that name them. */
static const char *names_where(char *out, size_t len, bool (*pred)(const struct mode_info *))
{
	size_t used = 0;

	out[0] = '\0';
	for (size_t i = 0; i < xnf_nmodes; i++) {
		if (pred(&xnf_modes[i]) && used < len)
			used += (size_t)snprintf(out + used, len - used, "%s%s", used ? ", " : "", xnf_modes[i].name);
	}
	return out;
}

static bool runs_in_user_space(const struct mode_info *m)
{
	return m->datapath == XNF_DATAPATH_USER;
}

static bool has_sockets(const struct mode_info *m)
{
	return m->sockets;
}

bool xnf_mode_workers_send(const struct mode_info *m)
{
	return m->sockets && (m->datapath == XNF_DATAPATH_USER || m->datapath == XNF_DATAPATH_HYBRID);
}

/* Where --state can keep the NF: the kernel's own hooks (native XDP, tc); workers whose tables the kernel build of
 * the same NF carries while they restart (state_handover.c); hybrid, whose NF and tables are in XDP already and
 * whose program sends what the workers would while they are gone. */
bool xnf_mode_keeps_state(const struct mode_info *m)
{
	if (m->generic)
		return false;
	return (m->datapath == XNF_DATAPATH_KERNEL && !m->sockets) ||
	       (m->sockets && (m->datapath == XNF_DATAPATH_USER || m->datapath == XNF_DATAPATH_HYBRID));
}

const char *xnf_state_modes(void)
{
	static char names[256];

	return names_where(names, sizeof(names), xnf_mode_keeps_state);
}

const char *xnf_user_space_modes(void)
{
	static char names[256];

	return names_where(names, sizeof(names), runs_in_user_space);
}

const char *xnf_socket_modes(void)
{
	static char names[256];

	return names_where(names, sizeof(names), has_sockets);
}

const char *xnf_sending_modes(void)
{
	static char names[256];

	return names_where(names, sizeof(names), xnf_mode_workers_send);
}

int xnf_mode_missing_facility(const struct mode_info *mode)
{
	if (!xnf_kernel_has(XNF_KF_BPF))
		return XNF_KF_BPF;
	if (mode->hook == XNF_AT_TC && !xnf_kernel_has(XNF_KF_TCX) && !xnf_kernel_has(XNF_KF_CLSACT))
		return XNF_KF_CLSACT;
	for (int f = 0; f < XNF_NFACILITIES; f++) {
		if ((mode->needs & XNF_NEEDS(f)) && !xnf_kernel_has((enum xnf_facility)f))
			return f;
	}
	return -1;
}

int xnf_mode_check_kernel(const struct mode_info *mode)
{
	int missing = xnf_mode_missing_facility(mode);
	char why[512];

	if (missing < 0)
		return 0;
	xnf_error("--mode %s cannot run here: %s; without it, %s", mode->name,
		  xnf_kernel_refusal((enum xnf_facility)missing, why, sizeof(why)),
		  xnf_facility((enum xnf_facility)missing)->without);
	return -1;
}

const struct mode_info *xnf_find_mode(const char *name)
{
	for (size_t i = 0; i < xnf_nmodes; i++) {
		if (strcmp(xnf_modes[i].name, name) == 0)
			return &xnf_modes[i];
	}
	return NULL;
}
