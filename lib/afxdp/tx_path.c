// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Which transmit path the workers use (--tx-path), per port: the checks made
 * before anything is set up, the choice at start, and following the ports
 * while the instance runs (a veth takes frames from XDP only while its peer
 * has an XDP program or GRO).
 */
#include "afxdp_internal.h"

#include <net/if.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <xnf/runtime/kernel.h>
#include <xnf/runtime/log.h>
#include <xnf/runtime/modes.h>
#include <xnf/runtime/link_facts.h>

const char *const xnf_tx_path_names[] = {
	[XNF_TX_AUTO] = "auto", [XNF_TX_XSK] = "xsk", [XNF_TX_LIVE] = "live", NULL,
};

const char *xnf_tx_path_name(enum xnf_tx_path path)
{
	return path <= XNF_TX_LIVE ? xnf_tx_path_names[path] : "?";
}

int xnf_tx_path_parse(const char *name, enum xnf_tx_path *out)
{
	for (size_t i = 0; xnf_tx_path_names[i]; i++) {
		if (strcmp(name, xnf_tx_path_names[i]) == 0) {
			*out = (enum xnf_tx_path)i;
			return 0;
		}
	}
	return -1;
}

int xnf_afxdp_port_mtu(const char *ifname)
{
	struct ifreq req = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), mtu = -1;

	snprintf(req.ifr_name, sizeof(req.ifr_name), "%s", ifname);
	if (fd >= 0 && ioctl(fd, SIOCGIFMTU, &req) == 0)
		mtu = req.ifr_mtu;
	if (fd >= 0)
		close(fd);
	return mtu;
}


/* The longest frame the live path sends: a live frame's room, and what the program can prove in bounds. */
__u32 xnf_live_max_len(const struct xnf_afxdp_config *cfg)
{
	__u32 room = cfg->frame_size - XNF_LIVE_MAX_OFFSET;

	return room < XNF_LIVE_MAX_FRAME ? room : XNF_LIVE_MAX_FRAME;
}

/* A port whose frames a live frame cannot hold; NULL if none. *mtu is its MTU. */
static const struct xnf_port *port_too_large_for_live(const struct xnf_afxdp_config *cfg,
						      const struct xnf_port *ports, __u32 nports, int *mtu)
{
	for (__u32 p = 0; p < nports; p++) {
		*mtu = xnf_afxdp_port_mtu(ports[p].name);
		if (*mtu > 0 && (__u32)*mtu + XNF_L2_OVERHEAD > xnf_live_max_len(cfg))
			return &ports[p];
	}
	return NULL;
}

/* Whether a port takes frames redirected from XDP now; yes where the kernel cannot say (before 6.3). */
static bool takes_xdp_frames(const struct xnf_port *port)
{
	__u64 features;

	return xnf_netdev_xdp_features(port->ifindex, &features) || (features & XNF_XDP_ACT_NDO_XMIT);
}

static __u32 ports_taking_xdp_frames(const struct xnf_port *ports, __u32 nports)
{
	__u32 mask = 0;

	for (__u32 p = 0; p < nports; p++)
		mask |= (__u32)takes_xdp_frames(&ports[p]) << p;
	return mask;
}

static const char *const refusing_port_advice =
	"does not take frames sent from XDP now (a veth does while its peer has an XDP program or GRO: "
	"ethtool -K PEER gro on)";

int xnf_tx_path_check(const struct xnf_afxdp_config *cfg, const struct xnf_port *ports, __u32 nports)
{
	const struct xnf_port *big;
	int mtu;

	if (cfg->live_batch < 1 || cfg->live_batch > XNF_LIVE_MAX_BATCH) {
		xnf_error("--live-batch %u is out of range 1-%d", cfg->live_batch, XNF_LIVE_MAX_BATCH);
		return -1;
	}
	if (cfg->tx_path != XNF_TX_LIVE)
		return 0;
	if (cfg->nf_in_kernel && !cfg->forward_only) {
		xnf_error("--tx-path live: in the xdp-sk modes the NF runs in XDP and the workers send nothing; "
			  "use it where they send (%s)", xnf_sending_modes());
		return -1;
	}
	if (cfg->zerocopy) {
		xnf_error("--tx-path live sends what copy-mode sockets receive; zero-copy sockets send fastest on "
			  "their own ring: drop --zerocopy, or use --tx-path xsk (or auto)");
		return -1;
	}
	big = port_too_large_for_live(cfg, ports, nports, &mtu);
	if (big) {
		xnf_error("--tx-path live: %s has an MTU of %d, so frames of up to %d bytes, and the live path sends at "
			  "most %u (a live frame is one page%s): lower the MTU, or use --tx-path xsk", big->name, mtu,
			  mtu + XNF_L2_OVERHEAD, xnf_live_max_len(cfg),
			  cfg->frame_size == 2048 ? "; with --frame-size 2048, 512 bytes less than the UMEM frame" : "");
		return -1;
	}
	for (__u32 p = 0; p < nports; p++) {
		if (!takes_xdp_frames(&ports[p])) {
			xnf_error("--tx-path live: %s %s: give it that, or use --tx-path auto (which sends on the xsk "
				  "ring while a port refuses) or xsk", ports[p].name, refusing_port_advice);
			return -1;
		}
	}
	return 0;
}

/* Whether the workers send through live frames: asked for, or auto on copy-mode sockets whose ports' frames a
 * live frame holds. */
static bool sends_live(const struct xnf_afxdp *a)
{
	const struct xnf_afxdp_config *cfg = &a->cfg;
	int mtu;

	if (cfg->tx_path == XNF_TX_LIVE)
		return true; /* checked by xnf_afxdp_check_config */
	if (cfg->tx_path == XNF_TX_XSK || (cfg->nf_in_kernel && !cfg->forward_only) || a->zerocopy)
		return false;
	return !port_too_large_for_live(cfg, a->ports, a->nports, &mtu);
}

/* Whether the NF runs in the workers, where it can pass frames to the stack. */
static bool workers_pass(const struct xnf_afxdp *a)
{
	return !a->cfg.nf_in_kernel;
}

bool xnf_tx_path_wants_live(const struct xnf_afxdp *a)
{
	return xnf_kernel_has(XNF_KF_LIVE_FRAMES) && (sends_live(a) || (workers_pass(a) && !a->zerocopy));
}

/* Copy mode on veth: the live path; on a kernel or port that cannot, auto falls back to the xsk ring. Opened for
 * the frames the workers pass too, whichever path sends. */
int xnf_tx_path_choose(struct xnf_afxdp *a, bool live)
{
	__u64 frames[XNF_MAX_WORKERS];
	char why[512];

	a->tx_path = XNF_TX_XSK;
	if (!live && sends_live(a))
		xnf_info("--tx-path auto: the workers send on the xsk ring, slower in copy mode: %s",
			 xnf_kernel_refusal(XNF_KF_LIVE_FRAMES, why, sizeof(why)));
	if (!live)
		return 0;
	for (__u32 i = 0; i < a->nworkers; i++)
		frames[i] = a->workers[i].nframes;
	a->live = xnf_live_tx_open(a->ports, a->nports, a->nworkers, frames, a->cfg.frame_size, why,
				   sizeof(why));
	if (a->live && sends_live(a)) {
		a->tx_path = XNF_TX_LIVE;
		atomic_store(&a->live_ports, (1u << a->nports) - 1);
		xnf_afxdp_refresh(a);
		return 0;
	}
	if (a->live)
		return 0; /* for the frames the NF passes; the rest takes the xsk ring */
	if (a->cfg.tx_path == XNF_TX_LIVE) {
		xnf_error("--tx-path live: %s: use --tx-path xsk", why);
		return -1;
	}
	if (sends_live(a))
		xnf_warn("--tx-path auto: sending on the xsk ring (slower in copy mode), because %s", why);
	return 0;
}

enum xnf_tx_path xnf_afxdp_tx_path(const struct xnf_afxdp *a, __u32 port)
{
	if (a->tx_path == XNF_TX_LIVE && !(atomic_load((atomic_uint *)&a->live_ports) & (1u << port)))
		return XNF_TX_XSK;
	return a->tx_path;
}

/* Says which ports changed path, and why. */
static void report_port_paths(const struct xnf_afxdp *a, __u32 before, __u32 now)
{
	for (__u32 p = 0; p < a->nports; p++) {
		__u32 bit = 1u << p;

		if ((before ^ now) & bit && now & bit)
			xnf_info("%s takes frames from XDP: sending to it through live frames", a->ports[p].name);
		else if ((before ^ now) & bit)
			xnf_warn("%s %s: sending to it on the xsk ring (slower in copy mode) until it does",
				 a->ports[p].name, refusing_port_advice);
	}
}

void xnf_afxdp_refresh(struct xnf_afxdp *a)
{
	__u32 before, now;

	if (!a || a->tx_path != XNF_TX_LIVE || a->cfg.tx_path != XNF_TX_AUTO)
		return;
	now = ports_taking_xdp_frames(a->ports, a->nports);
	before = atomic_exchange(&a->live_ports, now);
	report_port_paths(a, before, now);
}

void xnf_afxdp_live_port_refused(struct xnf_afxdp *a, __u32 port)
{
	__u32 before;

	if (a->cfg.tx_path != XNF_TX_AUTO || port >= a->nports)
		return;
	before = atomic_fetch_and(&a->live_ports, ~(1u << port));
	report_port_paths(a, before, before & ~(1u << port));
}
