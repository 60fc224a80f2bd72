// SPDX-License-Identifier: MIT
/* xnf-core-pair: how much a thread spinning on one CPU slows a fixed compute loop on another.
 *
 * A VM's two vCPUs may sit on two physical cores, on one core's SMT siblings, or share one core in turns: the guest
 * cannot tell which from its own files. A user-space data path spins its worker on one CPU while the sender works on
 * the other, so where the host put the pair decides what the spin costs the sender. This measures it: the loop's
 * time alone, beside a spinner, and alone again (the mean of the two alones is the reference, so a drift between
 * them does not read as interference), and the loop on the partner CPU alone. Then the time a cache line takes
 * to go from one CPU to the other and back: what every ring entry that one core writes and the other reads pays, and
 * what depends on where the host put the pair (one core complex sharing a cache, or two). One JSON line on stdout.
 * --round-trip-only measures the round trip alone: the lab's probe between measurements, which must be short and
 * must not busy the DUT's core before the next one.
 *
 *   xnf-core-pair [--cpu N] [--partner N] [--ms MS] [--round-trip-only]
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <xnf/runtime/log.h>
#include <xnf/runtime/options.h>

#define CHUNK_ITERATIONS 1000000u  /* multiplies in one timed unit of work: reading the clock is noise beside it */

struct options {
	__u32 cpu;      /* where the timed loop runs */
	__u32 partner;  /* where the spinner runs */
	__u32 ms;       /* how long each timed phase lasts */
	bool round_trip_only;
};

static atomic_int spinner_stop;
/* The line the ping-pong bounces: 1 when the partner's turn, 0 when ours; alone on its cache line. */
static _Alignas(64) atomic_int turn;
static atomic_int pong_stop;

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static int pin_to(__u32 cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* Eight independent multiply-add chains: enough work in flight to fill the core's multipliers, so that a sibling
 * hardware thread competing for them shows (one dependent chain waits on latency and would not notice it). */
static uint64_t chunk(uint64_t seed)
{
	uint64_t x[8];
	for (int k = 0; k < 8; k++)
		x[k] = seed + k;
	for (unsigned i = 0; i < CHUNK_ITERATIONS / 8; i++)
		for (int k = 0; k < 8; k++)
			x[k] = x[k] * 6364136223846793005ull + 1442695040888963407ull;
	uint64_t out = 0;
	for (int k = 0; k < 8; k++)
		out ^= x[k];
	return out;
}

/* Nanoseconds per chunk over about `ms` milliseconds on `cpu`. */
static double time_per_chunk(__u32 cpu, __u32 ms)
{
	if (pin_to(cpu) != 0)
		return -1;
	volatile uint64_t sink;
	uint64_t x = 1;
	unsigned chunks = 0;
	double start = now_ns(), end = start + ms * 1e6, t;
	do {
		x = chunk(x);
		chunks++;
		t = now_ns();
	} while (t < end);
	sink = x;
	(void)sink;
	return (t - start) / chunks;
}

/* A thread started on `cpu` only: it fails to start (an errno) rather than run elsewhere unnoticed. */
static int start_pinned(pthread_t *thread, void *(*fn)(void *), __u32 cpu)
{
	pthread_attr_t attr;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	int err = pthread_attr_init(&attr);
	if (err == 0)
		err = pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	if (err == 0)
		err = pthread_create(thread, &attr, fn, NULL);
	pthread_attr_destroy(&attr);
	return err;
}

static void *spin(void *unused)
{
	(void)unused;
	uint64_t x = 1;
	while (!atomic_load_explicit(&spinner_stop, memory_order_relaxed))
		x = chunk(x) | 1;
	return (void *)(uintptr_t)x;
}

static void *pong(void *unused)
{
	(void)unused;
	while (!atomic_load_explicit(&pong_stop, memory_order_relaxed))
		if (atomic_load_explicit(&turn, memory_order_acquire) == 1)
			atomic_store_explicit(&turn, 0, memory_order_release);
	return NULL;
}

#define BLOCK_TRIPS 200      /* round trips timed together: a few microseconds, far below a scheduler slice */
#define MAX_BLOCKS 65536      /* blocks kept for the percentile: 20 ms of near-level trips is about 1,500 */
#define KEPT_PERCENTILE 10    /* the block reported: a low one, as no block can be faster than the line's travel */

static double block_ns[MAX_BLOCKS];

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Nanoseconds per round trip of a cache line between `cpu` and `partner`, over about `ms` milliseconds; < 0 when
 * the partner thread cannot start on its CPU (errno says why). Timed in short blocks and read from a low percentile
 * of them, not as the run's mean: a busy thread on the partner's CPU (an AF_XDP worker that spins) takes turns with
 * the partner, and every block that waits out its turn would otherwise count, doubling a near reading into a far
 * one. The blocks with no such wait show where the host put the pair. */
static double round_trip_ns(__u32 cpu, __u32 partner, __u32 ms)
{
	pthread_t thread;
	if (pin_to(cpu) != 0)
		return -1;
	int err = start_pinned(&thread, pong, partner);
	if (err != 0) {
		errno = err;
		return -1;
	}
	size_t blocks = 0;
	double t = now_ns(), end = t + ms * 1e6;
	do {
		double start = t;
		for (int i = 0; i < BLOCK_TRIPS; i++) {
			atomic_store_explicit(&turn, 1, memory_order_release);
			while (atomic_load_explicit(&turn, memory_order_acquire) != 0)
				;
		}
		t = now_ns();
		block_ns[blocks++] = (t - start) / BLOCK_TRIPS;
	} while (t < end && blocks < MAX_BLOCKS);
	atomic_store(&pong_stop, 1);
	pthread_join(thread, NULL);
	qsort(block_ns, blocks, sizeof(block_ns[0]), by_value);
	return block_ns[blocks * KEPT_PERCENTILE / 100];
}

/* The round trip, or < 0 after saying why it could not be measured. */
static double measured_round_trip(const struct options *o)
{
	double trip = round_trip_ns(o->cpu, o->partner, o->ms);
	if (trip < 0)
		xnf_error("cannot run the round trip between CPUs %u and %u: %s (is this process confined to other "
			  "CPUs?)", o->cpu, o->partner, strerror(errno));
	return trip;
}

static int print_round_trip(const struct options *o)
{
	double trip = measured_round_trip(o);
	if (trip < 0)
		return 1;
	printf("{\"cpu\": %u, \"partner\": %u, \"round_trip_ns\": %.1f}\n", o->cpu, o->partner, trip);
	return 0;
}

static int take_cpu(const struct xnf_option *o, const char *text, void *opts)
{
	struct options *opt = opts;

	return xnf_parse_one_core(o->name, text, strcmp(o->name, "cpu") == 0 ? &opt->cpu : &opt->partner);
}

#define OPT(field) offsetof(struct options, field)

static const struct xnf_option table[] = {
	{ .name = "cpu", .kind = XNF_OPT_CUSTOM, .value = "N", .parse = take_cpu,
	  .help = "where the timed loop runs", .default_text = "0" },
	{ .name = "partner", .kind = XNF_OPT_CUSTOM, .value = "N", .parse = take_cpu,
	  .help = "where the spinner and the other end of the round trip run", .default_text = "1" },
	{ .name = "ms", .kind = XNF_OPT_UINT, .value = "MS", .offset = OPT(ms), .min = 10, .max = 60000,
	  .help = "milliseconds of each timed phase" },
	{ .name = "round-trip-only", .kind = XNF_OPT_FLAG, .offset = OPT(round_trip_only),
	  .help = "measure the cache line's round trip and nothing else (no loop, no spinner)" },
	XNF_OPTIONS_END,
};

int main(int argc, char **argv)
{
	const struct options defaults = {.cpu = 0, .partner = 1, .ms = 1000};
	struct options o = defaults;
	int err = xnf_options_parse(table, argc, argv, &o, NULL,
				    "usage: xnf-core-pair [--cpu N] [--partner N] [--ms MS] [--round-trip-only]\n"
				    "what a thread spinning on one CPU costs a compute loop on another, and a cache line's "
				    "round trip between them, as one JSON line", &defaults);
	if (err)
		return err > 0 ? 0 : 2;
	if (o.cpu == o.partner) {
		xnf_error("--cpu and --partner are both %u: give two different CPUs", o.cpu);
		return 2;
	}
	if (o.round_trip_only)
		return print_round_trip(&o);
	double before = time_per_chunk(o.cpu, o.ms);
	if (before < 0) {
		xnf_error("cannot run on CPU %u: %s (is this process confined to other CPUs?)", o.cpu, strerror(errno));
		return 1;
	}
	pthread_t spinner;
	err = start_pinned(&spinner, spin, o.partner);
	if (err != 0) {
		xnf_error("cannot start the spinner on CPU %u: %s (is this process confined to other CPUs?)", o.partner,
			  strerror(err));
		return 1;
	}
	double beside = time_per_chunk(o.cpu, o.ms);
	atomic_store(&spinner_stop, 1);
	pthread_join(spinner, NULL);
	double after = time_per_chunk(o.cpu, o.ms);
	double partner = time_per_chunk(o.partner, o.ms);
	double alone = (before + after) / 2;
	double trip = measured_round_trip(&o);
	if (trip < 0)
		return 1;
	printf("{\"cpu\": %u, \"partner\": %u, \"alone_ns\": %.0f, \"alone_drift\": %.4f, \"beside_spinner_ns\": %.0f, "
	       "\"slowdown\": %.4f, \"partner_alone_ns\": %.0f, \"round_trip_ns\": %.1f}\n", o.cpu, o.partner, alone,
	       after / before - 1, beside, beside / alone, partner, trip);
	return 0;
}
