/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A sweeper's rest, on the control side: after a whole pass over its table, a sweeper that knows when its entries
 * can be over reads nothing until the soonest one can be. That is the earlier of the soonest over-time among the
 * entries the pass found not over, and the pass's start plus the shortest idle time (for an entry made or used
 * since the pass began, which the pass may not have seen). The connection tracker's sweeper and the lb's rest so.
 *
 *   if (xnf_sweep_resting(&rest, &walk, now))
 *           return;                                    read nothing
 *   ends = walk.ends;
 *   xnf_map_ref_sweep(...);                            its `over` calls xnf_sweep_kept for what it keeps
 *   xnf_sweep_rest_after(&rest, &walk, ends, soonest, shortest_idle_ns);
 *   xnf_sweep_rest_end(&rest);                         where the idle times change
 */
#ifndef XNF_SWEEP_REST_H
#define XNF_SWEEP_REST_H

#include <stdbool.h>
#include <stdint.h>
#include <xnf/control.h>

struct xnf_sweep_rest {
	__u64 pass_began_ns;    /* when the walk under way began */
	__u64 soonest_over_ns;  /* the soonest an entry the pass has looked at can be over */
	__u64 until_ns;         /* no entry can be over before then */
};

/* Whether the sweeper rests at now; if not and a pass begins, it begins now. */
static inline bool xnf_sweep_resting(struct xnf_sweep_rest *rest, const struct xnf_map_walk *walk, __u64 now)
{
	/* Signed: times from the same clock, compared across its wrap. */
	if ((__s64)(rest->until_ns - now) > 0)
		return true;
	if (!walk->started) {
		rest->pass_began_ns = now;
		rest->soonest_over_ns = UINT64_MAX;
	}
	return false;
}

/* In a sweep's `over`, for an entry it keeps, which can be over at over_at: the soonest the rest can end. Only the
 * batch's copy counts (live 0): an entry read again live was used since the pass began, which the pass's start plus
 * the shortest idle time bounds. */
static inline void xnf_sweep_kept(__u64 *soonest_over, __u64 over_at, int live)
{
	if (!live && over_at < *soonest_over)
		*soonest_over = over_at;
}

/* After a call's sweep: soonest_seen, the soonest over-time among the entries it kept; ends_before, the walk's ends
 * before the call. Where the pass ended, the rest is set. */
static inline void xnf_sweep_rest_after(struct xnf_sweep_rest *rest, const struct xnf_map_walk *walk,
					__u32 ends_before, __u64 soonest_seen, __u64 shortest_idle_ns)
{
	__u64 made_since = rest->pass_began_ns + shortest_idle_ns;

	if (soonest_seen < rest->soonest_over_ns)
		rest->soonest_over_ns = soonest_seen;
	if (walk->ends != ends_before)
		rest->until_ns = rest->soonest_over_ns < made_since ? rest->soonest_over_ns : made_since;
}

/* What the rest was reckoned with no longer holds (the idle times changed; an entry can be over for another reason):
 * no rest now, and none after the pass under way, which read some entries before. */
static inline void xnf_sweep_rest_end(struct xnf_sweep_rest *rest)
{
	rest->until_ns = 0;
	rest->soonest_over_ns = 0;
}

#endif /* XNF_SWEEP_REST_H */
