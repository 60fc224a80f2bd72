// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnf-<nf> cost --frames FILE.pcap [--rules FILE] [--map-size MAP=N] [--repeat N]: what the NF costs per frame on
 * a representative frame set, with no interface and no traffic: its native build (the workers' code) in batches
 * as a worker runs it, and its XDP program by BPF_PROG_RUN. The c_task of the cost model (docs/cost-model.md):
 * what the NF adds to a path's fixed I/O cost. Both sides hold the same rules and run the start step; a first pass
 * over the frames warms them (sessions open, caches fill), then each side is timed over --repeat passes.
 *
 * Native time is each batch's run, timed alone. Each frame is copied into the next slot of an area as large as a
 * worker's UMEM, one frame size apart, as a worker finds its frames: a fresh page every frame, and the NF's own
 * tables sharing the caches with them. XDP time is the kernel's own time for each run (BPF_PROG_RUN's duration),
 * the program and the glue around the NF, without any driver or transmit work, over passes that go through every
 * frame in turn: a frame repeated many times in a row would find its flow's table entries in the cache, where a
 * mix of flows does not. Each run's duration includes a clock read of the kernel's, the same for every NF: what
 * is compared is the difference to a baseline NF measured the same way.
 *
 * Each batch and each frame is run twice in a row, cold then warm (its frames, table entries and branches just
 * seen). The native cold time is the worker's. The XDP side's cold time is not the run's: one syscall per frame
 * leaves no frame's cache misses to overlap with its neighbours', as they do in a batch (a NAPI poll's in the
 * run), and the syscall's own work between them evicts more. lb over 10,000 sessions took 164 ns a frame more
 * cold than warm here, where the run's rates put its misses near 30 ns (docs/cost-model.md). So the XDP time
 * reported is the program's warm time plus the misses a batch meets, the native build's cold less its warm time:
 * the same lookups in the same order, overlapped as a batch overlaps them. The cold and warm times are reported
 * too.
 *
 * The first pass is timed as well, each frame's first run on each side: there a flow's first frame finds no state
 * and makes it (a NAT's session and mapping), so on a mix whose frames are each a flow of their own it is the cost
 * of a new session, where the passes after it are the cost of an established one. The native side's is its first
 * batch run; the XDP side's is the model's XDP time plus what the first cold run took over the later cold runs
 * (both one syscall a frame, so only the state made differs).
 *
 * The whole run stays on the core it started on: a move between cores leaves the NF's tables in the other core's
 * cache, and a table near the cache's size is then cold for a while (the acl with 10,000 connections natively: 170-183
 * ns a frame in eight pinned runs, 199-304 in two unpinned ones).
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <xnf/internal/native_maps.h>
#include <xnf/internal/nf_entry.h>
#include <xnf/runtime/afxdp.h>
#include <xnf/runtime/clock.h>
#include <xnf/runtime/log.h>
#include <xnf/runtime/stats.h>

#include "frame_set.h"
#include "instance.h"
#include "nf_cost.h"

#define BATCH 64
static int load_side(const struct cost_options *opt, const struct xnf_rules_target *side, const char *which)
{
	char err[1024] = "";

	if (opt->run.rules && xnf_rules_load_file(opt->run.rules, side, err, sizeof(err)) < 0) {
		xnf_error("%s", err);
		return -1;
	}
	if (xnf_nf_start && xnf_nf_start(side, err, sizeof(err))) {
		xnf_error("%s cannot start (%s side): %s", xnf_nf_name, which, err);
		return -1;
	}
	return 0;
}

/* Where the native side puts frames: a worker's UMEM, walked slot by slot. */
struct umem_copy {
	__u8 *area;
	__u64 slots, next;
	__u32 frame_size;
};

static __u8 *next_slot(struct umem_copy *u)
{
	__u8 *slot = u->area + u->next * u->frame_size;

	u->next = (u->next + 1) % u->slots;
	return slot;
}

/* A side's time per frame summed over the runs: the first run of each frame (cold) and a second run of it at once
 * after (warm). */
struct run_times {
	double cold_ns, warm_ns;
};

/* A side's steady times (the passes after the first) and its first pass's time per frame. */
struct side_times {
	struct run_times steady;
	double first_ns;
};

static struct run_times per_run(const struct run_times *sum, double runs)
{
	return (struct run_times){ sum->cold_ns / runs, sum->warm_ns / runs };
}

/* Frames first.. into the slots, as fresh packets (the NF may have rewritten the frames and moved the pointers). */
static void copy_frames(const struct frame_set *f, __u32 first, __u32 n, __u8 *slots[BATCH], struct xnf_pkt pkts[BATCH])
{
	for (__u32 i = 0; i < n; i++) {
		__u8 *data = slots[i] + XNF_PKT_HEADROOM; /* where the kernel puts a received frame */

		memcpy(data, f->data[first + i], f->len[first + i]);
		pkts[i] = (struct xnf_pkt){ .data = data, .data_end = data + f->len[first + i], .frame_start = slots[i] };
	}
}

static double timed_batch(struct xnf_pkt pkts[BATCH], xnf_verdict verdicts[BATCH], __u32 n)
{
	struct timespec start;

	clock_gettime(CLOCK_MONOTONIC, &start);
	xnf_nf_run_batch(pkts, verdicts, n);
	return xnf_seconds_since(&start) * 1e9;
}

/* One pass of the frames through the native NF in batches: each batch copied into the next slots and run, then
 * copied into the same slots again (the NF rewrote them) and run again. counts (may be NULL) gets the verdicts of
 * the first runs. */
static void native_pass(const struct frame_set *f, struct umem_copy *u, struct run_times *sum,
			__u64 counts[XNF_STAT_NSLOTS])
{
	struct xnf_pkt pkts[BATCH];
	xnf_verdict verdicts[BATCH];
	__u8 *slots[BATCH];

	for (__u32 first = 0; first < f->n; first += BATCH) {
		__u32 n = f->n - first < BATCH ? f->n - first : BATCH;

		for (__u32 i = 0; i < n; i++)
			slots[i] = next_slot(u);
		copy_frames(f, first, n, slots, pkts);
		sum->cold_ns += timed_batch(pkts, verdicts, n);
		for (__u32 i = 0; counts && i < n; i++)
			counts[xnf_verdict_slot(verdicts[i], xnf_cfg.nports)]++;
		copy_frames(f, first, n, slots, pkts);
		sum->warm_ns += timed_batch(pkts, verdicts, n);
	}
}

/* The native NF's times per frame. A warm time can come out a fraction of a nanosecond above the cold one (an NF
 * whose frames miss nothing); that is reported as measured. */
static int native_times(const struct cost_options *opt, const struct frame_set *f, __u64 counts[XNF_STAT_NSLOTS],
			struct side_times *per_frame)
{
	const struct xnf_afxdp_config *cfg = &opt->run.afxdp;
	struct umem_copy u = { .slots = xnf_afxdp_worker_frames(cfg, 1, true),
			       .frame_size = cfg->frame_size < XNF_PKT_HEADROOM + FRAME_SET_MAX ?
					     XNF_PKT_HEADROOM + FRAME_SET_MAX : cfg->frame_size };
	struct run_times warm_up = { 0 }, sum = { 0 };

	u.area = mmap(NULL, u.slots * u.frame_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
		      -1, 0);
	if (u.area == MAP_FAILED) {
		xnf_error("no memory for a UMEM's worth of frames (%llu MiB): %s",
			  (unsigned long long)(u.slots * u.frame_size >> 20), strerror(errno));
		return -1;
	}
	native_pass(f, &u, &warm_up, counts); /* the verdicts of the first pass */
	for (__u32 r = 0; r < opt->repeat; r++)
		native_pass(f, &u, &sum, NULL);
	munmap(u.area, u.slots * u.frame_size);
	per_frame->steady = per_run(&sum, (double)f->n * opt->repeat);
	per_frame->first_ns = warm_up.cold_ns / f->n;
	return 0;
}

static int xdp_run(const struct xnf_xdp_instance *x, const struct frame_set *f, __u32 i, double *sum_ns)
{
	static __u8 out[FRAME_SET_MAX];
	LIBBPF_OPTS(bpf_test_run_opts, run, .data_in = f->data[i], .data_size_in = f->len[i], .data_out = out,
		    .data_size_out = sizeof(out), .repeat = 1);

	if (bpf_prog_test_run_opts(x->prog_fd, &run)) {
		xnf_error("BPF_PROG_RUN of frame %u failed: %s", i, strerror(errno));
		return -1;
	}
	if (sum_ns)
		*sum_ns += run.duration;
	return 0;
}

/* The XDP program's times per frame: every frame in turn, each run twice in a row. (repeat stays 1: with more, the
 * kernel swaps the program into its XDP dispatcher and waits for an RCU grace period on every call.) */
static int xdp_times(const struct xnf_xdp_instance *x, const struct frame_set *f, __u32 passes,
		     struct side_times *per_frame)
{
	struct run_times sum = { 0 };
	double first = 0;

	for (__u32 i = 0; i < f->n; i++) /* what the native side's first pass is */
		if (xdp_run(x, f, i, &first))
			return -1;
	for (__u32 p = 0; p < passes; p++)
		for (__u32 i = 0; i < f->n; i++)
			if (xdp_run(x, f, i, &sum.cold_ns) || xdp_run(x, f, i, &sum.warm_ns))
				return -1;
	per_frame->steady = per_run(&sum, (double)f->n * passes);
	per_frame->first_ns = first / f->n;
	return 0;
}

/* What the model takes for the XDP program's time: its warm time plus the native build's misses (cold less warm),
 * the header says why. */
static double xdp_in_a_batch(const struct run_times *native, const struct run_times *xdp)
{
	return xdp->warm_ns + native->cold_ns - native->warm_ns;
}

/* The XDP time of a frame's first run, as the model takes it: the header says why. */
static double xdp_first_in_a_batch(const struct side_times *native, const struct side_times *xdp)
{
	return xdp_in_a_batch(&native->steady, &xdp->steady) + xdp->first_ns - xdp->steady.cold_ns;
}

static void report(const struct cost_options *opt, const struct frame_set *f, const struct side_times *native,
		   const struct side_times *xdp, const __u64 counts[XNF_STAT_NSLOTS])
{
	printf("{\"nf\": \"%s\", \"frames\": %u, \"repeat\": %u, \"native_ns_per_frame\": %.2f, "
	       "\"xdp_ns_per_frame\": %.2f, \"native_warm_ns_per_frame\": %.2f, \"xdp_cold_ns_per_frame\": %.2f, "
	       "\"xdp_warm_ns_per_frame\": %.2f, \"native_first_ns_per_frame\": %.2f, \"xdp_first_ns_per_frame\": %.2f, "
	       "\"xdp_first_cold_ns_per_frame\": %.2f, \"verdicts\": {", xnf_nf_name, f->n, opt->repeat,
	       native->steady.cold_ns, xdp_in_a_batch(&native->steady, &xdp->steady), native->steady.warm_ns,
	       xdp->steady.cold_ns, xdp->steady.warm_ns, native->first_ns, xdp_first_in_a_batch(native, xdp),
	       xdp->first_ns);
	for (__u32 slot = 0, first = 1; slot < XNF_STAT_NSLOTS; slot++) {
		if (!counts[slot])
			continue;
		printf("%s\"%s\": %llu", first ? "" : ", ", xnf_stat_names[slot], (unsigned long long)counts[slot]);
		first = 0;
	}
	printf("}}\n");
}

/* Keeps the process on the core it runs on now (one the user's taskset allows). Where that is refused the times are
 * still taken, less steady. */
static void stay_on_this_core(void)
{
	int core = sched_getcpu();
	cpu_set_t set;

	CPU_ZERO(&set);
	if (core >= 0)
		CPU_SET(core, &set);
	if (core < 0 || sched_setaffinity(0, sizeof(set), &set))
		xnf_warn("cost: cannot keep to one core (%s); the times may move with the scheduler", strerror(errno));
}

int xnf_cost_run(const struct cost_options *opt)
{
	struct xnf_port lo = { .name = "lo", .ifindex = 1 };  /* the redirect map needs a port that exists */
	struct xnf_rules_target native_rules = { .resolve = xnf_native_resolve_map };
	struct xnf_xdp_instance x = { 0 };
	__u64 counts[XNF_STAT_NSLOTS] = { 0 };
	struct frame_set frames = { 0 };
	struct side_times native, xdp;
	int rc = 1;

	stay_on_this_core();
	xnf_cfg.nports = 1;
	xnf_cfg.ifindex[0] = 1;
	if (frame_set_read(opt->frames, &frames) || xnf_size_native_maps(&opt->run) || xnf_native_maps_init(1))
		goto out;
	/* The program as the xdp mode loads it for ports of a standard MTU: not taking multi-buffer frames. */
	if (xnf_xdp_load(&x, &lo, 1, false, &(struct xnf_xdp_plan){ .datapath = XNF_DATAPATH_KERNEL },
			 opt->run.map_sizes, opt->run.nmap_sizes))
		goto out;
	if (load_side(opt, &(struct xnf_rules_target){ .resolve = xnf_xdp_resolve_map, .ctx = &x }, "kernel") ||
	    load_side(opt, &native_rules, "native"))
		goto out;
	if (!native_times(opt, &frames, counts, &native) && !xdp_times(&x, &frames, opt->repeat, &xdp)) {
		report(opt, &frames, &native, &xdp, counts);
		rc = 0;
	}
out:
	xnf_xdp_destroy(&x);
	xnf_native_maps_free();
	frame_set_free(&frames);
	return rc;
}
