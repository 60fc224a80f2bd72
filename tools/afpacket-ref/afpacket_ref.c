// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnf-afpacket-ref: AF_PACKET's receive path, measured beside AF_XDP in the same run (the packet-I/O studies'
 * "AF_PACKET V2/V3 does about a million frames a second per core"). One socket bound to the interface with a
 * TPACKET_V2 or TPACKET_V3 receive ring; every frame is read (its first byte, as a consumer would) and its slot
 * given back: a receive-and-drop loop. It prints a line when its ring is ready, and at the end (SIGINT, SIGTERM or
 * --duration) one JSON line: the frames it read and the drops the kernel counted (PACKET_STATISTICS).
 *
 *   xnf-afpacket-ref --iface IF [--version 2|3] [--core N] [--duration S]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <xnf/runtime/log.h>
#include <xnf/runtime/options.h>

/* 8 blocks of 1 MiB, 2 KiB frames: 4,096 slots, as large as the AF_XDP rings the lab compares it with. */
#define BLOCK_SIZE (1u << 20)
#define BLOCKS 8
#define FRAME_SIZE 2048
#define V3_BLOCK_TIMEOUT_MS 1   /* a partly filled block goes to the reader after this long */
#define POLL_MS 100

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

struct options {
	char *iface;
	__u32 version;
	__u32 core;
	bool pinned;
	__u32 duration;   /* seconds; 0: until a signal */
};

struct reader {
	int fd;
	__u8 *ring;
	size_t ring_size;
	unsigned long long frames, touched;
};

static int take_core(const struct xnf_option *o, const char *text, void *opts)
{
	struct options *opt = opts;

	if (xnf_parse_one_core(o->name, text, &opt->core))
		return -1;
	opt->pinned = true;
	return 0;
}

#define OPT(field) offsetof(struct options, field)

static const struct xnf_option table[] = {
	{ .name = "iface", .kind = XNF_OPT_STRING, .value = "IF", .offset = OPT(iface), .help = "the interface" },
	{ .name = "version", .kind = XNF_OPT_UINT, .value = "N", .offset = OPT(version), .min = 2, .max = 3,
	  .help = "TPACKET_V2 (a slot per frame) or TPACKET_V3 (frames packed in blocks)" },
	{ .name = "core", .kind = XNF_OPT_CUSTOM, .value = "N", .parse = take_core, .default_text = "not pinned",
	  .help = "pin the reader to this core" },
	{ .name = "duration", .kind = XNF_OPT_UINT, .value = "S", .offset = OPT(duration), .min = 0, .max = 86400,
	  .help = "stop after S seconds (0: at SIGINT or SIGTERM)" },
	XNF_OPTIONS_END,
};

static int open_ring(struct reader *r, const struct options *opt)
{
	int version = opt->version == 3 ? TPACKET_V3 : TPACKET_V2;
	struct tpacket_req3 req = { .tp_block_size = BLOCK_SIZE, .tp_block_nr = BLOCKS, .tp_frame_size = FRAME_SIZE,
				    .tp_frame_nr = BLOCK_SIZE / FRAME_SIZE * BLOCKS };
	struct sockaddr_ll where = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL),
				     .sll_ifindex = (int)if_nametoindex(opt->iface) };

	if (!where.sll_ifindex) {
		xnf_error("no interface called '%s' here", opt->iface);
		return -1;
	}
	if (version == TPACKET_V3)
		req.tp_retire_blk_tov = V3_BLOCK_TIMEOUT_MS;
	r->fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	if (r->fd < 0 || setsockopt(r->fd, SOL_PACKET, PACKET_VERSION, &version, sizeof(version)) ||
	    setsockopt(r->fd, SOL_PACKET, PACKET_RX_RING, &req,
		       version == TPACKET_V3 ? sizeof(req) : sizeof(struct tpacket_req))) {
		xnf_error("cannot open a TPACKET_V%u socket with its ring: %s", opt->version, strerror(errno));
		return -1;
	}
	r->ring_size = (size_t)BLOCK_SIZE * BLOCKS;
	r->ring = mmap(NULL, r->ring_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_LOCKED, r->fd, 0);
	if (r->ring == MAP_FAILED || bind(r->fd, (struct sockaddr *)&where, sizeof(where))) {
		xnf_error("cannot map or bind the ring on %s: %s", opt->iface, strerror(errno));
		return -1;
	}
	return 0;
}

/* Nothing to read: false when the time is up, else waits a while for frames. */
static bool wait_for_frames(const struct reader *r, const struct timespec *until)
{
	struct pollfd p = { .fd = r->fd, .events = POLLIN | POLLERR };
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (until->tv_sec && now.tv_sec >= until->tv_sec)
		return false;
	poll(&p, 1, POLL_MS);
	return true;
}

/* A slot per frame: each is the reader's while its status says TP_STATUS_USER. */
static void read_v2(struct reader *r, const struct timespec *until)
{
	__u32 slots = BLOCK_SIZE / FRAME_SIZE * BLOCKS, next = 0;

	while (!stop) {
		struct tpacket2_hdr *h = (struct tpacket2_hdr *)(r->ring + (size_t)next * FRAME_SIZE);

		if (!(h->tp_status & TP_STATUS_USER)) {
			if (!wait_for_frames(r, until))
				break;
			continue;
		}
		r->touched += ((__u8 *)h)[h->tp_mac];
		r->frames++;
		__atomic_store_n(&h->tp_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
		next = (next + 1) % slots;
	}
}

/* Frames packed in blocks: a block is the reader's while its status says TP_STATUS_USER. */
static void read_v3(struct reader *r, const struct timespec *until)
{
	__u32 block = 0;

	while (!stop) {
		struct tpacket_block_desc *b = (struct tpacket_block_desc *)(r->ring + (size_t)block * BLOCK_SIZE);
		struct tpacket3_hdr *h;

		if (!(__atomic_load_n(&b->hdr.bh1.block_status, __ATOMIC_ACQUIRE) & TP_STATUS_USER)) {
			if (!wait_for_frames(r, until))
				break;
			continue;
		}
		h = (struct tpacket3_hdr *)((__u8 *)b + b->hdr.bh1.offset_to_first_pkt);
		for (__u32 i = 0; i < b->hdr.bh1.num_pkts; i++) {
			r->touched += ((__u8 *)h)[h->tp_mac];
			h = (struct tpacket3_hdr *)((__u8 *)h + h->tp_next_offset);
		}
		r->frames += b->hdr.bh1.num_pkts;
		__atomic_store_n(&b->hdr.bh1.block_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
		block = (block + 1) % BLOCKS;
	}
}

static unsigned long long kernel_drops(const struct reader *r, __u32 version)
{
	struct tpacket_stats_v3 s = { 0 };
	socklen_t len = version == 3 ? sizeof(s) : sizeof(struct tpacket_stats);

	return getsockopt(r->fd, SOL_PACKET, PACKET_STATISTICS, &s, &len) ? 0 : s.tp_drops;
}

int main(int argc, char **argv)
{
	static const struct options defaults = { .version = 3 };
	struct options opt = defaults;
	struct reader r = { .fd = -1 };
	struct timespec start, until = { 0 }, end;
	int err;

	err = xnf_options_parse(table, argc, argv, &opt, NULL, "usage: xnf-afpacket-ref --iface IF [options]", &defaults);
	if (err)
		return err > 0 ? 0 : 2;
	if (!opt.iface) {
		xnf_error("--iface is required (see --help)");
		return 2;
	}
	if (opt.pinned) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET((int)opt.core, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			xnf_warn("cannot pin to core %u: %s", opt.core, strerror(errno));
	}
	if (open_ring(&r, &opt))
		return 1;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	clock_gettime(CLOCK_MONOTONIC, &start);
	if (opt.duration)
		until.tv_sec = start.tv_sec + opt.duration;
	printf("xnf-afpacket-ref: TPACKET_V%u ring on %s\n", opt.version, opt.iface);
	fflush(stdout);
	if (opt.version == 3)
		read_v3(&r, &until);
	else
		read_v2(&r, &until);
	clock_gettime(CLOCK_MONOTONIC, &end);
	printf("{\"version\": %u, \"frames\": %llu, \"kernel_drops\": %llu, \"seconds\": %.4f}\n", opt.version, r.frames,
	       kernel_drops(&r, opt.version),
	       (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) / 1e9);
	munmap(r.ring, r.ring_size);
	close(r.fd);
	return 0;
}
