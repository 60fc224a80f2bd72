// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The load balancer's session sweeper. The packet path already ignores a
 * session idle for longer than the timeout; this removes such entries so the
 * table does not fill with them. It visits at most SWEEP_BUDGET entries per
 * call (about one call a second) and goes on from there the next time, so a
 * large table never holds up the control socket for long; after a whole pass it
 * reads nothing until a session can be over.
 */
#include <stdbool.h>

#include <xnf/helpers.h>
#include <xnf/control.h>
#include <xnf/sweep_rest.h>
#include <xnf/parse.h>
#include "lb.h"

#define SWEEP_BUDGET 65536

static struct xnf_map_walk sweep_walk;
static struct xnf_sweep_rest sweep_rest;
static __u64 rested_on;   /* the idle time the rest was reckoned with: a change ends it */

static __u64 timeout_ns(const struct xnf_rules_target *maps)
{
	__u32 slot = LB_SETTING_TIMEOUT_S, seconds = 0;
	struct xnf_map_ref config;

	if (xnf_map_find(maps, "lb_config", &config) == 0)
		xnf_map_ref_lookup(&config, &slot, &seconds);
	return (__u64)(seconds ? seconds : LB_DEFAULT_TIMEOUT_S) * 1000000000ull;
}

struct sweep_clock {
	const struct xnf_map_ref *sessions;
	__u64 now, timeout;
	__u64 soonest_over;   /* of the sessions this call kept */
};

/* When a direction last in use can be over: when it is idle and so is the other direction of its session (lb.h,
 * lb_twin_key), read from the table only where the direction itself is idle. */
static __u64 session_over_at(const struct sweep_clock *c, const struct xnf_5tuple *key, const struct lb_session *s)
{
	struct lb_session twin;
	struct xnf_5tuple twin_key;

	if (!xnf_idle_past(c->now, s->last_seen_ns, c->timeout))
		return s->last_seen_ns + c->timeout;
	lb_twin_key(key, s, &twin_key);
	if (xnf_map_ref_lookup(c->sessions, &twin_key, &twin) == 0 &&
	    !xnf_idle_past(c->now, twin.last_seen_ns, c->timeout))
		return twin.last_seen_ns + c->timeout;
	return 0;   /* over now */
}

static int session_over(void *ctx, const void *key, const void *value, int live)
{
	struct sweep_clock *c = ctx;
	__u64 over_at = session_over_at(c, key, value);

	if (!over_at)
		return 1;
	xnf_sweep_kept(&c->soonest_over, over_at, live);
	return 0;
}

/* After a whole pass, it rests until a session can be over (<xnf/sweep_rest.h>). */
static void lb_sweep(const struct xnf_rules_target *maps)
{
	struct xnf_map_ref sessions;
	struct sweep_clock clock = { .sessions = &sessions, .now = xnf_now_ns(), .timeout = timeout_ns(maps),
				     .soonest_over = UINT64_MAX };
	__u32 ends = sweep_walk.ends;

	if (clock.timeout != rested_on) {
		rested_on = clock.timeout;
		xnf_sweep_rest_end(&sweep_rest);
	}
	if (xnf_map_find(maps, "lb_sessions", &sessions) || xnf_sweep_resting(&sweep_rest, &sweep_walk, clock.now))
		return;
	xnf_map_ref_sweep(&sessions, &sweep_walk, SWEEP_BUDGET, session_over, &clock);
	xnf_sweep_rest_after(&sweep_rest, &sweep_walk, ends, clock.soonest_over, clock.timeout);
}

XNF_EXPORT_HOUSEKEEPING(lb, lb_sweep);
