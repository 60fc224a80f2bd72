// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnf-live-tx-cost: what the AF_XDP runtime's live-frames transmit path costs
 * by itself, with no generator and no receive: the runtime's own transmit
 * program (lib/afxdp/live_tx.c) sends one frame, over and over, out of a port,
 * in calls of each size asked for, and the time per call and per frame is
 * measured. The port's peer needs an XDP program (or GRO) and receives the
 * frames on this core (veth): its receive is part of the figure, as it is
 * for a worker.
 *
 *   xnf-live-tx-cost --iface IF [--sizes 16,64,256,1024,4096] [--frame-len 60] [--seconds 1] [--core N]
 *
 * Prints one JSON object: per size, calls made, frames sent, ns per call and per frame.
 */
#include <errno.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xnf/helpers.h>
#include <xnf/runtime/log.h>
#include <xnf/runtime/options.h>
#include <xnf/runtime/ports.h>

#include "live_tx.h"

#define MAX_SIZES 16
#define FRAME_SIZE 4096
#define DATA_OFFSET 256 /* where copy mode puts a received frame in its UMEM frame */

struct options {
	const char *iface;
	__u32 sizes[MAX_SIZES];
	__u32 nsizes;
	__u32 frame_len;
	double seconds;
	__u32 core; /* (__u32)-1: not pinned */
};

static int take_sizes(const struct xnf_option *option, const char *text, void *opts)
{
	struct options *o = opts;
	char copy[256], *save = NULL;

	snprintf(copy, sizeof(copy), "%s", text);
	o->nsizes = 0;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (o->nsizes == MAX_SIZES) {
			xnf_error("--%s takes at most %d frame counts", option->name, MAX_SIZES);
			return -1;
		}
		if (xnf_parse_uint(option->name, tok, 1, XNF_LIVE_MAX_BATCH, &o->sizes[o->nsizes++]))
			return -1;
	}
	return o->nsizes ? 0 : -1;
}

#define OPT(field) offsetof(struct options, field)

static const struct xnf_option table[] = {
	{ .name = "iface", .kind = XNF_OPT_STRING, .value = "IF", .offset = OPT(iface),
	  .help = "the port to send out of (its peer needs an XDP program or GRO)" },
	{ .name = "sizes", .kind = XNF_OPT_CUSTOM, .value = "N,N...", .parse = take_sizes,
	  .default_text = "16,64,256,1024,4096", .help = "frames per call, one measurement each" },
	{ .name = "frame-len", .kind = XNF_OPT_UINT, .value = "N", .offset = OPT(frame_len), .min = XNF_LIVE_MIN_LEN,
	  .max = XNF_LIVE_MAX_FRAME, .help = "length of the frame sent" },
	{ .name = "seconds", .kind = XNF_OPT_NUMBER, .value = "S", .offset = OPT(seconds), .min = 0.001, .max = 3600,
	  .help = "time per measurement" },
	{ .name = "core", .kind = XNF_OPT_UINT, .value = "N", .offset = OPT(core), .min = 0, .max = 4095,
	  .help = "pin to this core", .default_text = "not pinned" },
	XNF_OPTIONS_END,
};

static const struct options defaults = {
	.sizes = { 16, 64, 256, 1024, 4096 }, .nsizes = 5, .frame_len = 60, .seconds = 1.0, .core = (__u32)-1,
};

static int parse(int argc, char **argv, struct options *o)
{
	int rc;

	*o = defaults;
	rc = xnf_options_parse(table, argc, argv, o, NULL, "usage: xnf-live-tx-cost --iface IF [options]", &defaults);
	if (rc)
		return rc;
	if (!o->iface) {
		xnf_error("--iface is required (see --help)");
		return -1;
	}
	return 0;
}

/* Every descriptor points at frame 0: an Ethernet broadcast frame of frame_len bytes. */
static void prepare(struct xnf_live_tx *t, __u32 frame_len)
{
	__u8 *frame = (__u8 *)xnf_live_tx_umem(t, 0) + DATA_OFFSET;
	struct xnf_live_desc *descs = xnf_live_tx_descs(t, 0);

	memset(frame, 0xff, 6);
	memset(frame + 6, 0x02, 6);
	frame[12] = 0x88;
	frame[13] = 0xb5; /* local experimental EtherType */
	for (__u32 i = 0; i < XNF_LIVE_MAX_BATCH; i++)
		descs[i] = (struct xnf_live_desc){ .frame = 0, .offset = DATA_OFFSET, .len = (__u16)frame_len };
}

static int measure(struct xnf_live_tx *t, __u32 size, double seconds)
{
	__u64 start = xnf_now_ns(), deadline = start + (__u64)(seconds * 1e9), calls = 0, frames = 0, now;
	__u32 unsent;

	do {
		int rc = xnf_live_tx_send(t, 0, size, 0, &unsent);

		if (rc < 0) {
			xnf_error("a live-frames call failed: %s", strerror(-rc));
			return -1;
		}
		calls += (__u64)rc;
		frames += size;
		now = xnf_now_ns();
	} while (now < deadline);
	printf("{\"size\": %u, \"calls\": %llu, \"frames\": %llu, \"ns_per_call\": %.1f, \"ns_per_frame\": %.2f}",
	       size, (unsigned long long)calls, (unsigned long long)frames,
	       (double)(now - start) / (double)calls, (double)(now - start) / (double)frames);
	return 0;
}

static void pin(__u32 core)
{
	cpu_set_t set;

	if (core == (__u32)-1)
		return;
	CPU_ZERO(&set);
	CPU_SET((int)core, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

int main(int argc, char **argv)
{
	const __u64 frames = 1;
	struct xnf_port port;
	struct xnf_live_tx *t;
	struct options o;
	char err[512];
	int rc = 0;

	rc = parse(argc, argv, &o);
	if (rc)
		return rc > 0 ? 0 : 2;
	if (xnf_ports_resolve((char *const *)&o.iface, 1, &port))
		return 2;
	pin(o.core);
	t = xnf_live_tx_open(&port, 1, 1, &frames, FRAME_SIZE, err, sizeof(err));
	if (!t) {
		xnf_error("%s", err);
		return 1;
	}
	prepare(t, o.frame_len);
	printf("{\"iface\": \"%s\", \"frame_len\": %u, \"results\": [", o.iface, o.frame_len);
	for (__u32 i = 0; i < o.nsizes && rc == 0; i++) {
		printf("%s", i ? ", " : "");
		rc = measure(t, o.sizes[i], o.seconds);
	}
	printf("]}\n");
	xnf_live_tx_close(t);
	return rc ? 1 : 0;
}
