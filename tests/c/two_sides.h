/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A test of control-side code over two maps, run on kernel maps and then on native ones with the same checks: the
 * code under test finds the maps by name (side_target), a failed EXPECT prints the side and why, and
 * run_on_both_sides prints "kernel: ok", "native: ok" and the tally the Python runner reads.
 */
#ifndef XNF_TEST_TWO_SIDES_H
#define XNF_TEST_TWO_SIDES_H

#include <bpf/bpf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <xnf/control.h>
#include <xnf/internal/native_maps.h>

/* How many maps a test needs: 2 unless it says otherwise before including this. */
#ifndef SIDE_MAPS
#define SIDE_MAPS 2
#endif

/* One map the test needs, as each side makes it. */
struct side_map {
	const char *name;
	enum bpf_map_type kernel_type;
	enum xnf_map_type native_type;
	__u32 key_size, value_size, max_entries;
};

struct side {
	const struct side_map *specs;
	struct xnf_map_ref maps[SIDE_MAPS];
};

static int side_resolve(void *ctx, const char *name, struct xnf_map_ref *ref)
{
	const struct side *s = ctx;

	for (int i = 0; i < SIDE_MAPS; i++) {
		if (strcmp(name, s->specs[i].name) == 0) {
			*ref = s->maps[i];
			return 0;
		}
	}
	return -1;
}

/* The side's maps by name, as an NF's control code is handed them. */
static inline struct xnf_rules_target side_target(struct side *s)
{
	return (struct xnf_rules_target){ .resolve = side_resolve, .ctx = s };
}

/* In a check(side, label): ends it, failed, with a line that names the side. */
#define EXPECT(cond, ...)                          \
	do {                                       \
		if (!(cond)) {                     \
			printf("%s: ", label);     \
			printf(__VA_ARGS__);       \
			printf("\n");              \
			return 1;                  \
		}                                  \
	} while (0)

/* Runs check on fresh kernel maps, then on fresh native ones; main's exit code. */
static int run_on_both_sides(const struct side_map specs[SIDE_MAPS], int (*check)(struct side *s, const char *label))
{
	struct xnf_map native[SIDE_MAPS];
	struct side kernel = { .specs = specs }, user = { .specs = specs };
	int passed = 0, failed = 0;

	for (int i = 0; i < SIDE_MAPS; i++) {
		const struct side_map *m = &specs[i];

		native[i] = (struct xnf_map){ .name = m->name, .type = m->native_type, .key_size = m->key_size,
					      .value_size = m->value_size, .max_entries = m->max_entries };
		kernel.maps[i] = (struct xnf_map_ref){ .name = m->name, .fd = -1, .key_size = m->key_size,
						       .value_size = m->value_size, .max_entries = m->max_entries };
		user.maps[i] = kernel.maps[i];
		user.maps[i].native = &native[i];
		kernel.maps[i].fd = bpf_map_create(m->kernel_type, m->name, m->key_size, m->value_size, m->max_entries,
						   NULL);
		if (kernel.maps[i].fd < 0 || xnf_native_map_create(&native[i], 1)) {
			printf("cannot create the map %s\n", m->name);
			return 1;
		}
	}
	for (int i = 0; i < 2; i++) {
		int failures = check(i ? &user : &kernel, i ? "native" : "kernel");

		printf("%s: %s\n", i ? "native" : "kernel", failures ? "FAILED" : "ok");
		failures ? failed++ : passed++;
	}
	for (int i = 0; i < SIDE_MAPS; i++) {
		xnf_native_map_destroy(&native[i]);
		close(kernel.maps[i].fd);
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}

#endif
