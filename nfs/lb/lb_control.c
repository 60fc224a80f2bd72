// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The load balancer's session sweeper. The packet path already ignores a
 * session idle for longer than the timeout; this removes such entries so the
 * table does not fill with them. It visits at most SWEEP_BUDGET entries per
 * call (about one call a second) and goes on from there the next time, so a
 * large table never holds up the control socket for long.
 */
#include <stdbool.h>

#include <xnf/helpers.h>
#include <xnf/control.h>
#include <xnf/parse.h>
#include "lb.h"

#define SWEEP_BUDGET 65536

static struct xnf_map_walk sweep_walk;

static __u64 timeout_ns(const struct xnf_rules_target *maps)
{
	__u32 slot = LB_SETTING_TIMEOUT_S, seconds = 0;
	struct xnf_map_ref config;

	if (xnf_map_find(maps, "lb_config", &config) == 0)
		xnf_map_ref_lookup(&config, &slot, &seconds);
	return (__u64)(seconds ? seconds : LB_DEFAULT_TIMEOUT_S) * 1000000000ull;
}

/* A direction stays while the other direction of its session is in use (lb.h, lb_twin_key). */
static bool twin_in_use(const struct xnf_map_ref *sessions, const struct xnf_5tuple *key,
			const struct lb_session *session, __u64 now, __u64 timeout)
{
	struct lb_session twin;
	struct xnf_5tuple twin_key;

	lb_twin_key(key, session, &twin_key);
	return xnf_map_ref_lookup(sessions, &twin_key, &twin) == 0 && !lb_idle_for(now, &twin, timeout);
}

struct sweep_clock {
	const struct xnf_map_ref *sessions;
	__u64 now, timeout;
};

/* Idle, and its twin too (read from the table each time). */
static int session_over(void *ctx, const void *key, const void *value, int live)
{
	const struct sweep_clock *c = ctx;

	(void)live;
	return lb_idle_for(c->now, value, c->timeout) && !twin_in_use(c->sessions, key, value, c->now, c->timeout);
}

static void lb_sweep(const struct xnf_rules_target *maps)
{
	struct xnf_map_ref sessions;
	struct sweep_clock clock = { .sessions = &sessions, .now = xnf_now_ns(), .timeout = timeout_ns(maps) };

	if (xnf_map_find(maps, "lb_sessions", &sessions) == 0)
		xnf_map_ref_sweep(&sessions, &sweep_walk, SWEEP_BUDGET, session_over, &clock);
}

XNF_EXPORT_HOUSEKEEPING(lb, lb_sweep);
