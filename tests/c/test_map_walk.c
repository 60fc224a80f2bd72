// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnf_map_ref_read_batch on a kernel hash map and on a native one holding the same entries: walked in batches, each
 * entry comes once with its value and the walk ends with -ENOENT, then starts over; entries deleted between batches
 * never come twice, and every entry that stayed comes. Prints one line per case and exits non-zero on a failure.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xnf/control.h>
#include <xnf/internal/native_maps.h>

#define ENTRIES 5000
#define BATCH 333

struct key {
	__u32 id;
	__u8 pad[36];   /* a connection key's size */
};

struct value {
	__u64 stamp;
	__u32 id;
	__u32 spare;
};

static struct key key_of(__u32 id)
{
	struct key k = { .id = id };

	memset(k.pad, (int)(id & 0xff), sizeof(k.pad));
	return k;
}

static int fill(const struct xnf_map_ref *ref)
{
	for (__u32 id = 0; id < ENTRIES; id++) {
		struct key k = key_of(id);
		struct value v = { .stamp = (__u64)id * 7919, .id = id };

		if (xnf_map_ref_update(ref, &k, &v, BPF_NOEXIST))
			return -1;
	}
	return 0;
}

/* One whole walk: seen[id] counts each entry's arrivals; every value must be its key's. Deletes every third entry
 * of the first batch's ids when delete_some (after that batch, before the next). Returns the batches, or -1. */
static int walk_all(const struct xnf_map_ref *ref, int *seen, int delete_some, const char *label)
{
	struct key *keys = calloc(BATCH, sizeof(*keys));
	struct value *values = calloc(BATCH, sizeof(*values));
	struct xnf_map_walk walk = { 0 };
	int batches = 0, err = 0;

	while (!err && batches <= ENTRIES) {
		__u32 n = BATCH;

		err = xnf_map_ref_read_batch(ref, &walk, keys, values, &n);
		if (err && err != -ENOENT) {
			printf("%s: read_batch failed: %s\n", label, strerror(-err));
			batches = -1;
			break;
		}
		batches++;
		for (__u32 i = 0; i < n; i++) {
			if (keys[i].id >= ENTRIES || values[i].id != keys[i].id || values[i].stamp != (__u64)keys[i].id * 7919) {
				printf("%s: entry %u came with another's value\n", label, keys[i].id);
				batches = -1;
				err = -EINVAL;
				break;
			}
			seen[keys[i].id]++;
			if (delete_some && batches == 1) {
				/* the ids of this batch are known seen; delete others the walk has not reached yet */
				struct key gone = key_of((keys[i].id + ENTRIES / 2) % ENTRIES);

				if (gone.id % 3 == 0)
					xnf_map_ref_delete(ref, &gone);
			}
		}
	}
	free(keys);
	free(values);
	return batches;
}

static int check_walk(const struct xnf_map_ref *ref, const char *label)
{
	int *seen = calloc(ENTRIES, sizeof(*seen)), failures = 0, batches;
	struct key k;
	struct value v;

	batches = walk_all(ref, seen, 0, label);
	for (__u32 id = 0; batches > 0 && id < ENTRIES; id++)
		if (seen[id] != 1) {
			printf("%s: entry %u came %d times\n", label, id, seen[id]);
			failures++;
			break;
		}
	if (batches < ENTRIES / BATCH) {
		printf("%s: %d batches for %d entries of %d a batch\n", label, batches, ENTRIES, BATCH);
		failures++;
	}
	/* deletes between batches: nothing twice, all that stayed once */
	memset(seen, 0, ENTRIES * sizeof(*seen));
	if (walk_all(ref, seen, 1, label) < 0)
		failures++;
	for (__u32 id = 0; id < ENTRIES; id++) {
		int there;

		k = key_of(id);
		there = xnf_map_ref_lookup(ref, &k, &v) == 0;
		if (seen[id] > 1 || (there && seen[id] != 1)) {
			printf("%s: entry %u (%s) came %d times\n", label, id, there ? "kept" : "deleted", seen[id]);
			failures++;
			break;
		}
	}
	free(seen);
	return failures;
}

int main(void)
{
	struct xnf_map native = { .name = "walked", .type = XNF_MAP_TYPE_HASH, .key_size = sizeof(struct key),
				  .value_size = sizeof(struct value), .max_entries = ENTRIES };
	struct xnf_map_ref kernel_ref = { .name = "walked", .fd = -1, .key_size = sizeof(struct key),
					  .value_size = sizeof(struct value), .max_entries = ENTRIES };
	struct xnf_map_ref native_ref = kernel_ref;
	int passed = 0, failed = 0, fd;

	fd = bpf_map_create(BPF_MAP_TYPE_HASH, "walked", sizeof(struct key), sizeof(struct value), ENTRIES, NULL);
	if (fd < 0 || xnf_native_map_create(&native, 1)) {
		printf("cannot create the maps (%d)\n", fd);
		return 1;
	}
	kernel_ref.fd = fd;
	native_ref.native = &native;
	if (fill(&kernel_ref) || fill(&native_ref)) {
		printf("cannot fill the maps\n");
		return 1;
	}
	for (int i = 0; i < 2; i++) {
		const struct xnf_map_ref *ref = i ? &native_ref : &kernel_ref;
		const char *label = i ? "native" : "kernel";
		int failures = check_walk(ref, label);

		printf("%s: %s\n", label, failures ? "FAILED" : "ok");
		failures ? failed++ : passed++;
	}
	xnf_native_map_destroy(&native);
	close(fd);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
