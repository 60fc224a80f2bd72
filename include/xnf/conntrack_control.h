/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The control side of connection tracking (<xnf/conntrack.h>): the rule words an NF with a table takes for its
 * states and idle times, and the sweeper its housekeeping step calls.
 *
 *   state new,established            xnf_ct_parse_states / xnf_ct_format_states
 *   timeout tcp_established 3600     xnf_ct_parse_timeout / xnf_ct_format_timeout (netfilter's names: tcp_STATE
 *                                    for nf_conntrack_tcp_timeout_STATE, udp, udp_stream, icmp, generic)
 *   conntrack liberal                xnf_ct_parse_setting (TCP windows unchecked: nf_conntrack_tcp_be_liberal=1)
 */
#ifndef XNF_CONNTRACK_CONTROL_H
#define XNF_CONNTRACK_CONTROL_H

#include <stddef.h>

#include <xnf/control.h>
#include <xnf/conntrack.h>
#include <xnf/sweep_rest.h>

#define XNF_CT_MAX_TIMEOUT_S 31536000  /* a year: a longer idle time is a typo */

/* A comma-separated list of new, established, related, invalid, untracked, each once. 0, or -1 with why. */
int xnf_ct_parse_states(const char *list, __u8 *mask, char *err, size_t errlen);
/* The list for mask, as parse takes it. */
void xnf_ct_format_states(__u8 mask, char *out, size_t outlen);

/* "timeout NAME SECONDS" (words[0] is "timeout") into the slot of map timeouts_map. 0, or -1 with why. */
int xnf_ct_parse_timeout(const char *timeouts_map, char **words, int n, struct xnf_rule_entry *entry, char *err,
			 size_t errlen);
/* "conntrack liberal" (words[0] is "conntrack"): TCP windows not checked for connections opened from now on, into
 * the timeouts map's setting slot. 0, or -1 with why. */
int xnf_ct_parse_setting(const char *timeouts_map, char **words, int n, struct xnf_rule_entry *entry, char *err,
			 size_t errlen);
/* The rule line of a timeouts slot (or the setting's); -1 for a slot at its default (zero). */
int xnf_ct_format_timeout(const void *key, const void *value, char *out, size_t outlen);

/* Where a sweep goes on from (the sweeper visits a budget of entries per call), and until when it may rest. */
struct xnf_ct_sweeper {
	struct xnf_map_walk walk;
	struct xnf_sweep_rest rest;        /* calls until rest.until_ns read nothing (<xnf/sweep_rest.h>) */
	__u64 rested_on[XNF_CT_NTIMEOUTS]; /* the idle times (ns) the rest was reckoned with: a change ends it */
};

/*
 * Frees up to a budget of entries of table that are over (idle past their state's time). Returns how many. After a
 * whole pass over the table it rests until the soonest any entry can be over: what it saw plus its idle time, or,
 * for an entry made or changed since the pass began, the pass's start plus the shortest idle time. A full table of
 * connections not about to be over (a flood's, 120 s in SYN_SENT) is then read a pass every shortest idle time.
 */
__u32 xnf_ct_sweep(const struct xnf_rules_target *maps, const char *table, const char *timeouts_map,
		   struct xnf_ct_sweeper *sweeper);

#endif
