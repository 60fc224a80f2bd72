// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The load balancer's session sweeper. The packet path already ignores a
 * session idle for longer than the timeout; this removes such entries so the
 * table does not fill with them. It visits at most SWEEP_BUDGET entries per
 * call (about one call a second) and goes on from there the next time, so a
 * large table never holds up the control socket for long.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <xnf/helpers.h>
#include <xnf/control.h>
#include <xnf/parse.h>
#include "lb.h"

#define SWEEP_BUDGET 65536

static struct xnf_5tuple sweep_cursor;
static bool sweep_resumes;

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

/* Keys are collected before any is deleted: a deleted key cannot lead to the next one. */
static void lb_sweep(const struct xnf_rules_target *maps)
{
	struct xnf_5tuple *keys = malloc(SWEEP_BUDGET * sizeof(*keys));
	__u64 now = xnf_now_ns(), timeout = timeout_ns(maps);
	struct xnf_map_ref sessions;
	struct lb_session session;
	__u32 n = 0;

	if (!keys || xnf_map_find(maps, "lb_sessions", &sessions)) {
		free(keys);
		return;
	}
	while (n < SWEEP_BUDGET &&
	       xnf_map_ref_next_key(&sessions, n ? &keys[n - 1] : sweep_resumes ? &sweep_cursor : NULL, &keys[n]) == 0)
		n++;
	sweep_resumes = n == SWEEP_BUDGET;
	for (__u32 i = 0; i < n; i++) {
		if (xnf_map_ref_lookup(&sessions, &keys[i], &session) == 0 && lb_idle_for(now, &session, timeout) &&
		    !twin_in_use(&sessions, &keys[i], &session, now, timeout))
			xnf_map_ref_delete(&sessions, &keys[i]);
	}
	if (sweep_resumes)
		sweep_cursor = keys[n - 1];
	free(keys);
}

XNF_EXPORT_HOUSEKEEPING(lb, lb_sweep);
