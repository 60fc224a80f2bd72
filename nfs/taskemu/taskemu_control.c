// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Rules of taskemu: two settings.
 *   cycles N     CPU cycles to spend per packet (0-10000000; 0 by default)
 *   drop P       percent of packets to drop, after the work (0-100; 0 by default)
 * Its start step measures the TSC's rate and builds the list: a random
 * permutation with a single cycle (Sattolo's algorithm), so a walk visits
 * every node before it repeats and no prefetcher can guess the next one.
 * The seed is fixed: every run walks the same list.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <xnf/helpers.h>
#include <xnf/control.h>
#include "taskemu.h"

#define TE_BATCH 65536
#define TE_SEED 0x9e3779b97f4a7c15ull

static const struct xnf_setting te_setting_list[] = {
	{ "cycles", TE_SETTING_CYCLES, 0, TE_MAX_CYCLES },
	{ "drop", TE_SETTING_DROP, 0, TE_PERCENT },
	{ 0 },
};
XNF_SETTINGS_CODEC(te_codec, "te_config", te_setting_list, "cycles N | drop PERCENT");

/* TSC ticks per ms, against CLOCK_MONOTONIC over 20 ms; 0 where there is no TSC. */
static __u32 te_measure_tsc_khz(void)
{
#if defined(__x86_64__) || defined(__i386__)
	struct timespec pause = { .tv_nsec = 20 * 1000 * 1000 };
	__u64 ns0 = xnf_now_ns(), tsc0 = __builtin_ia32_rdtsc(), ns1, tsc1;

	nanosleep(&pause, NULL);
	ns1 = xnf_now_ns();
	tsc1 = __builtin_ia32_rdtsc();
	return (__u32)((tsc1 - tsc0) * 1000000 / (ns1 - ns0));
#else
	return 1000000; /* count "cycles" as ns at 1 GHz */
#endif
}

static __u64 te_next_random(__u64 *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

/* Sattolo's shuffle: a uniformly random cyclic permutation of 0..n-1. */
static __u32 *te_single_cycle(__u32 n)
{
	__u32 *next = malloc((size_t)n * sizeof(*next));
	__u64 state = TE_SEED;

	if (!next)
		return NULL;
	for (__u32 i = 0; i < n; i++)
		next[i] = i;
	for (__u32 i = n - 1; i > 0; i--) {
		__u32 j = (__u32)(te_next_random(&state) % i), swap = next[i];

		next[i] = next[j];
		next[j] = swap;
	}
	return next;
}

static int te_write_list(const struct xnf_map_ref *list, const __u32 *next, char *err, size_t errlen)
{
	__u32 *keys = malloc(TE_BATCH * sizeof(*keys));
	struct te_node *nodes = calloc(TE_BATCH, sizeof(*nodes));
	int rc = -ENOMEM;

	for (__u32 start = 0; keys && nodes && start < list->max_entries; start += TE_BATCH) {
		__u32 count = list->max_entries - start < TE_BATCH ? list->max_entries - start : TE_BATCH;

		for (__u32 i = 0; i < count; i++) {
			keys[i] = start + i;
			nodes[i].next = next[start + i];
		}
		rc = xnf_map_ref_update_batch(list, keys, nodes, count);
		if (rc)
			break;
	}
	if (rc)
		snprintf(err, errlen, "cannot fill its list of %u nodes: %s", list->max_entries, strerror(-rc));
	free(keys);
	free(nodes);
	return rc ? -1 : 0;
}

static int te_set(const struct xnf_map_ref *config, __u32 slot, __u32 value, char *err, size_t errlen)
{
	int rc = xnf_map_ref_update(config, &slot, &value, BPF_ANY);

	if (rc)
		snprintf(err, errlen, "cannot write its settings: %s", strerror(-rc));
	return rc ? -1 : 0;
}

static int te_start(const struct xnf_rules_target *maps, char *err, size_t errlen)
{
	struct xnf_map_ref list, config;
	__u32 *next;
	int rc;

	if (xnf_map_find(maps, "te_list", &list) || xnf_map_find(maps, "te_config", &config)) {
		snprintf(err, errlen, "its maps are missing");
		return -1;
	}
	next = te_single_cycle(list.max_entries);
	if (!next) {
		snprintf(err, errlen, "no memory for a list of %u nodes", list.max_entries);
		return -1;
	}
	rc = te_write_list(&list, next, err, errlen);
	free(next);
	if (rc || te_set(&config, TE_SETTING_TSC_KHZ, te_measure_tsc_khz(), err, errlen) ||
	    te_set(&config, TE_SETTING_NODES, list.max_entries, err, errlen))
		return -1;
	return 0;
}

XNF_EXPORT_RULES(taskemu, &te_codec);
XNF_EXPORT_START(taskemu, te_start);
