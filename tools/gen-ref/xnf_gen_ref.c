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
#include <getopt.h>
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
#include <xnf/runtime/log.h>
#include <xnf/rules_text.h>

#include "frame.h"
#include "gen_ref.skel.h"

#define FRAME_LEN 60           /* 64 bytes on the wire with the FCS */
#define REPEAT_PER_CALL (1u << 20)
#define MAX_THREADS 64

struct options {
	const char *iface;
	__u8 dst_mac[6];
	int have_mac;
	int cores[MAX_THREADS];
	int ncores;
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

static int parse_cores(const char *text, struct options *opt)
{
	char *copy = strdup(text), *save = NULL;

	opt->ncores = 0;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *endp;
		long core = strtol(tok, &endp, 10);

		if (*endp || core < 0 || core >= CPU_SETSIZE || opt->ncores == MAX_THREADS) {
			xnf_error("--cores %s: give core numbers separated by commas, at most %d", text, MAX_THREADS);
			free(copy);
			return -1;
		}
		opt->cores[opt->ncores++] = (int)core;
	}
	free(copy);
	if (opt->ncores == 0) {
		xnf_error("--cores %s: give at least one core", text);
		return -1;
	}
	return 0;
}

static void usage(FILE *out)
{
	fprintf(out, "usage: xnf-gen-ref --iface IF --dst-mac MAC [--cores N[,N...]] [--batch N] [--duration S]\n"
		     "  unpaced 64-byte frames by BPF_PROG_RUN live frames, nothing else; prints {\"sent\",\"seconds\"}\n");
}

static int parse_options(int argc, char **argv, struct options *opt)
{
	static const struct option longs[] = {
		{ "iface", required_argument, NULL, 'i' }, { "dst-mac", required_argument, NULL, 'm' },
		{ "cores", required_argument, NULL, 'c' }, { "batch", required_argument, NULL, 'b' },
		{ "duration", required_argument, NULL, 'd' }, { "help", no_argument, NULL, 'h' }, { 0 }
	};
	int c;

	*opt = (struct options){ .cores = { 0 }, .ncores = 1, .batch = 64, .duration_s = 3.0 };
	while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		switch (c) {
		case 'i': opt->iface = optarg; break;
		case 'm': {
			char why[128];

			if (xnf_rules_parse_mac(optarg, opt->dst_mac, why, sizeof(why))) {
				xnf_error("--dst-mac %s: %s", optarg, why);
				return -1;
			}
		}
			opt->have_mac = 1;
			break;
		case 'c':
			if (parse_cores(optarg, opt))
				return -1;
			break;
		case 'b': opt->batch = (__u32)strtoul(optarg, NULL, 10); break;
		case 'd': opt->duration_s = strtod(optarg, NULL); break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return -1;
		}
	}
	if (!opt->iface || !opt->have_mac) {
		xnf_error("--iface and --dst-mac are required");
		return -1;
	}
	if (opt->batch < 1 || opt->batch > 256) {
		xnf_error("--batch %u: the kernel takes 1 to 256 frames per round", opt->batch);
		return -1;
	}
	if (!(opt->duration_s > 0)) {
		xnf_error("--duration: give a positive number of seconds");
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
			xnf_error("BPF_PROG_RUN live frames on %s failed (%s): the kernel needs 5.18 or later, and a "
				  "veth's peer needs an XDP program or GRO", iface, strerror(threads[i].error));
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

	if (parse_options(argc, argv, &opt))
		return 2;
	ifindex = (int)if_nametoindex(opt.iface);
	if (!ifindex) {
		xnf_error("no interface '%s' here: check the name (ip link) and the namespace", opt.iface);
		return 2;
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
	for (int i = 0; i < opt.ncores; i++) {
		threads[i] = (struct sender){ .core = opt.cores[i], .prog_fd = bpf_program__fd(skel->progs.xnf_gen_ref),
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
	if (started == opt.ncores && !(err = report_failures(threads, started, opt.iface)))
		printf("{\"sent\": %llu, \"seconds\": %.6f, \"threads\": %d}\n", (unsigned long long)sent,
		       (xnf_now_ns() - start) / 1e9, started);
	if (link_fd >= 0)
		close(link_fd);
	gen_ref_bpf__destroy(skel);
	return err;
}
