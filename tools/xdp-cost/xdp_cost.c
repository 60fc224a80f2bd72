// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnf-xdp-cost: the time the XDP program attached to an interface takes for one
 * frame, from the kernel's own BPF_PROG_RUN timing over many repetitions (no
 * traffic, no generator, no cores shared with anything): for costs too small to
 * see through veth's run-to-run spread, such as the dispatcher's.
 * A redirect is returned, not carried out; nothing leaves the machine.
 *
 *   xnf-xdp-cost --iface IF --frame HEX [--queue N] [--repeat N]
 * prints {"ns_per_run": ..., "retval": ..., "repeat": ...}
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <xnf/runtime/log.h>
#include <xnf/runtime/options.h>

#define MAX_FRAME 1514

struct options {
	const char *iface;
	const char *frame;
	__u32 queue;
	__u32 repeat;
};

static const struct xnf_option table[] = {
	{ .name = "iface", .kind = XNF_OPT_STRING, .value = "IF", .offset = offsetof(struct options, iface),
	  .help = "the interface whose attached XDP program is timed" },
	{ .name = "frame", .kind = XNF_OPT_STRING, .value = "HEX", .offset = offsetof(struct options, frame),
	  .help = "the frame, in hexadecimal, from its Ethernet header on" },
	{ .name = "queue", .kind = XNF_OPT_UINT, .value = "N", .offset = offsetof(struct options, queue), .min = 0,
	  .max = 1023, .help = "the rx queue the frame arrives on" },
	{ .name = "repeat", .kind = XNF_OPT_UINT, .value = "N", .offset = offsetof(struct options, repeat), .min = 1,
	  .max = 1u << 30, .help = "runs the kernel times (it reports their mean)" },
	XNF_OPTIONS_END,
};

static int parse_hex(const char *text, __u8 *out, size_t max)
{
	size_t n = strlen(text) / 2;

	if (strlen(text) % 2 || n < 14 || n > max)
		return -1;
	for (size_t i = 0; i < n; i++) {
		unsigned int byte;

		if (sscanf(text + 2 * i, "%2x", &byte) != 1)
			return -1;
		out[i] = (__u8)byte;
	}
	return (int)n;
}

/* The program attached to the interface, in any XDP mode. */
static int attached_program(int ifindex)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, query);

	if (bpf_xdp_query(ifindex, 0, &query))
		return -1;
	if (!query.prog_id)
		query.prog_id = query.drv_prog_id ? query.drv_prog_id : query.skb_prog_id;
	return query.prog_id ? bpf_prog_get_fd_by_id(query.prog_id) : -1;
}

int main(int argc, char **argv)
{
	struct options opt = { .repeat = 1000000 };
	__u8 frame[MAX_FRAME];
	struct xdp_md ctx = { 0 };
	int len, ifindex, fd;
	int rc = xnf_options_parse(table, argc, argv, &opt, NULL,
				   "usage: xnf-xdp-cost --iface IF --frame HEX [--queue N] [--repeat N]\n"
				   "times the XDP program attached to IF on one frame (BPF_PROG_RUN)", NULL);

	if (rc)
		return rc > 0 ? 0 : 2;
	if (!opt.iface || !opt.frame) {
		xnf_error("--iface and --frame are required (see --help)");
		return 2;
	}
	len = parse_hex(opt.frame, frame, sizeof(frame));
	if (len < 0) {
		xnf_error("--frame takes 14 to %d bytes in hexadecimal, two digits each", MAX_FRAME);
		return 2;
	}
	ifindex = (int)if_nametoindex(opt.iface);
	fd = ifindex ? attached_program(ifindex) : -1;
	if (fd < 0) {
		xnf_error("%s: no such interface, or no XDP program attached to it", opt.iface);
		return 1;
	}
	ctx.data_end = (__u32)len;
	ctx.ingress_ifindex = (__u32)ifindex;
	ctx.rx_queue_index = opt.queue;
	LIBBPF_OPTS(bpf_test_run_opts, run, .data_in = frame, .data_size_in = (__u32)len, .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx), .repeat = opt.repeat);
	if (bpf_prog_test_run_opts(fd, &run)) {
		xnf_error("BPF_PROG_RUN refused the program: %s", strerror(errno));
		return 1;
	}
	printf("{\"ns_per_run\": %u, \"retval\": %u, \"repeat\": %u}\n", run.duration, run.retval, opt.repeat);
	close(fd);
	return 0;
}
