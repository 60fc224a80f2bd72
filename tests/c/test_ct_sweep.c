// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The connection tracker's sweeper (xnf_ct_sweep) on a kernel table and on a native one: after a whole pass it rests
 * until the soonest an entry it saw can be over (an entry the data path could not have written, stale from the
 * start, shows that it does not look meanwhile), a change of the idle times ends the rest, and what is over then
 * goes. Prints one line per side and exits non-zero on a failure.
 */
#include <xnf/conntrack_control.h>

#include "two_sides.h"

#define TABLE_SIZE 1024
#define FRESH 100
#define SECOND 1000000000ull

static struct xnf_ct_key udp_key(__u32 n)
{
	struct xnf_ct_key k = { .family = 4, .proto = 17 };

	k.port[0] = (__be16)(1024 + n);
	k.port[1] = 53;
	k.addr[0][0] = 0x0a000001;
	k.addr[1][0] = 0x0a000002;
	return k;
}

/* A UDP stream (answered, and a frame after the answer) last seen at last_seen: its idle time is udp_stream's. */
static int put(const struct xnf_map_ref *table, __u32 n, __u64 last_seen)
{
	struct xnf_ct_key k = udp_key(n);
	struct xnf_ct_entry e = { .last_seen_ns = last_seen, .tcp_state = XNF_TCP_NONE,
				   .seen_reply = XNF_CT_REPLIED | XNF_CT_ASSURED };

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

static int check(struct side *s, const char *label)
{
	const struct xnf_map_ref *table = &s->maps[0], *timeouts = &s->maps[1];
	struct xnf_rules_target maps = side_target(s);
	struct xnf_ct_sweeper sweeper = { 0 };
	__u64 now = xnf_now_coarse_ns(), soonest = now - 25 * SECOND + 30 * SECOND;
	__u32 gone;

	set_timeouts(timeouts, 30, 30, 30);
	for (__u32 n = 0; n < FRESH; n++)
		EXPECT(put(table, n, now) == 0, "cannot fill the table");
	EXPECT(put(table, FRESH, now - 25 * SECOND) == 0, "cannot add the oldest");
	gone = xnf_ct_sweep(&maps, "t", "t_timeouts", &sweeper);
	EXPECT(gone == 0 && sweeper.walk.ends == 1, "the first pass freed %u, ended %u times", gone, sweeper.walk.ends);
	EXPECT(sweeper.rest.until_ns == soonest, "rests until %llu, the oldest is over at %llu",
	       (unsigned long long)sweeper.rest.until_ns, (unsigned long long)soonest);

	EXPECT(put(table, FRESH + 1, now - 60 * SECOND) == 0, "cannot add a stale entry");
	gone = xnf_ct_sweep(&maps, "t", "t_timeouts", &sweeper);
	EXPECT(gone == 0 && there(table, FRESH + 1) && sweeper.walk.ends == 1, "resting, it read the table");

	/* Only fresh entries left besides the stale one, over in 29 s; a connection made or closed from now on may be
	 * over 5 s after it (tcp_close): the rest must end then, not when the entries seen are over. */
	struct xnf_ct_key oldest = udp_key(FRESH);

	xnf_map_ref_delete(table, &oldest);
	set_timeouts(timeouts, 30, 29, 5);
	gone = xnf_ct_sweep(&maps, "t", "t_timeouts", &sweeper);
	EXPECT(gone == 1 && !there(table, FRESH + 1) && there(table, 0),
	       "after the idle times changed it freed %u (the stale one %s)", gone,
	       there(table, FRESH + 1) ? "stayed" : "went");
	EXPECT(sweeper.rest.until_ns == sweeper.rest.pass_began_ns + 5 * SECOND,
	       "rests until %llu, not the pass's start plus the shortest idle time, %llu",
	       (unsigned long long)sweeper.rest.until_ns,
	       (unsigned long long)(sweeper.rest.pass_began_ns + 5 * SECOND));
	return 0;
}

int main(void)
{
	static const struct side_map maps[SIDE_MAPS] = {
		{ "t", BPF_MAP_TYPE_HASH, XNF_MAP_TYPE_HASH, sizeof(struct xnf_ct_key), sizeof(struct xnf_ct_entry),
		  TABLE_SIZE },
		{ "t_timeouts", BPF_MAP_TYPE_ARRAY, XNF_MAP_TYPE_ARRAY, 4, 4, XNF_CT_NTIMEOUTS },
	};

	return run_on_both_sides(maps, check);
}
