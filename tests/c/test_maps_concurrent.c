// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Native maps updated while workers read them. Reader threads (RCU readers,
 * as AF_XDP workers are) look keys up without pause and check every value
 * they get: all its words must carry the same version, and the key's own
 * tag, so a torn write or a value freed under a reader shows up. One writer
 * replaces, deletes and re-inserts the same keys meanwhile. Built with
 * AddressSanitizer, so a use after free aborts the test.
 *
 * Prints one line per map type and "N passed, N failed".
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <xnf/internal/native_maps.h>
#include <xnf/runtime/rcu.h>

#define KEYS 64
#define WORDS 16
#define READERS 3
#define RUN_NS 1500000000ull

struct value {
	__u64 word[WORDS]; /* word[i] = tag(key) ^ version, for every i */
};

struct lpm_key {
	__u32 prefixlen;
	__u8 addr[4];
};

struct shared {
	struct xnf_map *map;
	atomic_bool stop;
	atomic_ullong reads, hits, torn;
};

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

static __u64 tag(__u32 k)
{
	return 0x9e3779b97f4a7c15ull * (k + 1);
}

static void make_key(const struct xnf_map *map, __u32 k, void *key)
{
	if (map->type == XNF_MAP_TYPE_LPM) {
		struct lpm_key *l = key;

		l->prefixlen = 24 + (k % 9); /* /24 ... /32 */
		l->addr[0] = 198;
		l->addr[1] = 18;
		l->addr[2] = (__u8)k;
		l->addr[3] = (__u8)(k * 7) & (__u8)(0xff << (32 - l->prefixlen));
		return;
	}
	memcpy(key, &k, sizeof(k));
}

static void *reader(void *arg)
{
	struct shared *sh = arg;
	unsigned long long reads = 0, hits = 0, torn = 0;
	__u8 key[sizeof(struct lpm_key)];

	xnf_rcu_register_reader();
	while (!atomic_load(&sh->stop)) {
		for (__u32 k = 0; k < KEYS; k++) {
			const struct value *v;

			make_key(sh->map, k, key);
			if (sh->map->type == XNF_MAP_TYPE_LPM)
				((struct lpm_key *)key)->prefixlen = 32;
			v = xnf_map_lookup(sh->map, key);
			reads++;
			if (!v)
				continue;
			hits++;
			for (int i = 1; i < WORDS; i++)
				torn += v->word[i] != v->word[0];
			if (sh->map->type != XNF_MAP_TYPE_LPM && (v->word[0] >> 32) != (tag(k) >> 32))
				torn++; /* another key's value: a node reused while we held it */
		}
		xnf_rcu_quiescent();
	}
	xnf_rcu_unregister_reader();
	sh->reads += reads;
	sh->hits += hits;
	sh->torn += torn;
	return NULL;
}

static void write_value(__u32 k, __u64 version, struct value *v)
{
	for (int i = 0; i < WORDS; i++)
		v->word[i] = tag(k) ^ (version & 0xffffffffull);
}

static unsigned long long writer(struct shared *sh)
{
	__u8 key[sizeof(struct lpm_key)];
	unsigned long long ops = 0;
	__u64 end = now_ns() + RUN_NS;
	struct value v;

	for (__u64 version = 1; now_ns() < end; version++) {
		__u32 k = (__u32)(version * 2654435761u) % KEYS;

		make_key(sh->map, k, key);
		write_value(k, version, &v);
		if (version % 3 == 0)
			xnf_map_delete(sh->map, key);
		else
			xnf_map_update(sh->map, key, &v, BPF_ANY);
		ops++;
	}
	return ops;
}

static int run(const char *label, enum xnf_map_type type, __u32 key_size)
{
	struct xnf_map map = {
		.name = label, .type = type, .key_size = key_size, .value_size = sizeof(struct value),
		.max_entries = KEYS,
	};
	struct shared sh = { .map = &map };
	pthread_t readers[READERS];
	unsigned long long ops;

	if (xnf_native_map_create(&map, 1)) {
		printf("%s: cannot create the map\n", label);
		return 1;
	}
	for (int i = 0; i < READERS; i++)
		pthread_create(&readers[i], NULL, reader, &sh);
	ops = writer(&sh);
	atomic_store(&sh.stop, true);
	for (int i = 0; i < READERS; i++)
		pthread_join(readers[i], NULL);
	xnf_native_map_destroy(&map);
	printf("%s: %llu writes, %llu reads (%llu hits), %llu torn or foreign values: %s\n", label, ops,
	       (unsigned long long)sh.reads, (unsigned long long)sh.hits, (unsigned long long)sh.torn,
	       sh.torn == 0 && sh.hits > 0 ? "ok" : "FAILED");
	return sh.torn == 0 && sh.hits > 0 ? 0 : 1;
}

int main(void)
{
	int failed = run("hash", XNF_MAP_TYPE_HASH, sizeof(__u32)) +
		     run("lpm", XNF_MAP_TYPE_LPM, sizeof(struct lpm_key));

	printf("%d passed, %d failed\n", 2 - failed, failed);
	return failed ? 1 : 0;
}
