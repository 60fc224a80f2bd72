// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <xnf/runtime/rules_generations.h>
#include <xnf/runtime/key_list.h>
#include <xnf/runtime/rcu.h>
#include <xnf/rules.h>
#include <xnf/rules_tables.h>

#include <errno.h>
#include <linux/membarrier.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Where the kernel cannot wait for a grace period (membarrier refused: nohz_full, a seccomp filter), the time
 * after which no program can still be running a frame: a BPF program cannot sleep and is bounded in length. */
#define GRACE_WITHOUT_MEMBARRIER_NS 50000000L

#define MAX_TABLES 64

static int read_generation(const struct xnf_rules_target *sides, __u32 *generation)
{
	struct xnf_map_ref ref;
	__u32 zero = 0;

	if (xnf_map_find(sides, XNF_RULES_GENERATION_MAP_NAME, &ref))
		return -ENOENT;
	if (xnf_map_ref_lookup(&ref, &zero, generation))
		*generation = 0;
	*generation &= 1;
	return 0;
}

int xnf_rules_second_name(const char *name, char *out, size_t len)
{
	return (size_t)snprintf(out, len, "%s%s", name, XNF_RULES_SECOND_GENERATION_SUFFIX) < len ? 0 : -ENAMETOOLONG;
}

/* The second generation of the table called name, if name is a rules table. */
static int resolve_second(const struct xnf_rules_target *sides, const char *name, struct xnf_map_ref *ref)
{
	char second[128];

	if (xnf_rules_second_name(name, second, sizeof(second)))
		return -ENOENT;
	return xnf_map_find(sides, second, ref);
}

static int resolve_in_view(void *ctx, const char *name, struct xnf_map_ref *ref)
{
	const struct xnf_rules_view *view = ctx;
	__u32 generation;

	if (read_generation(&view->sides, &generation) == 0 && (generation ^ view->staging) == 1 &&
	    resolve_second(&view->sides, name, ref) == 0) {
		ref->name = name; /* one table, one name: listings and codecs know it by its first (the caller's) */
		return 0;
	}
	return xnf_map_find(&view->sides, name, ref);
}

bool xnf_rules_same_table(const char *map, const char *name)
{
	size_t len = strlen(name);

	return strncmp(map, name, len) == 0 &&
	       (map[len] == '\0' || strcmp(map + len, XNF_RULES_SECOND_GENERATION_SUFFIX) == 0);
}

struct xnf_rules_target xnf_rules_view_target(struct xnf_rules_view *view)
{
	return (struct xnf_rules_target){ .resolve = resolve_in_view, .ctx = view };
}

/* The rules tables of the NF: the maps its codec names that have a second generation. */
static int find_tables(const struct xnf_rules_target *sides, const char *names[MAX_TABLES])
{
	struct xnf_map_ref ref;
	int n = 0;

	for (const char *const *name = xnf_nf_rules ? xnf_nf_rules->maps : NULL; name && *name; name++) {
		if (resolve_second(sides, *name, &ref) == 0 && n < MAX_TABLES)
			names[n++] = *name;
	}
	return n;
}

/* Every key of ref, read before any is changed. 0, or -ENOMEM. */
static int all_keys(const struct xnf_map_ref *ref, struct xnf_key_list *keys)
{
	const void *at = NULL;
	__u8 next[XNF_RULE_MAX_KEY];

	if (ref->key_size > sizeof(next))
		return -E2BIG;
	while (xnf_map_ref_next_key(ref, at, next) == 0) {
		if (xnf_key_list_push(keys, next))
			return -ENOMEM;
		at = xnf_key_list_at(keys, keys->n - 1);
	}
	return 0;
}

static int empty_table(const struct xnf_map_ref *ref)
{
	struct xnf_key_list keys = { .size = ref->key_size };
	int rc = all_keys(ref, &keys);

	for (size_t i = 0; rc == 0 && i < keys.n; i++)
		xnf_map_ref_delete(ref, xnf_key_list_at(&keys, i));
	xnf_key_list_free(&keys);
	return rc;
}

static int copy_table(const struct xnf_map_ref *from, const struct xnf_map_ref *to)
{
	struct xnf_key_list keys = { .size = from->key_size };
	void *value = malloc(from->value_size);
	int rc = value ? all_keys(from, &keys) : -ENOMEM;

	for (size_t i = 0; rc == 0 && i < keys.n; i++) {
		const void *key = xnf_key_list_at(&keys, i);

		if (xnf_map_ref_lookup(from, key, value) == 0)
			rc = xnf_map_ref_update(to, key, value, BPF_ANY);
	}
	xnf_key_list_free(&keys);
	free(value);
	return rc;
}

/* The tables of the given view, by their first names, as refs. */
static int view_refs(struct xnf_rules_view *view, const char *const *names, int n, struct xnf_map_ref *refs)
{
	struct xnf_rules_target target = xnf_rules_view_target(view);

	for (int i = 0; i < n; i++) {
		if (xnf_map_find(&target, names[i], &refs[i]))
			return -ENOENT;
	}
	return 0;
}

static int empty_tables(const struct xnf_map_ref *refs, int n)
{
	for (int i = 0; i < n; i++) {
		int rc = empty_table(&refs[i]);

		if (rc)
			return rc;
	}
	return 0;
}

static int write_generation(const struct xnf_rules_view *view, __u32 generation)
{
	struct xnf_map_ref ref;
	__u32 zero = 0;
	int rc = xnf_map_find(&view->sides, XNF_RULES_GENERATION_MAP_NAME, &ref);

	if (rc == 0)
		rc = xnf_map_ref_update(&ref, &zero, &generation, BPF_ANY);
	if (rc == 0 && view->user_side && view->user_side(NULL, XNF_RULES_GENERATION_MAP_NAME, &ref) == 0)
		rc = xnf_map_ref_update(&ref, &zero, &generation, BPF_ANY);
	return rc;
}

/* Returns once no frame that started before the call can still be running: in the kernel (a BPF program runs a
 * frame inside an RCU read-side section, which membarrier's global command waits out with synchronize_rcu) and
 * among the workers (their quiescent states). */
static void wait_for_frames_in_flight(void)
{
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) != 0) {
		struct timespec grace = { .tv_nsec = GRACE_WITHOUT_MEMBARRIER_NS };

		while (nanosleep(&grace, &grace) != 0 && errno == EINTR)
			;
	}
	xnf_rcu_synchronize();
}

static int change_in_staging(struct xnf_rules_view *view, xnf_rules_change_fn change, void *arg, char *err,
			     size_t errlen)
{
	const char *names[MAX_TABLES];
	struct xnf_map_ref in_force[MAX_TABLES], staging[MAX_TABLES];
	struct xnf_rules_view staged = *view;
	struct xnf_rules_target staged_target;
	__u32 generation;
	int n = find_tables(&view->sides, names), rc;

	staged.staging = true;
	staged_target = xnf_rules_view_target(&staged);
	if (read_generation(&view->sides, &generation) || view_refs(view, names, n, in_force) ||
	    view_refs(&staged, names, n, staging)) {
		snprintf(err, errlen, "the NF's rules tables are not all there (codec and NF disagree)");
		return -1;
	}
	for (int i = 0; i < n; i++) {
		rc = empty_table(&staging[i]);
		if (rc == 0)
			rc = copy_table(&in_force[i], &staging[i]);
		if (rc) {
			empty_tables(staging, n);
			snprintf(err, errlen, "cannot copy the rules in force to change them: %s (table '%s')",
				 strerror(-rc), names[i]);
			return -1;
		}
	}
	rc = change(&staged_target, arg, err, errlen);
	if (rc < 0) {
		empty_tables(staging, n);
		return rc;
	}
	if (write_generation(view, generation ^ 1)) {
		empty_tables(staging, n);
		snprintf(err, errlen, "cannot put the new rules in force; the rules in force are unchanged");
		return -1;
	}
	wait_for_frames_in_flight();
	empty_tables(in_force, n);
	return rc;
}

int xnf_rules_change_whole(const struct xnf_rules_target *target, xnf_rules_change_fn change, void *arg, char *err,
			   size_t errlen)
{
	struct xnf_rules_view *view = target->resolve == resolve_in_view ? target->ctx : NULL;
	__u32 generation;

	if (!view || view->staging || read_generation(&view->sides, &generation))
		return change(target, arg, err, errlen);
	return change_in_staging(view, change, arg, err, errlen);
}
