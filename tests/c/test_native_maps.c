// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Native maps must behave like kernel maps. For each map type, the same
 * random sequence of update/delete/lookup/get_next_key goes to a real BPF map
 * (bpf_map_create) and to the native map; every return code and value must
 * agree, and at the end both must hold the same set of entries.
 * Prints one line per map type and exits non-zero on any disagreement.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xnf/internal/native_maps.h>

#define OPS 20000

struct lpm_v4_key {
	__u32 prefixlen;
	__u8 addr[4];
};

struct case_def {
	const char *label;
	enum bpf_map_type kernel_type;
	enum xnf_map_type native_type;
	__u32 key_size, value_size, max_entries, flags;
};

static __u32 rng_state = 12345;

static __u32 rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 17;
	rng_state ^= rng_state << 5;
	return rng_state;
}

/* Keys come from a small space so that updates collide, deletes hit and maps fill. */
static void random_key(const struct case_def *c, __u8 *key)
{
	memset(key, 0, c->key_size);
	if (c->native_type == XNF_MAP_TYPE_LPM) {
		struct lpm_v4_key *k = (struct lpm_v4_key *)key;
		static const __u32 lens[] = { 0, 8, 16, 24, 25, 32, 33 };

		k->prefixlen = lens[rnd() % 7];
		k->addr[0] = 10;
		k->addr[1] = (__u8)(rnd() % 3);
		k->addr[2] = (__u8)(rnd() % 4);
		k->addr[3] = (__u8)(rnd() % 3 * 64);
		return;
	}
	if (c->native_type == XNF_MAP_TYPE_ARRAY) {
		*(__u32 *)key = rnd() % (c->max_entries + 2); /* some out of range */
		return;
	}
	for (__u32 i = 0; i < c->key_size; i++)
		key[i] = (__u8)(rnd() % 3);
}

static int check(const char *label, int op, const char *what, int kernel_rc, int native_rc)
{
	if (kernel_rc == native_rc)
		return 0;
	printf("%s: op %d (%s): kernel returned %d, native %d\n", label, op, what, kernel_rc, native_rc);
	return 1;
}

/* Walks both maps with get_next_key and compares the entry sets. */
static int compare_contents(const struct case_def *c, int fd, struct xnf_map *m)
{
	__u8 key[64], next[64], kv[64], nv[64];
	int kernel_count = 0, native_count = 0, failures = 0;
	void *prev = NULL;

	while (bpf_map_get_next_key(fd, prev, next) == 0) {
		memcpy(key, next, c->key_size);
		prev = key;
		kernel_count++;
		if (bpf_map_lookup_elem(fd, key, kv) || xnf_native_map_lookup_copy(m, key, nv) ||
		    memcmp(kv, nv, c->value_size)) {
			printf("%s: entry %d differs or is missing natively\n", c->label, kernel_count);
			failures++;
		}
	}
	prev = NULL;
	while (xnf_native_map_get_next_key(m, prev, next) == 0) {
		memcpy(key, next, c->key_size);
		prev = key;
		if (++native_count > (int)c->max_entries + 1)
			break; /* a cycle would never end */
	}
	if (kernel_count != native_count) {
		printf("%s: kernel holds %d entries, native %d\n", c->label, kernel_count, native_count);
		failures++;
	}
	return failures;
}

static int run_case(const struct case_def *c)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = c->flags);
	struct xnf_map m = {
		.name = c->label, .type = c->native_type, .key_size = c->key_size,
		.value_size = c->value_size, .max_entries = c->max_entries,
	};
	__u8 key[64], kv[64], nv[64], value[64];
	int fd, failures = 0;

	fd = bpf_map_create(c->kernel_type, c->label, c->key_size, c->value_size, c->max_entries, &opts);
	if (fd < 0 || xnf_native_map_create(&m, 1)) {
		printf("%s: cannot create the maps (%d)\n", c->label, fd);
		return 1;
	}
	for (int op = 0; op < OPS && failures < 10; op++) {
		__u64 flags = rnd() % 3; /* BPF_ANY, BPF_NOEXIST, BPF_EXIST */
		int krc, nrc;

		random_key(c, key);
		switch (rnd() % 4) {
		case 0:
		case 1:
			for (__u32 i = 0; i < c->value_size; i++)
				value[i] = (__u8)rnd();
			krc = bpf_map_update_elem(fd, key, value, flags);
			nrc = xnf_map_update(&m, key, value, flags);
			failures += check(c->label, op, "update", krc, nrc);
			break;
		case 2:
			krc = bpf_map_delete_elem(fd, key);
			nrc = xnf_map_delete(&m, key);
			failures += check(c->label, op, "delete", krc, nrc);
			break;
		default:
			krc = bpf_map_lookup_elem(fd, key, kv);
			nrc = xnf_native_map_lookup_copy(&m, key, nv);
			failures += check(c->label, op, "lookup", krc, nrc);
			if (!krc && !nrc && memcmp(kv, nv, c->value_size)) {
				printf("%s: op %d: lookup values differ\n", c->label, op);
				failures++;
			}
		}
	}
	failures += compare_contents(c, fd, &m);
	xnf_native_map_destroy(&m);
	close(fd);
	printf("%s: %s\n", c->label, failures ? "FAILED" : "ok");
	return failures ? 1 : 0;
}

int main(void)
{
	static const struct case_def cases[] = {
		{ "hash", BPF_MAP_TYPE_HASH, XNF_MAP_TYPE_HASH, 4, 12, 40, 0 },
		{ "hash_growing", BPF_MAP_TYPE_HASH, XNF_MAP_TYPE_HASH, 3, 8, 20, BPF_F_NO_PREALLOC },
		{ "array", BPF_MAP_TYPE_ARRAY, XNF_MAP_TYPE_ARRAY, 4, 16, 32, 0 },
		{ "lpm_v4", BPF_MAP_TYPE_LPM_TRIE, XNF_MAP_TYPE_LPM, sizeof(struct lpm_v4_key), 8, 50,
		  BPF_F_NO_PREALLOC },
	};
	int passed = 0, failed = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (run_case(&cases[i]))
			failed++;
		else
			passed++;
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
