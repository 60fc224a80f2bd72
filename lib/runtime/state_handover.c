// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --state in the AF_XDP modes: while the process runs, the NF's tables are its native maps; while no process
 * runs, they are the kernel's twins pinned in DIR/maps, and the kernel build of the same NF forwards on them
 * through the kept links. So a start or a stop hands the tables over between the two, and one of the two paths
 * carries every frame:
 *   start: copy the kernel's tables into the native ones before any worker runs; start the workers; move the
 *          kept links to the redirect program (bpf_link_update, between two frames); copy again what the kernel
 *          build added in between (only entries the workers have not made themselves);
 *   stop:  make the kernel's tables equal the native ones; take the sockets out of the redirect program's way, so
 *          that it runs the NF itself on those tables (xnf_cfg.kernel_fallback, as after a kill); let the workers
 *          finish what their rings hold; copy again what they added. No program is loaded at a stop: the one in
 *          place has the NF in it, and loading the kernel build meant verifying it again (2 s for the acl).
 * Per-CPU arrays are scratch and counters, not state: they are not carried. A flow whose first frame meets the
 * two paths within the same few microseconds may get an entry from each: the one already there is kept.
 * A killed process hands nothing over: so once its rules are in force its tables are copied to the kernel's, while
 * it runs what its workers add follows in the background (a budget of entries a second), and the redirect program,
 * finding a queue's socket gone, runs the NF itself on them (xnf_cfg.kernel_fallback) until the next start.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/membarrier.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <xnf/internal/native_maps.h>
#include <xnf/runtime/key_list.h>
#include <xnf/runtime/log.h>
#include <xnf/rules_tables.h>

#include "state_handover.h"

#define DRAIN_SAMPLE_MS 5
#define DRAIN_QUIET_SAMPLES 3
#define DRAIN_MAX_MS 2000
#define SYNC_KEY_MAX 256

enum copy_scope { COPY_ALL, COPY_ONLY_NEW };

/* What is carried: the NF's own maps that hold entries (not the glue's, not per-CPU scratch), and which generation
 * of its rules tables is in force (xnf/rules_tables.h), without which the tables would be read in the wrong one. */
static bool carried(const struct xnf_map *map)
{
	if (strcmp(map->name, XNF_RULES_GENERATION_MAP_NAME) == 0)
		return true;
	return !xnf_map_is_glue(map->name) && map->type != XNF_MAP_TYPE_PERCPU_ARRAY;
}

/* The kernel twin of a native map, its sizes checked: -1 with a message when it is not the same map. */
static int kernel_twin(const struct xnf_xdp_instance *x, const struct xnf_map *map)
{
	struct bpf_map_info info = { 0 };
	__u32 len = sizeof(info);
	int fd = bpf_object__find_map_fd_by_name(x->obj, map->name);

	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len)) {
		xnf_error("--state: the kernel build has no map %s to carry the native one's entries", map->name);
		return -1;
	}
	if (info.key_size != map->key_size || info.value_size != map->value_size) {
		xnf_error("--state: map %s has %u-byte keys and %u-byte values in the kernel build, %u and %u natively: "
			  "rebuild the NF with one SDK", map->name, info.key_size, info.value_size, map->key_size,
			  map->value_size);
		return -1;
	}
	return fd;
}

static bool is_array(const struct xnf_map *map)
{
	return map->type == XNF_MAP_TYPE_ARRAY;
}

/* Kernel -> native, one map. An array's slots all exist: only a whole copy writes them. */
static int import_map(struct xnf_map *map, int fd, enum copy_scope scope, void *key, void *next, void *value)
{
	__u64 flags = scope == COPY_ONLY_NEW ? BPF_NOEXIST : BPF_ANY;
	void *at = NULL;

	if (scope == COPY_ONLY_NEW && is_array(map))
		return 0;
	while (bpf_map_get_next_key(fd, at, next) == 0) {
		memcpy(key, next, map->key_size);
		at = key;
		if (bpf_map_lookup_elem(fd, key, value))
			continue; /* deleted meanwhile */
		int err = xnf_map_update(map, key, value, flags);

		if (err && err != -EEXIST) {
			xnf_error("--state: cannot carry an entry of map %s into user space: %s (its %u entries full?)",
				  map->name, strerror(-err), map->max_entries);
			return -1;
		}
	}
	return 0;
}

/* A growing array of keys of one size. */
static size_t sort_key_size;

static int compare_keys(const void *a, const void *b)
{
	return memcmp(a, b, sort_key_size);
}

/* The native map's keys, sorted, for an exact test of a key's presence: a lookup in an LPM map finds any prefix that
 * covers the key, not the key. key and next: buffers of a key each. */
static int sorted_native_keys(struct xnf_map *map, struct xnf_key_list *out, void *key, void *next)
{
	void *at = NULL;

	while (xnf_native_map_get_next_key(map, at, next) == 0) {
		if (xnf_key_list_push(out, next))
			return -ENOMEM;
		memcpy(key, next, map->key_size);
		at = key;
	}
	sort_key_size = map->key_size;
	qsort(out->keys, out->n, map->key_size, compare_keys);
	return 0;
}

/* The kernel's keys the native map no longer has (expired, deleted) removed: collected first, since deleting
 * while walking a hash map restarts the walk. */
static int delete_gone(struct xnf_map *map, int fd, void *key, void *value)
{
	struct xnf_key_list native = { .size = map->key_size }, gone = { .size = map->key_size };
	void *at = NULL;
	int err = sorted_native_keys(map, &native, key, value);

	while (!err && bpf_map_get_next_key(fd, at, key) == 0) {
		if (!native.n || !bsearch(key, native.keys, native.n, map->key_size, compare_keys))
			err = xnf_key_list_push(&gone, key);
		memcpy(value, key, map->key_size); /* the walk goes on from this key */
		at = value;
	}
	for (size_t i = 0; i < gone.n && !err; i++)
		bpf_map_delete_elem(fd, xnf_key_list_at(&gone, i));
	xnf_key_list_free(&native);
	xnf_key_list_free(&gone);
	return err;
}

/* Native -> kernel, one map. */
static int export_map(struct xnf_map *map, int fd, enum copy_scope scope, void *key, void *next, void *value)
{
	__u64 flags = scope == COPY_ONLY_NEW ? BPF_NOEXIST : BPF_ANY;
	void *at = NULL;

	if (scope == COPY_ONLY_NEW && is_array(map))
		return 0;
	if (scope == COPY_ALL && !is_array(map) && delete_gone(map, fd, key, value)) {
		xnf_error("--state: out of memory while carrying map %s", map->name);
		return -1;
	}
	while (xnf_native_map_get_next_key(map, at, next) == 0) {
		memcpy(key, next, map->key_size);
		at = key;
		if (xnf_native_map_lookup_copy(map, key, value))
			continue;
		if (bpf_map_update_elem(fd, key, value, flags) && errno != EEXIST) {
			xnf_error("--state: cannot carry an entry of map %s into the kernel: %s (its %u entries full?)",
				  map->name, strerror(errno), map->max_entries);
			return -1;
		}
	}
	return 0;
}

typedef int (*map_copier)(struct xnf_map *map, int fd, enum copy_scope scope, void *key, void *next, void *value);

static int copy_all_maps(const struct xnf_xdp_instance *x, map_copier copy, enum copy_scope scope)
{
	for (size_t i = 0; xnf_native_map_at(i); i++) {
		struct xnf_map *map = xnf_native_map_at(i);
		void *key, *next, *value;
		int fd, err;

		if (!carried(map))
			continue;
		fd = kernel_twin(x, map);
		if (fd < 0)
			return -1;
		key = malloc(map->key_size);
		next = malloc(map->key_size);
		value = malloc(map->value_size > map->key_size ? map->value_size : map->key_size);
		err = key && next && value ? copy(map, fd, scope, key, next, value) : -1;
		free(key);
		free(next);
		free(value);
		if (err)
			return -1;
	}
	return 0;
}

/* Where the background copy is: the map it is in, and the key it stopped after. */
static struct {
	size_t map;
	bool started;
	__u8 key[SYNC_KEY_MAX];
} sync_cursor;

static bool synced(const struct xnf_map *map)
{
	return carried(map) && map->key_size <= SYNC_KEY_MAX;
}

/* Up to budget entries of one map copied on from the cursor; what is left of the budget. */
static __u32 sync_map(struct xnf_map *map, int fd, __u32 budget)
{
	__u8 next[SYNC_KEY_MAX];
	void *value = malloc(map->value_size);
	/* While the workers run their tables are the truth (the start copied in what the kernel build had made), and
	 * an entry they refresh (a session's last-seen time) must be refreshed here too, or the fallback after a kill
	 * would find it idle since it was first copied and expire it. */
	__u64 flags = BPF_ANY;

	if (!value)
		return 0;
	while (budget && xnf_native_map_get_next_key(map, sync_cursor.started ? sync_cursor.key : NULL, next) == 0) {
		memcpy(sync_cursor.key, next, map->key_size);
		sync_cursor.started = true;
		budget--;
		/* A full kernel table takes no more: the entry is still handed over at a stop, or lost at a kill. */
		if (xnf_native_map_lookup_copy(map, next, value) == 0)
			bpf_map_update_elem(fd, next, value, flags);
	}
	free(value);
	return budget;
}

int state_sync(const struct xnf_xdp_instance *x, __u32 budget)
{
	while (budget) {
		struct xnf_map *map = xnf_native_map_at(sync_cursor.map);
		int fd;

		if (!map) {
			sync_cursor.map = 0; /* a whole pass done: the next call starts another */
			sync_cursor.started = false;
			return 0;
		}
		if (synced(map)) {
			fd = kernel_twin(x, map);
			if (fd < 0)
				return -1;
			budget = sync_map(map, fd, budget);
			if (!budget)
				return 0;
		}
		sync_cursor.map++;
		sync_cursor.started = false;
	}
	return 0;
}

int state_import(const struct xnf_xdp_instance *x, bool only_new)
{
	return copy_all_maps(x, import_map, only_new ? COPY_ONLY_NEW : COPY_ALL);
}

int state_export(const struct xnf_xdp_instance *x, bool only_new)
{
	return copy_all_maps(x, export_map, only_new ? COPY_ONLY_NEW : COPY_ALL);
}

static __u64 frames_received(const struct xnf_afxdp *a)
{
	struct xnf_afxdp_worker_stats s;
	__u64 total = 0;

	for (__u32 w = 0; w < xnf_afxdp_nworkers(a); w++) {
		xnf_afxdp_read_stats(a, w, &s);
		total += s.rx_packets;
	}
	return total;
}

static __u64 now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (__u64)t.tv_sec * 1000 + (__u64)t.tv_nsec / 1000000;
}

/* Every XDP program run that began before the call has ended, and so a frame the program that was replaced sent to a
 * socket is on its rx ring: NAPI polls run with bottom halves off, which synchronize_rcu() waits out, and
 * MEMBARRIER_CMD_GLOBAL is synchronize_rcu(). false where the kernel does not offer it (nohz_full). */
static bool programs_in_flight_ended(void)
{
	return syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) == 0;
}

/* Frames the workers have not yet handed to the kernel: waiting on an rx ring, held by a worker, or on a tx ring the
 * kernel has not taken. ~0 when a worker did not answer within a sample. */
static __u64 frames_left(struct xnf_afxdp *a)
{
	struct xnf_frame_accounting counts[XNF_MAX_WORKERS];
	__u64 left = 0;

	if (xnf_afxdp_account(a, counts, DRAIN_SAMPLE_MS))
		return ~0ull;
	for (__u32 w = 0; w < xnf_afxdp_nworkers(a); w++)
		left += counts[w].rx + counts[w].worker + counts[w].tx;
	return left;
}

/* Once the sockets are out of the program's map, what is already in their rings is still the workers' to forward:
 * wait until no program run that found a socket can add more and the workers have handed all of it to the kernel.
 * A worker starved of its core for a moment still has frames then, so a quiet spell alone is not the end; it is the
 * stand-in only for the first half, where the kernel cannot say when the runs that found a socket have ended. */
static void let_workers_drain(struct xnf_afxdp *a)
{
	struct timespec pause = { .tv_nsec = DRAIN_SAMPLE_MS * 1000000L };
	bool ended = programs_in_flight_ended();
	__u64 last = frames_received(a), left = ~0ull;
	__u64 deadline = now_ms() + DRAIN_MAX_MS;
	int quiet = 0;

	while (now_ms() < deadline) {
		left = frames_left(a);
		if (left == 0 && (ended || quiet >= DRAIN_QUIET_SAMPLES))
			return;
		nanosleep(&pause, NULL);
		__u64 received = frames_received(a);

		quiet = received == last ? quiet + 1 : 0;
		last = received;
	}
	if (left == ~0ull)
		xnf_warn("the workers did not answer within %d ms: frames still in their rings are lost with them",
			 DRAIN_MAX_MS);
	else
		xnf_warn("%llu frames still in the workers' rings after %d ms are lost with them",
			 (unsigned long long)left, DRAIN_MAX_MS);
}

int state_leave_sockets(const struct xnf_xdp_instance *x, struct xnf_afxdp *workers)
{
	struct bpf_map_info info = { 0 };
	__u32 len = sizeof(info);
	int fd = xnf_xdp_socket_map_fd(x);

	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
		return -1;
	for (__u32 key = 0; key < info.max_entries; key++)
		bpf_map_delete_elem(fd, &key);
	let_workers_drain(workers);
	return 0;
}

int state_hand_to_kernel(struct xnf_xdp_instance *x, struct xnf_afxdp *workers)
{
	return state_export(x, false) || state_leave_sockets(x, workers) || state_export(x, true) ? -1 : 0;
}
