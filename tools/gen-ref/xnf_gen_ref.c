// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnf-gen-ref: the smallest live-frames generator, the method of the public
 * tool (xdp-trafficgen) the generator's targets were measured with, for
 * comparison with xnf-gen in the same run. One fixed 64-byte IPv4/UDP frame,
 * a program that only returns XDP_TX, 2^20 frames per BPF_PROG_RUN call, one
 * thread pinned to each core given. No pacing, no flows, no sequence numbers, no
 * timestamps: what is left is the kernel's own cost per frame. Like xnf-gen it
 * keeps its program attached to loopback so that calls skip the XDP
 * dispatcher's rebuild (the best case, not the public tool's default).
 *
 *   xnf-gen-ref --iface IF --dst-mac MAC [--cores N[,N...]] [--batch N] [--duration S]
 *
 * Prints one JSON line: {"sent": N, "seconds": S}.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <xnf/helpers.h>
#include <xnf/runtime/kernel.h>
#include <xnf/runtime/log.h>
#include <xnf/runtime/options.h>
#include <xnf/rules_text.h>

#include "frame.h"
#include "gen_ref.skel.h"

#define FRAME_LEN 60           /* 64 bytes on the wire with the FCS */
#define REPEAT_PER_CALL (1u << 20)
#define MAX_THREADS 64

struct options {
	const char *iface;
	__u8 dst_mac[6];
	struct xnf_core_list cores;
	__u32 batch;
	double duration_s;
};

/* One sending thread: its core, what it sent, why it stopped early. */
struct sender {
	pthread_t thread;
	int core;
	int prog_fd;
	int ifindex;
	const struct options *opt;
	const __u8 *frame;
	__u64 end_ns;
	__u64 sent;
	int error;    /* errno of a failed call, 0 if none */
	int pin_error;
};

static int take_mac(const struct xnf_option *o, const char *text, void *opts)
{
	char why[128];

	if (xnf_rules_parse_mac(text, ((struct options *)opts)->dst_mac, why, sizeof(why)) == 0)
		return 0;
	xnf_error("--%s takes a MAC address like 02:00:00:00:00:02, not '%s'", o->name, text);
	return -1;
}

#define OPT(field) offsetof(struct options, field)

static const struct xnf_option table[] = {
	{ .name = "iface", .kind = XNF_OPT_STRING, .value = "IF", .offset = OPT(iface), .help = "interface to send on" },
	{ .name = "dst-mac", .kind = XNF_OPT_CUSTOM, .value = "MAC", .parse = take_mac,
	  .help = "destination MAC (the device under test)" },
	{ .name = "cores", .kind = XNF_OPT_CORES, .value = "LIST", .offset = OPT(cores), .default_text = "0",
	  .help = "one pinned sender thread per core" },
	{ .name = "batch", .kind = XNF_OPT_UINT, .value = "N", .offset = OPT(batch), .min = 1, .max = 256,
	  .help = "frames per kernel round" },
	{ .name = "duration", .kind = XNF_OPT_NUMBER, .value = "S", .offset = OPT(duration_s), .min = 0.001,
	  .max = 1e7, .help = "send for S seconds" },
	XNF_OPTIONS_END,
};

static const struct options defaults = { .cores = { .cores = { 0 }, .count = 1 }, .batch = 64, .duration_s = 3.0 };

/* 0 to run, 1 after --help, -1 after an error. */
static int parse_options(int argc, char **argv, struct options *opt)
{
	bool given[sizeof(table) / sizeof(table[0])] = { 0 };
	int rc;

	*opt = defaults;
	rc = xnf_options_parse(table, argc, argv, opt, given,
			       "usage: xnf-gen-ref --iface IF --dst-mac MAC [options]\n"
			       "unpaced 64-byte frames by BPF_PROG_RUN live frames, nothing else; prints {\"sent\", "
			       "\"seconds\"}", &defaults);
	if (rc)
		return rc;
	if (!opt->iface || !given[1]) {
		xnf_error("--iface and --dst-mac are required");
		return -1;
	}
	if (opt->cores.count > MAX_THREADS) {
		xnf_error("--cores: at most %d sender threads", MAX_THREADS);
		return -1;
	}
	return 0;
}

/* xnf-gen's own template for its defaults (IPv4/UDP 198.18.0.1:9 -> 198.18.0.2:9, 64 bytes): the same bytes,
 * so only what the programs do with them differs. */
static void build_frame(__u8 *frame, const __u8 dst_mac[6])
{
	struct frame_spec spec = { .src_mac = { 0x02, 0, 0, 0, 0, 0x01 }, .sport = 9, .dport = 9, .size = 64 };

	memcpy(spec.dst_mac, dst_mac, 6);
	inet_pton(AF_INET, "198.18.0.1", &spec.src4);
	inet_pton(AF_INET, "198.18.0.2", &spec.dst4);
	frame_build(&spec, frame);
}

static void *send_loop(void *arg)
{
	struct sender *t = arg;
	struct xdp_md ctx = { .data_end = FRAME_LEN, .ingress_ifindex = (__u32)t->ifindex };
	LIBBPF_OPTS(bpf_test_run_opts, run, .data_in = t->frame, .data_size_in = FRAME_LEN, .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx), .flags = BPF_F_TEST_XDP_LIVE_FRAMES, .batch_size = t->opt->batch);
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(t->core, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set)) {
		t->pin_error = 1;
		return NULL;
	}
	while (xnf_now_ns() < t->end_ns) {
		run.repeat = REPEAT_PER_CALL;
		if (bpf_prog_test_run_opts(t->prog_fd, &run)) {
			t->error = errno;
			break;
		}
		t->sent += REPEAT_PER_CALL;
	}
	return NULL;
}

/* Reports the first thread that failed; 0 when all ran to the end. */
static int report_failures(const struct sender *threads, int n, const char *iface)
{
	for (int i = 0; i < n; i++) {
		if (threads[i].pin_error) {
			xnf_error("cannot pin a thread to core %d: give cores this machine has (0-%ld)", threads[i].core,
				  sysconf(_SC_NPROCESSORS_ONLN) - 1);
			return 2;
		}
		if (threads[i].error) {
			xnf_error("BPF_PROG_RUN live frames on %s failed (%s): a veth's peer needs an XDP program or GRO",
				  iface, strerror(threads[i].error));
			return 1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct options opt;
	struct sender threads[MAX_THREADS] = { 0 };
	struct gen_ref_bpf *skel = NULL;
	__u8 frame[FRAME_LEN];
	int ifindex, link_fd = -1, err = 1, started = 0;
	__u64 start, sent = 0;

	err = parse_options(argc, argv, &opt);
	if (err)
		return err > 0 ? 0 : 2;
	err = 1;
	ifindex = (int)if_nametoindex(opt.iface);
	if (!ifindex) {
		xnf_error("no interface '%s' here: check the name (ip link) and the namespace", opt.iface);
		return 2;
	}
	if (!xnf_kernel_has(XNF_KF_LIVE_FRAMES)) {
		char why[512];

		xnf_error("xnf-gen-ref sends live frames only: %s", xnf_kernel_refusal(XNF_KF_LIVE_FRAMES, why, sizeof(why)));
		return 1;
	}
	skel = gen_ref_bpf__open_and_load();
	if (!skel) {
		xnf_error("cannot load the reference program (%s): run as root on a kernel with BPF", strerror(errno));
		return 1;
	}
	LIBBPF_OPTS(bpf_link_create_opts, link_opts, .flags = XDP_FLAGS_SKB_MODE);
	link_fd = bpf_link_create(bpf_program__fd(skel->progs.xnf_gen_ref), (int)if_nametoindex("lo"), BPF_XDP,
				  &link_opts);
	if (link_fd < 0)
		xnf_warn("cannot keep the program attached to lo (%s): each call waits for RCU", strerror(-link_fd));
	build_frame(frame, opt.dst_mac);

	start = xnf_now_ns();
	for (__u32 i = 0; i < opt.cores.count; i++) {
		threads[i] = (struct sender){ .core = opt.cores.cores[i],
					      .prog_fd = bpf_program__fd(skel->progs.xnf_gen_ref),
					      .ifindex = ifindex, .opt = &opt, .frame = frame,
					      .end_ns = start + (__u64)(opt.duration_s * 1e9) };
		if (pthread_create(&threads[i].thread, NULL, send_loop, &threads[i])) {
			xnf_error("cannot start a sending thread: %s", strerror(errno));
			break;
		}
		started++;
	}
	for (int i = 0; i < started; i++) {
		pthread_join(threads[i].thread, NULL);
		sent += threads[i].sent;
	}
	if ((__u32)started == opt.cores.count && !(err = report_failures(threads, started, opt.iface)))
		printf("{\"sent\": %llu, \"seconds\": %.6f, \"threads\": %d}\n", (unsigned long long)sent,
		       (xnf_now_ns() - start) / 1e9, started);
	if (link_fd >= 0)
		close(link_fd);
	gen_ref_bpf__destroy(skel);
	return err;
}
