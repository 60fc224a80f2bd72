// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The load balancer's session sweeper. The packet path already ignores a
 * session idle for longer than the timeout; this removes such entries so the
 * table does not fill with them. It visits at most SWEEP_BUDGET entries per
 * call (about one call a second) and goes on from there the next time, so a
 * large table never holds up the control socket for long.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

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

/* Whether the session of key is idle now and its twin too: read again before it goes, since the packet path may have
 * used it after the batch was read. */
static bool over(const struct xnf_map_ref *sessions, const struct xnf_5tuple *key, const struct lb_session *session,
		 __u64 now, __u64 timeout)
{
	return lb_idle_for(now, session, timeout) && !twin_in_use(sessions, key, session, now, timeout);
}

/* The sessions come in one batch with their values (xnf_map_ref_read_batch): one call a sweep, not two per entry. */
static void lb_sweep(const struct xnf_rules_target *maps)
{
	struct xnf_5tuple *keys = malloc(SWEEP_BUDGET * sizeof(*keys));
	struct lb_session *values = malloc(SWEEP_BUDGET * sizeof(*values)), session;
	__u64 now = xnf_now_ns(), timeout = timeout_ns(maps);
	struct xnf_map_ref sessions;
	__u32 n = SWEEP_BUDGET;
	int err;

	if (!keys || !values || xnf_map_find(maps, "lb_sessions", &sessions)) {
		free(keys);
		free(values);
		return;
	}
	err = xnf_map_ref_read_batch(&sessions, &sweep_walk, keys, values, &n);
	for (__u32 i = 0; (err == 0 || err == -ENOENT) && i < n; i++) {
		if (over(&sessions, &keys[i], &values[i], now, timeout) &&
		    xnf_map_ref_lookup(&sessions, &keys[i], &session) == 0 && over(&sessions, &keys[i], &session, now, timeout))
			xnf_map_ref_delete(&sessions, &keys[i]);
	}
	free(keys);
	free(values);
}

XNF_EXPORT_HOUSEKEEPING(lb, lb_sweep);
