// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The connection tracker's sweeper (xnf_ct_sweep) on a kernel table and on a native one: after a whole pass it rests
 * until the soonest an entry it saw can be over (an entry the data path could not have written, stale from the
 * start, shows that it does not look meanwhile), a change of the idle times ends the rest, and what is over then
 * goes. Prints one line per side and exits non-zero on a failure.
 */
#include <bpf/bpf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <xnf/conntrack_control.h>
#include <xnf/internal/native_maps.h>

#define TABLE_SIZE 1024
#define FRESH 100
#define SECOND 1000000000ull

struct sides {
	struct xnf_map_ref table, timeouts;
};

static int resolve(void *ctx, const char *name, struct xnf_map_ref *ref)
{
	const struct sides *s = ctx;

	if (strcmp(name, "t") == 0)
		*ref = s->table;
	else if (strcmp(name, "t_timeouts") == 0)
		*ref = s->timeouts;
	else
		return -1;
	return 0;
}

static struct xnf_ct_key udp_key(__u32 n)
{
	struct xnf_ct_key k = { .family = 4, .proto = 17 };

	k.port[0] = (__be16)(1024 + n);
	k.port[1] = 53;
	k.addr[0][0] = 0x0a000001;
	k.addr[1][0] = 0x0a000002;
	return k;
}

/* An answered UDP flow last seen at last_seen: its idle time is udp_stream's. */
static int put(const struct xnf_map_ref *table, __u32 n, __u64 last_seen)
{
	struct xnf_ct_key k = udp_key(n);
	struct xnf_ct_entry e = { .last_seen_ns = last_seen, .tcp_state = XNF_TCP_NONE, .seen_reply = 1 };

	return xnf_map_ref_update(table, &k, &e, BPF_ANY);
}

static int there(const struct xnf_map_ref *table, __u32 n)
{
	struct xnf_ct_key k = udp_key(n);
	struct xnf_ct_entry e;

	return xnf_map_ref_lookup(table, &k, &e) == 0;
}

/* Every idle time seconds, but udp_stream's and tcp_close's. */
static void set_timeouts(const struct xnf_map_ref *timeouts, __u32 seconds, __u32 udp_stream, __u32 tcp_close)
{
	for (__u32 slot = 0; slot < XNF_CT_NTIMEOUTS; slot++) {
		__u32 s = slot == XNF_CT_TIMEOUT_UDP_STREAM ? udp_stream : slot == XNF_TCP_CLOSE ? tcp_close : seconds;

		xnf_map_ref_update(timeouts, &slot, &s, BPF_ANY);
	}
}

#define EXPECT(cond, ...)                          \
	do {                                       \
		if (!(cond)) {                     \
			printf("%s: ", label);     \
			printf(__VA_ARGS__);       \
			printf("\n");              \
			return 1;                  \
		}                                  \
	} while (0)

static int check(struct sides *s, const char *label)
{
	struct xnf_rules_target maps = { .resolve = resolve, .ctx = s };
	struct xnf_ct_sweeper sweeper = { 0 };
	__u64 now = xnf_now_coarse_ns(), soonest = now - 25 * SECOND + 30 * SECOND;
	__u32 gone;

	set_timeouts(&s->timeouts, 30, 30, 30);
	for (__u32 n = 0; n < FRESH; n++)
		EXPECT(put(&s->table, n, now) == 0, "cannot fill the table");
	EXPECT(put(&s->table, FRESH, now - 25 * SECOND) == 0, "cannot add the oldest");
	gone = xnf_ct_sweep(&maps, "t", "t_timeouts", &sweeper);
	EXPECT(gone == 0 && sweeper.walk.ends == 1, "the first pass freed %u, ended %u times", gone, sweeper.walk.ends);
	EXPECT(sweeper.rest_until_ns == soonest, "rests until %llu, the oldest is over at %llu",
	       (unsigned long long)sweeper.rest_until_ns, (unsigned long long)soonest);

	EXPECT(put(&s->table, FRESH + 1, now - 60 * SECOND) == 0, "cannot add a stale entry");
	gone = xnf_ct_sweep(&maps, "t", "t_timeouts", &sweeper);
	EXPECT(gone == 0 && there(&s->table, FRESH + 1) && sweeper.walk.ends == 1, "resting, it read the table");

	/* Only fresh entries left besides the stale one, over in 29 s; a connection made or closed from now on may be
	 * over 5 s after it (tcp_close): the rest must end then, not when the entries seen are over. */
	struct xnf_ct_key oldest = udp_key(FRESH);

	xnf_map_ref_delete(&s->table, &oldest);
	set_timeouts(&s->timeouts, 30, 29, 5);
	gone = xnf_ct_sweep(&maps, "t", "t_timeouts", &sweeper);
	EXPECT(gone == 1 && !there(&s->table, FRESH + 1) && there(&s->table, 0),
	       "after the idle times changed it freed %u (the stale one %s)", gone,
	       there(&s->table, FRESH + 1) ? "stayed" : "went");
	EXPECT(sweeper.rest_until_ns == sweeper.pass_began_ns + 5 * SECOND, "rests until %llu, not the pass's start "
	       "plus the shortest idle time, %llu", (unsigned long long)sweeper.rest_until_ns,
	       (unsigned long long)(sweeper.pass_began_ns + 5 * SECOND));
	return 0;
}

int main(void)
{
	struct xnf_map native_table = { .name = "t", .type = XNF_MAP_TYPE_HASH, .key_size = sizeof(struct xnf_ct_key),
					.value_size = sizeof(struct xnf_ct_entry), .max_entries = TABLE_SIZE };
	struct xnf_map native_timeouts = { .name = "t_timeouts", .type = XNF_MAP_TYPE_ARRAY, .key_size = 4,
					   .value_size = 4, .max_entries = XNF_CT_NTIMEOUTS };
	struct sides kernel = {
		.table = { .name = "t", .key_size = sizeof(struct xnf_ct_key),
			   .value_size = sizeof(struct xnf_ct_entry), .max_entries = TABLE_SIZE },
		.timeouts = { .name = "t_timeouts", .key_size = 4, .value_size = 4, .max_entries = XNF_CT_NTIMEOUTS },
	};
	struct sides native = kernel;
	int passed = 0, failed = 0;

	kernel.table.fd = bpf_map_create(BPF_MAP_TYPE_HASH, "t", sizeof(struct xnf_ct_key),
					 sizeof(struct xnf_ct_entry), TABLE_SIZE, NULL);
	kernel.timeouts.fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "t_timeouts", 4, 4, XNF_CT_NTIMEOUTS, NULL);
	native.table.fd = native.timeouts.fd = -1;
	if (kernel.table.fd < 0 || kernel.timeouts.fd < 0 || xnf_native_map_create(&native_table, 1) ||
	    xnf_native_map_create(&native_timeouts, 1)) {
		printf("cannot create the maps\n");
		return 1;
	}
	native.table.native = &native_table;
	native.timeouts.native = &native_timeouts;
	for (int i = 0; i < 2; i++) {
		int failures = check(i ? &native : &kernel, i ? "native" : "kernel");

		printf("%s: %s\n", i ? "native" : "kernel", failures ? "FAILED" : "ok");
		failures ? failed++ : passed++;
	}
	xnf_native_map_destroy(&native_table);
	xnf_native_map_destroy(&native_timeouts);
	close(kernel.table.fd);
	close(kernel.timeouts.fd);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
