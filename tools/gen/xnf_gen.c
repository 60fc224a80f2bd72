// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnf-gen: a traffic generator built on BPF_PROG_RUN with live frames
 * (kernel >= 5.18): the kernel builds and transmits the frames itself, so one
 * core puts out millions of packets per second. One thread per core asked
 * for, each pinned.
 *
 *   xnf-gen --iface IF --dst-mac MAC [--size 64] [--duration S | --count N] [--cores 0,1]
 */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/udp.h>

#include <linux/if_link.h>
#include <xnf/runtime/log.h>
#include "gen.skel.h"

#define FCS_LEN 4
#define MIN_FRAME 64
#define MAX_FRAME 1518
#define MAX_THREADS 64
/* A call cannot be interrupted: this bounds how late a stop or a deadline is
 * honoured. (Without the dispatcher hold, see hold_in_dispatcher(), each call
 * would also wait for an RCU grace period and want to be much longer.) */
#define DEFAULT_CALL_MS 100
#define FIRST_CALL_REPEAT 65536u
#define DEFAULT_BATCH 64

struct gen_options {
	const char *iface;
	int ifindex;
	__u8 src_mac[ETH_ALEN], dst_mac[ETH_ALEN];
	struct in_addr src_ip, dst_ip;
	__u16 src_port, dst_port;
	unsigned int size; /* on the wire, FCS included */
	double duration_s;
	unsigned long long count;
	int cores[MAX_THREADS];
	int nthreads;
	unsigned int batch; /* frames the kernel builds and sends per round */
	unsigned int call_ms; /* target length of one BPF_PROG_RUN call */
};

struct gen_thread {
	pthread_t tid;
	int core;
	int prog_fd;
	const struct gen_options *opt;
	const __u8 *frame;
	__u32 frame_len;
	unsigned long long quota; /* frames to send, 0 for the duration */
	unsigned long long sent;
	int error;
};

static atomic_bool stop_requested;

static void on_signal(int sig)
{
	atomic_store(&stop_requested, true);
}

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

static __u16 ipv4_checksum(const struct iphdr *ip)
{
	const __u16 *w = (const __u16 *)ip;
	__u32 sum = 0;

	for (int i = 0; i < 10; i++)
		sum += w[i];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

/* Ethernet/IPv4/UDP, zero payload; UDP checksum 0 (allowed for IPv4). */
static __u32 build_frame(const struct gen_options *opt, __u8 *buf)
{
	__u32 len = opt->size - FCS_LEN;
	struct ethhdr *eth = (struct ethhdr *)buf;
	struct iphdr *ip = (struct iphdr *)(eth + 1);
	struct udphdr *udp = (struct udphdr *)(ip + 1);

	memset(buf, 0, len);
	memcpy(eth->h_dest, opt->dst_mac, ETH_ALEN);
	memcpy(eth->h_source, opt->src_mac, ETH_ALEN);
	eth->h_proto = htons(ETH_P_IP);
	ip->version = 4;
	ip->ihl = 5;
	ip->ttl = 64;
	ip->protocol = IPPROTO_UDP;
	ip->tot_len = htons((__u16)(len - sizeof(*eth)));
	ip->saddr = opt->src_ip.s_addr;
	ip->daddr = opt->dst_ip.s_addr;
	ip->check = ipv4_checksum(ip);
	udp->source = htons(opt->src_port);
	udp->dest = htons(opt->dst_port);
	udp->len = htons((__u16)(len - sizeof(*eth) - sizeof(*ip)));
	return len;
}

static int pin_to_core(int core)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(core, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *send_loop(void *arg)
{
	struct gen_thread *t = arg;
	struct xdp_md ctx = { .data_end = t->frame_len, .ingress_ifindex = (__u32)t->opt->ifindex };
	__u64 deadline = now_ns() + (__u64)(t->opt->duration_s * 1e9);
	__u32 repeat = FIRST_CALL_REPEAT;

	if (pin_to_core(t->core)) {
		t->error = EINVAL;
		return NULL;
	}
	while (!atomic_load(&stop_requested)) {
		LIBBPF_OPTS(bpf_test_run_opts, opts,
			.data_in = t->frame, .data_size_in = t->frame_len,
			.ctx_in = &ctx, .ctx_size_in = sizeof(ctx),
			.flags = BPF_F_TEST_XDP_LIVE_FRAMES, .batch_size = t->opt->batch);
		__u64 start = now_ns(), took;

		if (t->quota) {
			if (t->sent >= t->quota)
				break;
			if (t->quota - t->sent < repeat)
				repeat = (__u32)(t->quota - t->sent);
		} else if (start >= deadline) {
			break;
		}
		opts.repeat = repeat;
		if (bpf_prog_test_run_opts(t->prog_fd, &opts)) {
			t->error = errno;
			break;
		}
		t->sent += repeat;
		took = now_ns() - start;
		/* Aim each call at CALL_TARGET_NS, and never past the deadline by much. */
		if (took > 0) {
			__u64 next = (__u64)repeat * t->opt->call_ms * 1000000ull / took;

			if (!t->quota && deadline > now_ns()) {
				__u64 left = (__u64)repeat * (deadline - now_ns()) / took;

				if (left < next)
					next = left;
			}
			repeat = next < t->opt->batch ? t->opt->batch : next > (1u << 30) ? (1u << 30) : (__u32)next;
		}
	}
	return NULL;
}

/*
 * Keeps the program attached (generic XDP, bpf_link) to this namespace's
 * loopback for the run, so it stays in the XDP dispatcher and each
 * BPF_PROG_RUN call skips the dispatcher rebuild and its RCU wait (3.0 ->
 * 6.7 Mpps with 50 ms calls here). Returns the link fd, or -1 with a warning:
 * the generator still works, with slower short calls.
 */
static int hold_in_dispatcher(int prog_fd)
{
	LIBBPF_OPTS(bpf_link_create_opts, opts, .flags = XDP_FLAGS_SKB_MODE);
	int lo = (int)if_nametoindex("lo");
	int fd = lo ? bpf_link_create(prog_fd, lo, BPF_XDP, &opts) : -ENODEV;

	if (fd < 0)
		xnf_warn("cannot keep the generator's program attached to lo (%s): calls shorter than ~1 s "
			 "will lose time waiting for RCU", strerror(-fd));
	return fd;
}

static int parse_mac(const char *text, __u8 *mac)
{
	return sscanf(text, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &mac[0], &mac[1], &mac[2], &mac[3], &mac[4],
		      &mac[5]) == 6 ? 0 : -1;
}

static int read_iface_mac(const char *iface, __u8 *mac)
{
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM, 0), rc;

	if (fd < 0)
		return -1;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", iface);
	rc = ioctl(fd, SIOCGIFHWADDR, &ifr);
	close(fd);
	if (rc)
		return -1;
	memcpy(mac, ifr.ifr_hwaddr.sa_data, ETH_ALEN);
	return 0;
}

static int parse_cores(const char *text, struct gen_options *opt)
{
	char copy[256], *save = NULL;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	snprintf(copy, sizeof(copy), "%s", text);
	opt->nthreads = 0;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		long core = strtol(tok, &end, 10);

		if (*end || core < 0 || core >= ncpu || opt->nthreads == MAX_THREADS) {
			xnf_error("core '%s' is not one of this machine's cores (0-%ld)", tok, ncpu - 1);
			return -1;
		}
		opt->cores[opt->nthreads++] = (int)core;
	}
	return opt->nthreads ? 0 : -1;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: xnf-gen --iface IF --dst-mac MAC [options]\n"
		"  --iface IF        interface to send on (its peer must have XDP or GRO on veth)\n"
		"  --dst-mac MAC     destination MAC (the device under test)\n"
		"  --src-mac MAC     source MAC (default: the interface's)\n"
		"  --src-ip A --dst-ip B   IPv4 addresses (default 198.18.0.1 -> 198.18.0.2)\n"
		"  --size N          frame size on the wire with FCS, 64-1518 (default 64)\n"
		"  --duration S      send for S seconds (default 1)\n"
		"  --count N         send exactly N frames (split over the threads) instead\n"
		"  --cores LIST      one pinned sender thread per core, e.g. 0 or 0,1 (default 0)\n"
		"  --batch N         frames per kernel round, 1-256 (default 64)\n"
		"  --call-ms N       length of one BPF_PROG_RUN call, 1-5000 ms (default 100): a running\n"
		"                    call cannot be interrupted\n");
}

static int parse_args(int argc, char **argv, struct gen_options *opt)
{
	static const struct option long_options[] = {
		{ "iface", required_argument, NULL, 'i' }, { "dst-mac", required_argument, NULL, 'd' },
		{ "src-mac", required_argument, NULL, 's' }, { "src-ip", required_argument, NULL, 'S' },
		{ "dst-ip", required_argument, NULL, 'D' }, { "size", required_argument, NULL, 'z' },
		{ "duration", required_argument, NULL, 't' }, { "count", required_argument, NULL, 'c' },
		{ "cores", required_argument, NULL, 'C' }, { "batch", required_argument, NULL, 'b' },
		{ "call-ms", required_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' }, { 0 },
	};
	bool have_dst = false, have_src = false;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "", long_options, NULL)) != -1) {
		switch (c) {
		case 'i': opt->iface = optarg; break;
		case 'd': have_dst = parse_mac(optarg, opt->dst_mac) == 0; if (!have_dst) goto bad; break;
		case 's': have_src = parse_mac(optarg, opt->src_mac) == 0; if (!have_src) goto bad; break;
		case 'S': if (inet_pton(AF_INET, optarg, &opt->src_ip) != 1) goto bad; break;
		case 'D': if (inet_pton(AF_INET, optarg, &opt->dst_ip) != 1) goto bad; break;
		case 'z': opt->size = (unsigned int)atoi(optarg); break;
		case 't': opt->duration_s = atof(optarg); break;
		case 'c': opt->count = strtoull(optarg, NULL, 10); break;
		case 'C': if (parse_cores(optarg, opt)) return -1; break;
		case 'b': opt->batch = (unsigned int)atoi(optarg); break;
		case 'L': opt->call_ms = (unsigned int)atoi(optarg); break;
		case 'h': usage(stdout); exit(0);
		default:
			xnf_error("unknown or incomplete option %s (see --help)", argv[optind - 1]);
			return -1;
		}
	}
	if (!opt->iface || !have_dst) {
		xnf_error("--iface and --dst-mac are required (see --help)");
		return -1;
	}
	opt->ifindex = (int)if_nametoindex(opt->iface);
	if (!opt->ifindex) {
		xnf_error("interface '%s' does not exist in this network namespace", opt->iface);
		return -1;
	}
	if (!have_src && read_iface_mac(opt->iface, opt->src_mac)) {
		xnf_error("cannot read the MAC address of %s: give --src-mac", opt->iface);
		return -1;
	}
	if (opt->size < MIN_FRAME || opt->size > MAX_FRAME) {
		xnf_error("frame size %u out of range %d-%d", opt->size, MIN_FRAME, MAX_FRAME);
		return -1;
	}
	if (opt->batch < 1 || opt->batch > 256) {
		xnf_error("batch size %u out of range 1-256", opt->batch);
		return -1;
	}
	if (opt->call_ms < 1 || opt->call_ms > 5000) {
		xnf_error("call length %u ms out of range 1-5000", opt->call_ms);
		return -1;
	}
	if (opt->duration_s <= 0 && !opt->count) {
		xnf_error("give a positive --duration or --count");
		return -1;
	}
	return 0;
bad:
	xnf_error("bad value '%s' for %s", optarg, argv[optind - 1]);
	return -1;
}

static void explain_run_error(int err, const char *iface)
{
	if (err == 524 /* ENOTSUPP */ || err == EOPNOTSUPP || err == EINVAL)
		xnf_error("the kernel refused live-frame BPF_PROG_RUN on %s (%s): it needs Linux 5.18 or "
			  "newer, and on veth an XDP program or GRO on the peer interface", iface, strerror(err));
	else
		xnf_error("sending on %s failed: %s", iface, strerror(err));
}

int main(int argc, char **argv)
{
	struct gen_options opt = { .size = MIN_FRAME, .duration_s = 1.0, .src_port = 9, .dst_port = 9,
				   .nthreads = 1, .batch = DEFAULT_BATCH, .call_ms = DEFAULT_CALL_MS };
	static struct gen_thread threads[MAX_THREADS];
	static __u8 frame[MAX_FRAME];
	unsigned long long total = 0;
	struct gen_bpf *skel;
	__u32 frame_len;
	__u64 start, elapsed;
	int rc = 0, hold_fd;

	inet_pton(AF_INET, "198.18.0.1", &opt.src_ip);
	inet_pton(AF_INET, "198.18.0.2", &opt.dst_ip);
	if (parse_args(argc, argv, &opt))
		return 2;
	if (opt.count)
		opt.duration_s = 0;
	skel = gen_bpf__open();
	if (skel)
		skel->rodata->gen_ifindex = (__u32)opt.ifindex;
	if (skel && gen_bpf__load(skel)) {
		gen_bpf__destroy(skel);
		skel = NULL;
	}
	if (!skel) {
		xnf_error("cannot load the generator's BPF program: %s%s", strerror(errno),
			  geteuid() ? " (xnf-gen needs root)" : "");
		return 1;
	}
	frame_len = build_frame(&opt, frame);
	hold_fd = hold_in_dispatcher(bpf_program__fd(skel->progs.xnf_gen));
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	start = now_ns();
	for (int i = 0; i < opt.nthreads; i++) {
		struct gen_thread *t = &threads[i];

		t->core = opt.cores[i];
		t->prog_fd = bpf_program__fd(skel->progs.xnf_gen);
		t->opt = &opt;
		t->frame = frame;
		t->frame_len = frame_len;
		t->quota = opt.count ? opt.count / opt.nthreads + (i < (int)(opt.count % opt.nthreads)) : 0;
		pthread_create(&t->tid, NULL, send_loop, t);
	}
	for (int i = 0; i < opt.nthreads; i++)
		pthread_join(threads[i].tid, NULL);
	elapsed = now_ns() - start;
	printf("{\"iface\": \"%s\", \"size\": %u, \"seconds\": %.6f, \"threads\": [", opt.iface, opt.size,
	       elapsed / 1e9);
	for (int i = 0; i < opt.nthreads; i++) {
		printf("%s{\"core\": %d, \"sent\": %llu}", i ? ", " : "", threads[i].core, threads[i].sent);
		total += threads[i].sent;
		if (threads[i].error && !rc) {
			explain_run_error(threads[i].error, opt.iface);
			rc = 1;
		}
	}
	printf("], \"sent\": %llu, \"pps\": %.0f}\n", total, total / (elapsed / 1e9));
	if (hold_fd >= 0)
		close(hold_fd);
	gen_bpf__destroy(skel);
	return rc;
}
