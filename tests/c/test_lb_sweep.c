// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The lb's session sweeper (nfs/lb/lb_control.c) on a kernel table and on a native one: after a whole pass it rests
 * until the soonest a session can be over (a stale session added meanwhile stays: it does not look), a direction
 * whose other direction is in use stays and bounds the rest by that one's time, and a change of the idle time ends
 * the rest. Prints one line per side and exits non-zero on a failure.
 */
#include "two_sides.h"
#include "../../nfs/lb/lb_control.c"

#define TABLE_SIZE 1024
#define FRESH 100
#define SECOND 1000000000ull
#define SERVICE 0x0a0000fe
#define BACKEND 0x0a000063

/* Client n -> the service: the direction a client's first frame makes. */
static struct xnf_5tuple client_key(__u32 n)
{
	struct xnf_5tuple k = { .family = 4, .proto = 17, .sport = (__be16)(1024 + n), .dport = 53 };

	k.saddr[0] = 0x0a000001;
	k.daddr[0] = SERVICE;
	return k;
}

static int put(const struct xnf_map_ref *sessions, __u32 n, __u64 last_seen)
{
	struct xnf_5tuple k = client_key(n);
	struct lb_session s = { .port = 53, .rewrite = LB_REWRITE_DST, .last_seen_ns = last_seen };

	s.addr[0] = BACKEND;
	return xnf_map_ref_update(sessions, &k, &s, BPF_ANY);
}

/* The backend's answers to client n: the other direction of its session. */
static int put_answers(const struct xnf_map_ref *sessions, __u32 n, __u64 last_seen)
{
	struct xnf_5tuple k = client_key(n), twin;
	struct lb_session to_backend = { .port = 53, .rewrite = LB_REWRITE_DST };
	struct lb_session s = { .port = 53, .rewrite = LB_REWRITE_SRC, .last_seen_ns = last_seen };

	to_backend.addr[0] = BACKEND;
	s.addr[0] = SERVICE;
	lb_twin_key(&k, &to_backend, &twin);
	return xnf_map_ref_update(sessions, &twin, &s, BPF_ANY);
}

static int there(const struct xnf_map_ref *sessions, __u32 n)
{
	struct xnf_5tuple k = client_key(n);
	struct lb_session s;

	return xnf_map_ref_lookup(sessions, &k, &s) == 0;
}

static void set_timeout(const struct xnf_map_ref *config, __u32 seconds)
{
	__u32 slot = LB_SETTING_TIMEOUT_S;

	xnf_map_ref_update(config, &slot, &seconds, BPF_ANY);
}

static int check(struct side *s, const char *label)
{
	const struct xnf_map_ref *sessions = &s->maps[0], *config = &s->maps[1];
	struct xnf_rules_target maps = side_target(s);
	__u64 now = xnf_now_ns(), soonest = now - 20 * SECOND + 30 * SECOND;

	memset(&sweep_walk, 0, sizeof(sweep_walk));
	memset(&sweep_rest, 0, sizeof(sweep_rest));
	rested_on = 0;
	set_timeout(config, 30);
	for (__u32 n = 0; n < FRESH; n++)
		EXPECT(put(sessions, n, now) == 0, "cannot fill the table");
	/* Idle 40 s, its answers 20 s: it stays, and can be over when they are, in 10 s. */
	EXPECT(put(sessions, FRESH, now - 40 * SECOND) == 0 && put_answers(sessions, FRESH, now - 20 * SECOND) == 0,
	       "cannot add the half-idle session");
	lb_sweep(&maps);
	EXPECT(sweep_walk.ends == 1 && there(sessions, FRESH), "the first pass ended %u times, the idle direction %s",
	       sweep_walk.ends, there(sessions, FRESH) ? "stayed" : "went");
	EXPECT(sweep_rest.until_ns == soonest, "rests until %llu, the answers are over at %llu",
	       (unsigned long long)sweep_rest.until_ns, (unsigned long long)soonest);

	EXPECT(put(sessions, FRESH + 1, now - 60 * SECOND) == 0, "cannot add a stale session");
	lb_sweep(&maps);
	EXPECT(there(sessions, FRESH + 1) && sweep_walk.ends == 1, "resting, it read the table");

	set_timeout(config, 50);
	lb_sweep(&maps);
	EXPECT(!there(sessions, FRESH + 1) && there(sessions, FRESH) && there(sessions, 0),
	       "after the idle time changed the stale session %s, the half-idle one %s",
	       there(sessions, FRESH + 1) ? "stayed" : "went", there(sessions, FRESH) ? "stayed" : "went");
	return 0;
}

int main(void)
{
	static const struct side_map maps[SIDE_MAPS] = {
		{ "lb_sessions", BPF_MAP_TYPE_HASH, XNF_MAP_TYPE_HASH, sizeof(struct xnf_5tuple),
		  sizeof(struct lb_session), TABLE_SIZE },
		{ "lb_config", BPF_MAP_TYPE_ARRAY, XNF_MAP_TYPE_ARRAY, 4, 4, LB_NSETTINGS },
	};

	return run_on_both_sides(maps, check);
}
