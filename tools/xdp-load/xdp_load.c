// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnf-xdp-load: attaches the first XDP program of any BPF object file to
 * interfaces until SIGINT/SIGTERM, through bpf_links (nothing stays attached
 * after it ends), or through libxdp's dispatcher (--libxdp, detached when it
 * ends). For hand-written baselines measured beside our NFs, and for the other
 * program the coexistence test runs beside an NF. --redirect-to fills the
 * object's one-slot devmap `redirect_to` (bpf/hand_redirect.bpf.c).
 *
 *   xnf-xdp-load --object OBJECT.o --iface IF [--iface IF ...] [--generic] [--libxdp [--priority N]]
 *                [--redirect-to IF]
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <xdp/libxdp.h>

#include <xnf/runtime/log.h>
#include <xnf/runtime/options.h>
#include <xnf/runtime/ports.h>
#include <xnf/runtime/xdp_attach.h>

struct options {
	const char *object;
	char *names[XNF_MAX_PORTS];
	__u32 n;
	bool generic;
	bool libxdp;
	__u32 priority;
	const char *redirect_to;
};

#define REDIRECT_MAP "redirect_to"


static int take_iface(const struct xnf_option *o, const char *text, void *opts)
{
	struct options *opt = opts;

	return xnf_ports_add_name(opt->names, &opt->n, text);
}

static const struct xnf_option table[] = {
	{ .name = "object", .kind = XNF_OPT_STRING, .value = "FILE", .offset = offsetof(struct options, object),
	  .help = "the BPF object whose first XDP program is attached" },
	{ .name = "iface", .kind = XNF_OPT_CUSTOM, .value = "IF", .repeat = true, .parse = take_iface,
	  .help = "an interface to attach it to; give it again for more" },
	{ .name = "generic", .kind = XNF_OPT_FLAG, .offset = offsetof(struct options, generic),
	  .help = "skb-mode XDP instead of the driver's" },
	{ .name = "libxdp", .kind = XNF_OPT_FLAG, .offset = offsetof(struct options, libxdp),
	  .help = "attach through libxdp's multi-program dispatcher (needs bpffs: LIBXDP_BPFFS)" },
	{ .name = "priority", .kind = XNF_OPT_UINT, .value = "N", .offset = offsetof(struct options, priority),
	  .min = 0, .max = 1000, .help = "with --libxdp: the run priority, lower runs first (libxdp's default: 50)" },
	{ .name = "redirect-to", .kind = XNF_OPT_STRING, .value = "IF", .offset = offsetof(struct options, redirect_to),
	  .help = "the port the object's devmap " REDIRECT_MAP " sends to (bpf/hand_redirect.bpf.c)" },
	XNF_OPTIONS_END,
};

/* --libxdp: one program per interface in its dispatcher, until a signal; detached before returning. */
static int run_in_dispatcher(const struct options *opt, const struct xnf_port *ports, const sigset_t *mask)
{
	struct xdp_program *progs[XNF_MAX_PORTS] = { 0 };
	enum xdp_attach_mode mode = opt->generic ? XDP_MODE_SKB : XDP_MODE_NATIVE;
	int sig, rc = 0;
	__u32 n;

	for (n = 0; n < opt->n; n++) {
		char why[256];
		int err;

		progs[n] = xdp_program__open_file(opt->object, NULL, NULL);
		err = libxdp_get_error(progs[n]);
		if (!err)
			err = xdp_program__set_run_prio(progs[n], opt->priority);
		if (!err)
			err = xdp_program__attach(progs[n], ports[n].ifindex, mode, 0);
		if (err) {
			libxdp_strerror(err, why, sizeof(why));
			xnf_error("cannot attach %s to %s through libxdp: %s", opt->object, ports[n].name, why);
			if (!libxdp_get_error(progs[n]))
				xdp_program__close(progs[n]);
			rc = 1;
			break;
		}
	}
	if (!rc) {
		printf("xnf-xdp-load: %s attached through libxdp at priority %u\n", xdp_program__name(progs[0]),
		       opt->priority);
		fflush(stdout);
		sigwait(mask, &sig);
	}
	while (n-- > 0) {
		xdp_program__detach(progs[n], ports[n].ifindex, mode, 0);
		xdp_program__close(progs[n]);
	}
	return rc;
}

/* The loaded object's redirect_to devmap points at the interface named; 0 or an error said. */
static int point_redirect(struct bpf_object *obj, const char *object, const char *iface)
{
	struct bpf_map *map = bpf_object__find_map_by_name(obj, REDIRECT_MAP);
	__u32 slot = 0, ifindex = if_nametoindex(iface);

	if (!map) {
		xnf_error("%s has no devmap named %s for --redirect-to", object, REDIRECT_MAP);
		return -1;
	}
	if (!ifindex) {
		xnf_error("--redirect-to %s: no such interface", iface);
		return -1;
	}
	if (bpf_map_update_elem(bpf_map__fd(map), &slot, &ifindex, BPF_ANY)) {
		xnf_error("cannot send %s's frames to %s: %s", object, iface, strerror(errno));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct xnf_port ports[XNF_MAX_PORTS];
	int link_fds[XNF_MAX_PORTS];
	struct bpf_program *prog = NULL, *p;
	struct options opt = { .priority = XNF_LIBXDP_DEFAULT_PRIORITY };
	struct bpf_object *obj;
	sigset_t mask;
	int sig, rc;

	rc = xnf_options_parse(table, argc, argv, &opt, NULL,
			       "usage: xnf-xdp-load --object FILE --iface IF [--iface IF ...] [--generic] [--libxdp [--priority N]]\n"
			       "                    [--redirect-to IF]\n"
			       "attaches an XDP program through bpf_links until SIGINT or SIGTERM", NULL);
	if (rc)
		return rc > 0 ? 0 : 2;
	if (!opt.object) {
		xnf_error("--object is required (see --help)");
		return 2;
	}
	if (xnf_ports_resolve(opt.names, opt.n, ports))
		return 1;
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	if (opt.libxdp && opt.redirect_to) {
		xnf_error("--redirect-to is for an object attached by itself, not through --libxdp");
		return 2;
	}
	if (opt.libxdp)
		return run_in_dispatcher(&opt, ports, &mask);
	obj = bpf_object__open_file(opt.object, NULL);
	if (!obj) {
		xnf_error("cannot open %s: %s", opt.object, strerror(errno));
		return 1;
	}
	bpf_object__for_each_program(p, obj) {
		if (!prog && bpf_program__type(p) == BPF_PROG_TYPE_XDP)
			prog = p;
	}
	if (!prog || bpf_object__load(obj)) {
		xnf_error("%s has no XDP program that loads", opt.object);
		bpf_object__close(obj);
		return 1;
	}
	if (opt.redirect_to && point_redirect(obj, opt.object, opt.redirect_to)) {
		bpf_object__close(obj);
		return 1;
	}
	if (xnf_xdp_attach_ports(bpf_program__fd(prog), ports, opt.n, opt.generic, link_fds)) {
		bpf_object__close(obj);
		return 1;
	}
	printf("xnf-xdp-load: %s attached\n", bpf_program__name(prog));
	fflush(stdout);
	sigwait(&mask, &sig);
	xnf_xdp_detach_ports(link_fds, opt.n);
	bpf_object__close(obj);
	return 0;
}
