// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A port's facts and the problems they make for how an instance uses it
 * (port_checks.h). The veth facts behind each problem are in docs/containers.md.
 */
#include <xnf/runtime/port_checks.h>
#include <xnf/runtime/kernel.h>

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xnf/runtime/ethtool.h>
#include <xnf/runtime/json.h>
#include <xnf/runtime/xdp_instance.h>

const char *const xnf_problem_level_names[] = { "note", "warning", "error" };

/* ------------------------------------------------------------------ facts */

static void read_peer_offloads(struct xnf_peer *peer)
{
	struct xnf_features *features;
	struct xnf_link now;

	peer->features_known = false;
	if (!peer->reachable || xnf_link_get(peer->link.ifindex, peer->nsid, &now))
		return;
	peer->link = now;
	features = xnf_features_read(peer->sock, peer->link.name);
	if (!features)
		return;
	peer->gro = xnf_feature_active(features, XNF_FEATURE_GRO);
	peer->tx_csum = xnf_features_any_active(features, xnf_tx_checksum_features);
	peer->features_known = true;
	xnf_features_free(features);
}

/* The peer's link as its own namespace sees it: the socket there answers for that namespace. */
static int link_in_peer_namespace(struct xnf_peer *peer, int ifindex)
{
	struct ifreq req = { .ifr_ifindex = ifindex };
	__u32 rx;

	if (ioctl(peer->sock, SIOCGIFNAME, &req))
		return -errno;
	snprintf(peer->link.name, sizeof(peer->link.name), "%s", req.ifr_name);
	peer->link.ifindex = ifindex;
	if (xnf_channels(peer->sock, peer->link.name, &rx, &peer->tx_queues))
		peer->tx_queues = 0;
	return 0;
}

static void inspect_peer(const struct xnf_port_facts *f, struct xnf_peer *peer)
{
	int nsid = f->link.peer_nsid;
	struct stat st;

	memset(peer, 0, sizeof(*peer));
	peer->ns_fd = peer->sock = -1;
	peer->nsid = nsid;
	peer->exists = strcmp(f->link.kind, "veth") == 0 && f->link.peer_ifindex > 0;
	if (!peer->exists)
		return;
	/* What rtnetlink tells from here, reachable or not: enough for messages and the MTU. */
	xnf_link_get(f->link.peer_ifindex, nsid, &peer->link);
	if (nsid == XNF_NSID_SAME) {
		peer->sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (peer->sock < 0 || xnf_netns_cookie_here(&peer->cookie) || stat("/proc/thread-self/ns/net", &st))
			return;
		peer->ns_inode = st.st_ino;
	} else {
		peer->ns_fd = xnf_netns_open(nsid, peer->enter, sizeof(peer->enter));
		if (peer->ns_fd < 0)
			return;
		peer->sock = xnf_netns_socket(peer->ns_fd, &peer->cookie);
		if (peer->sock < 0 || fstat(peer->ns_fd, &st))
			return;
		peer->ns_inode = st.st_ino;
	}
	if (link_in_peer_namespace(peer, f->link.peer_ifindex) == 0) {
		peer->reachable = true;
		read_peer_offloads(peer);
	}
}

void xnf_port_reread(struct xnf_port_facts *f)
{
	__u64 features;

	read_peer_offloads(&f->peer);
	f->xdp_features_known = xnf_netdev_xdp_features(f->port.ifindex, &features) == 0;
	f->xdp_features = f->xdp_features_known ? features : 0;
}

int xnf_port_inspect(const struct xnf_port *port, struct xnf_port_facts *f)
{
	int sock, err;
	__u32 tx;

	memset(f, 0, sizeof(*f));
	f->port = *port;
	err = xnf_link_get(port->ifindex, XNF_NSID_SAME, &f->link);
	if (err)
		return err;
	sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (sock >= 0) {
		xnf_driver(sock, port->name, f->driver, sizeof(f->driver));
		if (xnf_channels(sock, port->name, &f->rx_queues, &tx))
			f->rx_queues = f->link.rx_queues;
		close(sock);
	}
	inspect_peer(f, &f->peer);
	xnf_port_reread(f);
	return 0;
}

void xnf_port_release(struct xnf_port_facts *f)
{
	if (f->peer.sock >= 0)
		close(f->peer.sock);
	if (f->peer.ns_fd >= 0)
		close(f->peer.ns_fd);
	f->peer.sock = f->peer.ns_fd = -1;
}

bool xnf_port_may_bring_unfinished_checksums(const struct xnf_port_facts *f)
{
	if (f->link.hardware)
		return false;
	return !f->peer.features_known || f->peer.tx_csum;
}

bool xnf_port_brings_jumbo_frames(const struct xnf_port_facts *f)
{
	if (f->peer.exists)
		return f->peer.link.mtu > XNF_VETH_XDP_MAX_MTU;
	return f->link.mtu > XNF_ONE_BUFFER_MTU;
}

/* ------------------------------------------------------------------ problems */

__attribute__((format(printf, 2, 3))) static void text(char *out, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out, 256, fmt, ap);
	va_end(ap);
}

static struct xnf_port_problem *add(struct xnf_port_facts *f, enum xnf_problem_level level, const char *code)
{
	struct xnf_port_problem *p;

	if (f->nproblems == XNF_PORT_MAX_PROBLEMS)
		return &f->problems[XNF_PORT_MAX_PROBLEMS - 1]; /* never happens: fewer checks than slots */
	p = &f->problems[f->nproblems++];
	memset(p, 0, sizeof(*p));
	p->level = level;
	p->code = code;
	return p;
}

/* "ip netns exec NS CMD" for the peer, or CMD where it shares the port's namespace. */
static void peer_command(char *out, const struct xnf_peer *peer, const char *cmd)
{
	text(out, "%s%s%s", peer->enter, peer->enter[0] ? " " : "", cmd);
}

static void judge_peer_xdp_frames(struct xnf_port_facts *f, const struct xnf_port_use *use)
{
	struct xnf_peer *peer = &f->peer;
	struct xnf_port_problem *p;
	char cmd[128];

	if (!peer->exists || !f->xdp_features_known || (f->xdp_features & XNF_XDP_ACT_NDO_XMIT))
		return;
	if (!use->kernel_sends && !use->workers_send)
		return;
	/* Where workers send, the transmit path says so itself when it starts and whenever a port changes. */
	p = add(f, use->kernel_sends ? XNF_LEVEL_ERROR : XNF_LEVEL_NOTE, "peer-takes-no-xdp-frames");
	if (peer->reachable)
		text(p->what, "%s takes no XDP frames: its peer %s has neither an XDP program nor GRO", f->port.name,
		     peer->link.name);
	else   /* what the port's XDP features say; the peer itself cannot be looked at */
		text(p->what, "%s takes no XDP frames, by its XDP features: its peer (interface %d of namespace id %d, "
		     "which cannot be reached) takes none", f->port.name, f->link.peer_ifindex, f->link.peer_nsid);
	text(p->why, use->kernel_sends ? "the kernel drops every frame the NF sends out of it (tx, redirect)"
				       : "the workers send to it on the xsk ring, a fraction of the live path's rate");
	snprintf(cmd, sizeof(cmd), "ethtool -K %s gro on", peer->link.name);
	if (peer->reachable)
		peer_command(p->fix, peer, cmd);
}

static void judge_peer_checksums(struct xnf_port_facts *f, const struct xnf_port_use *use)
{
	struct xnf_peer *peer = &f->peer;
	struct xnf_port_problem *p;
	char cmd[128];

	if (!peer->exists)
		return;
	if (!peer->reachable) {
		if (use->skb_hook)
			return; /* at tc nothing of the peer's matters */
		p = add(f, XNF_LEVEL_WARNING, "peer-unreachable");
		text(p->what, "%s's peer (interface %d of namespace id %d) cannot be reached: no named namespace and "
		     "no process holds its namespace", f->port.name, f->link.peer_ifindex, f->link.peer_nsid);
		text(p->why, "its GRO and checksum offload can be neither checked nor fixed; xnf finishes "
		     "unfinished checksums of every segment from it");
		return;
	}
	if (!peer->features_known || !peer->tx_csum || use->skb_hook) /* an skb keeps its checksum state */
		return;
	p = add(f, XNF_LEVEL_NOTE, "peer-unfinished-checksums");
	text(p->what, "the stack behind %s leaves TCP/UDP checksums unfinished (checksum offload on %s)",
	     f->port.name, peer->link.name);
	text(p->why, "xnf finishes them in XDP before the NF: one more pass over each such segment");
	snprintf(cmd, sizeof(cmd), "ethtool -K %s tx off", peer->link.name);
	peer_command(p->fix, peer, cmd);
}

static void judge_native_limits(struct xnf_port_facts *f, const struct xnf_port_use *use)
{
	struct xnf_peer *peer = &f->peer;
	struct xnf_port_problem *p;
	char cmd[128];

	if (!use->native_xdp)
		return;
	if (f->link.hardware && f->xdp_features_known && !(f->xdp_features & XNF_XDP_ACT_BASIC)) {
		p = add(f, XNF_LEVEL_ERROR, "no-native-xdp");
		text(p->what, "%s's driver (%s) has no native XDP", f->port.name, f->driver);
		text(p->why, "the program cannot attach in driver mode");
		text(p->fix, "run it in skb mode: --mode xdp-generic");
	}
	if (peer->reachable && peer->tx_queues > f->rx_queues) {
		p = add(f, XNF_LEVEL_ERROR, "queues-fewer-than-peer");
		text(p->what, "%s has %u rx queue(s) and its peer %s sends on %u", f->port.name, f->rx_queues,
		     peer->link.name, peer->tx_queues);
		text(p->why, "XDP on a veth needs at least as many rx queues as its peer has tx queues");
		snprintf(cmd, sizeof(cmd), "ethtool -L %s tx %u", peer->link.name, f->rx_queues);
		peer_command(p->fix, peer, cmd);
	}
}

static void judge_sockets(struct xnf_port_facts *f, const struct xnf_port_use *use)
{
	struct xnf_port_problem *p;

	if (use->queues && f->rx_queues > use->queues) {
		p = add(f, XNF_LEVEL_WARNING, "queues-not-served");
		text(p->what, "%s has %u rx queues and sockets serve %u", f->port.name, f->rx_queues, use->queues);
		text(p->why, "frames the kernel puts on the other queues find no socket: dropped, counted as "
		     "redirect_error");
		text(p->fix, "--queues %u (or ethtool -L %s rx %u)", f->rx_queues, f->port.name, use->queues);
	}
	if (use->queues && f->link.hardware && f->xdp_features_known &&
	    !(f->xdp_features & XNF_XDP_ACT_XSK_ZEROCOPY)) {
		p = add(f, XNF_LEVEL_NOTE, "no-zero-copy");
		text(p->what, "%s's driver (%s) has no AF_XDP zero-copy", f->port.name, f->driver);
		text(p->why, "the sockets run in copy mode: the kernel copies each frame into the UMEM");
	}
	if (use->live_max_len && f->link.mtu + 18 > use->live_max_len) {
		p = add(f, XNF_LEVEL_NOTE, "frames-longer-than-live");
		text(p->what, "%s's MTU (%u) allows frames longer than a live frame holds (%u bytes)", f->port.name,
		     f->link.mtu, use->live_max_len);
		text(p->why, "the workers send those on the xsk ring, counted as xsk_fallback");
	}
}

static void judge_state(struct xnf_port_facts *f)
{
	struct xnf_peer *peer = &f->peer;
	struct xnf_port_problem *p;
	char cmd[128];

	if (!(f->link.flags & IFF_UP)) {
		p = add(f, XNF_LEVEL_WARNING, "port-down");
		text(p->what, "%s is down", f->port.name);
		text(p->why, "nothing arrives on it and nothing leaves");
		text(p->fix, "ip link set %s up", f->port.name);
	}
	if (peer->reachable && !(peer->link.flags & IFF_UP)) {
		p = add(f, XNF_LEVEL_WARNING, "peer-down");
		text(p->what, "%s's peer %s is down", f->port.name, peer->link.name);
		text(p->why, "nothing arrives from it and what is sent to it is lost");
		snprintf(cmd, sizeof(cmd), "ip link set %s up", peer->link.name);
		peer_command(p->fix, peer, cmd);
	}
}

/* Another party's clsact filters at the port's ingress: the kernel runs every TCX program before them, so xnf's
 * runs ahead of them whatever their priority (said, with what puts xnf behind them). */
static void judge_clsact_filters(struct xnf_port_facts *f)
{
	struct xnf_tc_filter filters[2];
	struct xnf_port_problem *p;
	__u32 count = 0;

	if (xnf_clsact_filters(f->link.ifindex, false, filters, 2, &count) || !count)
		return;
	for (__u32 i = 0; i < count && f->nproblems < XNF_PORT_MAX_PROBLEMS; i++) {
		if (filters[i].pref == XNF_TC_PRIORITY)
			continue;   /* xnf's own (--attach clsact) */
		p = add(f, XNF_LEVEL_NOTE, "clsact-filter-behind");
		text(p->what, "%s has a clsact ingress filter at pref %u (%s%s%s)", f->port.name, filters[i].pref,
		     filters[i].kind, filters[i].name[0] ? " " : "", filters[i].name);
		text(p->why, "the kernel runs TCX programs before any clsact filter: at TCX xnf runs ahead of it, and a frame "
		     "xnf drops or redirects never reaches it");
		text(p->fix, "--attach clsact puts xnf in the clsact chain at pref %u, behind filters of a lower pref",
		     XNF_TC_PRIORITY);
	}
}

/* At tc the port needs only to be a device: said once, so that no one goes looking for XDP's conditions. */
static void judge_skb_hook(struct xnf_port_facts *f, const struct xnf_port_use *use)
{
	struct xnf_port_problem *p;

	if (!use->skb_hook)
		return;
	p = add(f, XNF_LEVEL_NOTE, "tc-ingress");
	text(p->what, "%s takes the NF at its tc ingress (%s)", f->port.name, xnf_kernel_has(XNF_KF_TCX) ?
	     "a TCX link" : "a clsact qdisc filter: this kernel refuses TCX");
	text(p->why, "nothing of a veth peer's matters there (its GRO, offloads, MTU and queues are left as they are) "
	     "and frames keep their skb: GSO segments whole, checksum state kept");
	judge_clsact_filters(f);
}

void xnf_port_judge(struct xnf_port_facts *f, const struct xnf_port_use *use)
{
	f->nproblems = 0;
	judge_skb_hook(f, use);
	judge_state(f);
	judge_peer_xdp_frames(f, use);
	judge_native_limits(f, use);
	judge_sockets(f, use);
	judge_peer_checksums(f, use);
}

int xnf_port_worst(const struct xnf_port_facts *f)
{
	int worst = -1;

	for (__u32 i = 0; i < f->nproblems; i++) {
		if ((int)f->problems[i].level > worst)
			worst = (int)f->problems[i].level;
	}
	return worst;
}

/* ------------------------------------------------------------------ output */

void xnf_port_problem_print(FILE *out, const char *prefix, const struct xnf_port_problem *p)
{
	fprintf(out, "%s%s: %s: %s", prefix, xnf_problem_level_names[p->level], p->what, p->why);
	if (p->fix[0])
		fprintf(out, "; fix: %s", p->fix);
	fputc('\n', out);
}

static void json_bool(FILE *out, const char *name, bool value)
{
	fprintf(out, ", \"%s\": %s", name, value ? "true" : "false");
}

static void peer_json(FILE *out, const struct xnf_peer *peer)
{
	fprintf(out, "{\"iface\": ");
	xnf_json_string(out, peer->link.name);
	fprintf(out, ", \"ifindex\": %d, \"mtu\": %u", peer->link.ifindex, peer->link.mtu);
	json_bool(out, "reachable", peer->reachable);
	fprintf(out, ", \"enter\": ");
	xnf_json_string(out, peer->enter);
	if (peer->features_known) {
		json_bool(out, "gro", peer->gro);
		json_bool(out, "tx_checksum_offload", peer->tx_csum);
		json_bool(out, "xdp_program", peer->link.xdp_attached);
		fprintf(out, ", \"tx_queues\": %u", peer->tx_queues);
	}
	fprintf(out, "}");
}

void xnf_port_facts_json(FILE *out, const struct xnf_port_facts *f)
{
	fprintf(out, "{\"iface\": ");
	xnf_json_string(out, f->port.name);
	fprintf(out, ", \"kind\": ");
	xnf_json_string(out, f->link.kind[0] ? f->link.kind : (f->link.hardware ? "hardware" : "other"));
	fprintf(out, ", \"driver\": ");
	xnf_json_string(out, f->driver);
	fprintf(out, ", \"mtu\": %u, \"rx_queues\": %u", f->link.mtu, f->rx_queues);
	json_bool(out, "up", f->link.flags & IFF_UP);
	if (f->xdp_features_known) {
		json_bool(out, "takes_xdp_frames", f->xdp_features & XNF_XDP_ACT_NDO_XMIT);
		json_bool(out, "native_xdp", f->xdp_features & XNF_XDP_ACT_BASIC);
		json_bool(out, "zero_copy", f->xdp_features & XNF_XDP_ACT_XSK_ZEROCOPY);
	}
	json_bool(out, "unfinished_checksums", xnf_port_may_bring_unfinished_checksums(f));
	json_bool(out, "jumbo_frames", xnf_port_brings_jumbo_frames(f));
	fprintf(out, ", \"peer\": ");
	if (f->peer.exists)
		peer_json(out, &f->peer);
	else
		fprintf(out, "null");
	fprintf(out, ", \"problems\": [");
	for (__u32 i = 0; i < f->nproblems; i++) {
		const struct xnf_port_problem *p = &f->problems[i];

		fprintf(out, "%s{\"level\": \"%s\", \"code\": \"%s\", \"what\": ", i ? ", " : "",
			xnf_problem_level_names[p->level], p->code);
		xnf_json_string(out, p->what);
		fprintf(out, ", \"why\": ");
		xnf_json_string(out, p->why);
		fprintf(out, ", \"fix\": ");
		xnf_json_string(out, p->fix);
		fprintf(out, "}");
	}
	fprintf(out, "]}");
}
