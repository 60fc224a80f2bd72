// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The port checks in an instance's life (port_guard.h). */
#include "port_guard.h"

#include <bpf/bpf.h>
#include <string.h>

#include <xnf/runtime/json.h>
#include <xnf/runtime/log.h>
#include <xnf/runtime/settings_journal.h>

#include "instance.h"

const char *const xnf_peers_names[] = { [XNF_PEERS_FIX] = "fix", [XNF_PEERS_CHECK] = "check", NULL };

struct xnf_port_use port_use_of(const struct run_options *opt)
{
	const struct mode_info *m = opt->mode;
	const struct xnf_afxdp_config *cfg = &opt->afxdp;
	struct xnf_port_use use = { .native_xdp = !m->generic && m->hook == XNF_AT_XDP, .skb_hook = m->hook == XNF_AT_TC };

	use.kernel_sends = m->datapath == XNF_DATAPATH_KERNEL && !m->generic && !use.skb_hook;
	use.workers_send = m->sockets && m->datapath != XNF_DATAPATH_KERNEL;
	if (use.workers_send) {
		use.queues = cfg->queues;
		if (cfg->tx_path != XNF_TX_XSK && !cfg->zerocopy)
			use.live_max_len = xnf_live_max_len(cfg);
	}
	return use;
}

bool port_guard_brings_jumbo_frames(const struct port_guard *g)
{
	for (__u32 i = 0; i < g->nports; i++) {
		if (xnf_port_brings_jumbo_frames(&g->facts[i]))
			return true;
	}
	return false;
}

static bool any_unfinished(const struct port_guard *g)
{
	for (__u32 i = 0; i < g->nports; i++) {
		if (xnf_port_may_bring_unfinished_checksums(&g->facts[i]))
			return true;
	}
	return false;
}

/* Errors and warnings always; notes (what xnf handles itself) with --verbose. */
static void print_problems(const struct port_guard *g)
{
	for (__u32 i = 0; i < g->nports; i++) {
		for (__u32 j = 0; j < g->facts[i].nproblems; j++) {
			const struct xnf_port_problem *p = &g->facts[i].problems[j];

			if (p->level != XNF_LEVEL_NOTE || xnf_verbose)
				xnf_port_problem_print(stderr, "xnf: ", p);
		}
	}
}

int port_guard_start(struct port_guard *g, const struct run_options *opt, const struct xnf_port *ports,
		     __u32 nports)
{
	struct xnf_port_use use = port_use_of(opt);
	bool refuse = false;

	memset(g, 0, sizeof(*g));
	g->finish_fd = -1;
	g->use = use;
	xnf_journal_sweep(opt->afxdp.journal_dir);
	for (__u32 i = 0; i < nports; i++) {
		int err = xnf_port_inspect(&ports[i], &g->facts[i]);

		if (err) {
			xnf_error("cannot read %s's link (%s)", ports[i].name, strerror(-err));
			port_guard_stop(g);
			return -1;
		}
		g->nports = i + 1;
		/* Under --state a program kept from an earlier process may be running on the port, with the peer as that
		 * process set it: what it wrote down is put back by the next start without --state. */
		if (!opt->state_dir)
			xnf_peer_recover(&g->facts[i], opt->afxdp.journal_dir);
		/* At tc nothing of the peer's matters (its offloads, GRO, MTU): a fix has nothing to do. */
		if (opt->peers == XNF_PEERS_FIX && !use.skb_hook && xnf_peer_fix(&g->facts[i], opt->afxdp.journal_dir, &g->changes[i])) {
			port_guard_stop(g);
			return -1;
		}
		xnf_port_judge(&g->facts[i], &use);
		refuse |= xnf_port_worst(&g->facts[i]) == XNF_LEVEL_ERROR;
	}
	print_problems(g);
	if (refuse) {
		xnf_error("not started: a port above would lose frames (fix it, or let xnf fix a veth peer it can "
			  "reach with --peers fix)");
		port_guard_stop(g);
		return -1;
	}
	g->finishing = !use.skb_hook && any_unfinished(g);
	for (__u32 i = 0; i < g->nports; i++)
		g->peer_dropped_at_start[i] = g->facts[i].peer.link.tx_dropped;
	return 0;
}

__u32 port_guard_peer_ports(const struct port_guard *g)
{
	__u32 mask = 0;

	for (__u32 i = 0; i < g->nports; i++)
		mask |= g->facts[i].peer.exists && g->facts[i].peer.nsid != XNF_NSID_SAME ? 1u << i : 0;
	return mask;
}

void port_guard_json(const struct port_guard *g, FILE *out)
{
	bool first = true;

	for (__u32 i = 0; i < g->nports; i++) {
		const struct xnf_port_facts *f = &g->facts[i];
		struct xnf_link peer;

		if (!f->peer.exists || xnf_link_get(f->link.peer_ifindex, f->link.peer_nsid, &peer))
			continue;
		fprintf(out, "%s{\"iface\": ", first ? ", \"ports\": [" : ", ");
		xnf_json_string(out, f->port.name);
		fprintf(out, ", \"peer\": ");
		xnf_json_string(out, peer.name);
		fprintf(out, ", \"dropped_before_xdp\": %llu}",
			(unsigned long long)(peer.tx_dropped - g->peer_dropped_at_start[i]));
		first = false;
	}
	if (!first)
		fprintf(out, "]");
}

static void tell_program(struct port_guard *g)
{
	__u32 zero = 0, on = g->finishing;

	if (g->finish_fd >= 0 && bpf_map_update_elem(g->finish_fd, &zero, &on, BPF_ANY))
		xnf_warn("cannot tell the program whether to finish checksums");
}

static __u32 ports_to_redirect(const struct port_guard *g)
{
	__u32 mask = 0;

	for (__u32 i = 0; i < g->nports; i++)
		mask |= xnf_peer_turned_gro_on(&g->changes[i]) ? 1u << i : 0;
	return mask;
}

/* Fixed for the instance's life: only a peer whose GRO the fix turned on is sent to by redirect. */
static void tell_tx_path(const struct port_guard *g, int tx_fd)
{
	__u32 zero = 0, ports = ports_to_redirect(g);

	if (tx_fd >= 0 && bpf_map_update_elem(tx_fd, &zero, &ports, BPF_ANY))
		xnf_warn("cannot tell the program which ports take its TX as a redirect");
}

void port_guard_arm(struct port_guard *g, int finish_fd, int tx_fd)
{
	g->finish_fd = finish_fd;
	tell_program(g);
	tell_tx_path(g, tx_fd);
	if (g->finishing)
		xnf_info("finishing the TCP/UDP checksums that the stacks behind the ports leave unfinished");
}

/* A port that stops (or starts again) taking XDP frames while the kernel sends the NF's frames to it. */
static void say_xdp_frames_change(const struct port_guard *g, const struct xnf_port_facts *f, __u64 before)
{
	__u64 now = f->xdp_features & XNF_XDP_ACT_NDO_XMIT;

	if (!g->use.kernel_sends || !f->xdp_features_known || now == (before & XNF_XDP_ACT_NDO_XMIT))
		return;
	if (now)
		xnf_info("%s takes XDP frames again", f->port.name);
	else
		xnf_warn("%s no longer takes XDP frames (its peer lost its XDP program or GRO): the kernel drops what "
			 "the NF sends to it, counted as egress refused in xnf stats", f->port.name);
}

void port_guard_follow(struct port_guard *g)
{
	bool now;

	for (__u32 i = 0; i < g->nports; i++) {
		__u64 before = g->facts[i].xdp_features;

		xnf_port_reread(&g->facts[i]);
		say_xdp_frames_change(g, &g->facts[i], before);
	}
	now = any_unfinished(g);
	if (now == g->finishing)
		return;
	g->finishing = now;
	tell_program(g);
	xnf_info("%s TCP/UDP checksums that the stacks behind the ports leave unfinished: a peer's checksum "
		 "offload changed", now ? "finishing" : "no longer finishing");
}

void port_guard_leave(struct port_guard *g)
{
	for (__u32 i = 0; i < g->nports; i++)
		xnf_port_release(&g->facts[i]);
	g->nports = 0;
}

void port_guard_stop(struct port_guard *g)
{
	for (__u32 i = 0; i < g->nports; i++) {
		xnf_peer_restore(&g->facts[i], &g->changes[i]);
		xnf_port_release(&g->facts[i]);
	}
	g->nports = 0;
}
