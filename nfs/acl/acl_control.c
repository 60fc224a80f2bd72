// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The acl's control steps: its classifier compiler and its connection table's sweeper.
 *
 * The classifier compiler (acl.h): after every change of the rules it clears the generation not in force
 * (the one put out of force by the change before: packets that read it finished long since, a change being at
 * least a control request apart), compiles acl_rules into its tuples and entries, and puts it in force with one
 * write.
 *
 * A rule becomes one entry per combination of its families (both when it names no prefix) and of the aligned
 * blocks its port ranges split into (a range of ports is at most 30 blocks of 2^k ports); each combination's
 * masks are a tuple. Where rules give the same masked key, the lowest sequence number keeps it: a packet that
 * matches that key matches all of them, and the first wins. The tuples go in order of the best rule they hold, so
 * that a packet's search stops at the first tuple that cannot beat what it found.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xnf/control.h>
#include <xnf/conntrack_control.h>
#include <xnf/parse.h>
#include "acl.h"

#define MAX_BLOCKS 32

struct port_block {
	__u16 base;
	__u8 len;   /* high bits that count */
};

struct compiled {
	struct acl_key *keys;
	struct acl_entry *entries;
	size_t count, cap;
	struct acl_tuple tuples[ACL_MAX_TUPLES];
	__u32 ntuples;
	__u32 generation;
	__u32 tracks;   /* some rule names a connection state */
	__u32 steady_below;   /* the first rule that reads TCP flags or VLAN tags (acl_steady_below's, acl.h) */
};

struct acl_maps {
	struct xnf_map_ref rules, entries, tuples, config, steady_below;
};

/* [lo, hi] as the fewest aligned blocks (a trie's cover of the range). */
static int port_blocks(__u16 lo, __u16 hi, struct port_block *out)
{
	__u32 at = lo, end = (__u32)hi + 1;
	int n = 0;

	while (at < end && n < MAX_BLOCKS) {
		int size = 16;

		while (size > 0 && ((at & ((1u << size) - 1)) || at + (1u << size) > end))
			size--;
		out[n].base = (__u16)at;
		out[n].len = (__u8)(16 - size);
		n++;
		at += 1u << size;
	}
	return n;
}

static int tuple_of(struct compiled *c, const struct acl_tuple *shape, char *err, size_t errlen)
{
	for (__u32 i = 0; i < c->ntuples; i++) {
		const struct acl_tuple *t = &c->tuples[i];

		if (t->family == shape->family && t->proto_counts == shape->proto_counts && t->src_len == shape->src_len &&
		    t->dst_len == shape->dst_len && t->sport_len == shape->sport_len && t->dport_len == shape->dport_len &&
		    t->flags_mask == shape->flags_mask && t->ct_counts == shape->ct_counts &&
		    t->vlan_depth == shape->vlan_depth)
			return (int)i;
	}
	if (c->ntuples == ACL_MAX_TUPLES) {
		snprintf(err, errlen, "the rules have more than %d shapes (families, prefix lengths, port blocks, "
			 "flags): merge some ranges or prefixes", ACL_MAX_TUPLES);
		return -1;
	}
	c->tuples[c->ntuples] = *shape;
	c->tuples[c->ntuples].best_seq = 0xffffffffu;
	return (int)c->ntuples++;
}

static int add_entry(struct compiled *c, const struct acl_key *key, __u32 seq, __u32 action, char *err, size_t errlen)
{
	if (c->count == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 4096;
		struct acl_key *keys = realloc(c->keys, cap * sizeof(*keys));
		struct acl_entry *entries = keys ? realloc(c->entries, cap * sizeof(*entries)) : NULL;

		if (keys)
			c->keys = keys;
		if (!entries) {
			snprintf(err, errlen, "out of memory compiling the rules");
			return -1;
		}
		c->entries = entries;
		c->cap = cap;
	}
	if (c->count >= ACL_MAX_ENTRIES / ACL_GENERATIONS) {
		snprintf(err, errlen, "the rules compile to more than %u entries (their port ranges split into many "
			 "blocks): use fewer or wider ranges", ACL_MAX_ENTRIES / ACL_GENERATIONS);
		return -1;
	}
	c->keys[c->count] = *key;
	c->entries[c->count] = (struct acl_entry){ .seq = seq, .action = action };
	c->count++;
	return 0;
}

/* One (family, source port block, destination port block, connection state) of a rule. */
static int add_combination(struct compiled *c, __u32 seq, const struct acl_rule *r, __u8 family,
			   const struct port_block *sp, const struct port_block *dp, __u8 ct_state, char *err,
			   size_t errlen)
{
	struct acl_tuple shape = {
		.family = family, .proto_counts = r->proto != 0, .src_len = r->src_len, .dst_len = r->dst_len,
		.sport_len = sp->len, .dport_len = dp->len, .flags_mask = r->flags_mask, .ct_counts = ct_state != 0,
		.vlan_depth = (__u8)(r->vlan[1] ? 2 : r->vlan[0] ? 1 : 0),
	};
	int t = tuple_of(c, &shape, err, errlen);
	struct acl_key key = { 0 };

	if (t < 0)
		return -1;
	if (seq < c->tuples[t].best_seq)
		c->tuples[t].best_seq = seq;
	key.tuple = (__u16)(c->generation * ACL_MAX_TUPLES + (__u32)t);
	key.family = family;
	key.proto = r->proto;
	key.flags = r->flags & r->flags_mask;
	key.ct_state = ct_state;
	key.vlan[0] = r->vlan[0];
	key.vlan[1] = r->vlan[1];
	key.sport = sp->base;
	key.dport = dp->base;
	if (family == r->family) {   /* a rule of either family has no prefixes: all-zero addresses */
		memcpy(key.src, r->src, sizeof(key.src));
		memcpy(key.dst, r->dst, sizeof(key.dst));
	}
	return add_entry(c, &key, seq, r->action, err, errlen);
}

/* A rule of several states is one entry per state: a frame has one. */
static int add_states(struct compiled *c, __u32 seq, const struct acl_rule *r, __u8 family,
		      const struct port_block *sp, const struct port_block *dp, char *err, size_t errlen)
{
	if (!r->ct_states)
		return add_combination(c, seq, r, family, sp, dp, 0, err, errlen);
	for (int bit = 0; bit < XNF_CT_STATES; bit++) {
		if ((r->ct_states & (1u << bit)) &&
		    add_combination(c, seq, r, family, sp, dp, (__u8)(1u << bit), err, errlen))
			return -1;
	}
	return 0;
}

static int compile_rule(struct compiled *c, __u32 seq, const struct acl_rule *r, char *err, size_t errlen)
{
	struct port_block sports[MAX_BLOCKS], dports[MAX_BLOCKS];
	int ns = port_blocks(r->sport_lo, r->sport_hi, sports), nd = port_blocks(r->dport_lo, r->dport_hi, dports);

	for (__u8 family = 4; family <= 6; family += 2) {
		if (r->family && r->family != family)
			continue;
		if ((r->proto == IPPROTO_ICMP && family == 6) || (r->proto == IPPROTO_ICMPV6 && family == 4))
			continue;
		for (int i = 0; i < ns; i++) {
			for (int j = 0; j < nd; j++) {
				if (add_states(c, seq, r, family, &sports[i], &dports[j], err, errlen))
					return -1;
			}
		}
	}
	return 0;
}

struct numbered_rule {
	__u32 seq;
	struct acl_rule rule;
};

static int by_seq(const void *a, const void *b)
{
	__u32 x = ((const struct numbered_rule *)a)->seq, y = ((const struct numbered_rule *)b)->seq;

	return x < y ? -1 : x > y;
}

/* Every rule, lowest sequence number first. */
static struct numbered_rule *read_rules(const struct xnf_map_ref *rules, size_t *count, char *err, size_t errlen)
{
	struct numbered_rule *out = NULL;
	struct acl_rule_key key, next;
	size_t n = 0, cap = 0;
	int more = xnf_map_ref_next_key(rules, NULL, &next) == 0;

	while (more) {
		key = next;
		if (n == cap) {
			struct numbered_rule *grown = realloc(out, (cap = cap ? 2 * cap : 1024) * sizeof(*out));

			if (!grown) {
				free(out);
				snprintf(err, errlen, "out of memory reading the rules");
				return NULL;
			}
			out = grown;
		}
		if (xnf_map_ref_lookup(rules, &key, &out[n].rule) == 0)
			out[n++].seq = key.seq;
		more = xnf_map_ref_next_key(rules, &key, &next) == 0;
	}
	qsort(out, n, sizeof(*out), by_seq);
	*count = n;
	return out ? out : calloc(1, sizeof(*out));
}

/* A tuple and where it was before the sort. */
struct placed_tuple {
	struct acl_tuple tuple;
	__u16 was;
};

static int by_best_seq(const void *a, const void *b)
{
	__u32 x = ((const struct placed_tuple *)a)->tuple.best_seq, y = ((const struct placed_tuple *)b)->tuple.best_seq;

	return x < y ? -1 : x > y;
}

/* The tuples in order of their best rule, and every key renumbered to its tuple's new place. */
static void order_tuples(struct compiled *c)
{
	__u16 place[ACL_MAX_TUPLES];
	struct placed_tuple sorted[ACL_MAX_TUPLES];
	__u32 base = c->generation * ACL_MAX_TUPLES;

	for (__u32 i = 0; i < c->ntuples; i++)
		sorted[i] = (struct placed_tuple){ .tuple = c->tuples[i], .was = (__u16)i };
	qsort(sorted, c->ntuples, sizeof(sorted[0]), by_best_seq);
	for (__u32 i = 0; i < c->ntuples; i++) {
		place[sorted[i].was] = (__u16)i;
		c->tuples[i] = sorted[i].tuple;
	}
	for (size_t k = 0; k < c->count; k++)
		c->keys[k].tuple = (__u16)(base + place[c->keys[k].tuple - base]);
}

static int find_maps(const struct xnf_rules_target *maps, struct acl_maps *m, char *err, size_t errlen)
{
	if (xnf_map_find(maps, "acl_rules", &m->rules) || xnf_map_find(maps, "acl_entries", &m->entries) ||
	    xnf_map_find(maps, "acl_tuples", &m->tuples) || xnf_map_find(maps, "acl_config", &m->config) ||
	    xnf_map_find(maps, "acl_steady_below", &m->steady_below)) {
		snprintf(err, errlen, "the acl's maps are missing");
		return -1;
	}
	return 0;
}

static __u32 setting(const struct acl_maps *m, __u32 slot)
{
	__u32 value = 0;

	xnf_map_ref_lookup(&m->config, &slot, &value);
	return value;
}

static int set(const struct acl_maps *m, __u32 slot, __u32 value)
{
	return xnf_map_ref_update(&m->config, &slot, &value, BPF_ANY);
}

/* Deletes every entry of the generation given: the one put out of force by the change before, or a failed
 * compile's. */
static void clear_generation(const struct acl_maps *m, __u32 generation)
{
	struct acl_key key, next, *doomed = NULL;
	size_t n = 0, cap = 0;
	int more = xnf_map_ref_next_key(&m->entries, NULL, &next) == 0;

	/* Keys first, deletes after: a deleted key cannot lead to the next one. */
	while (more) {
		key = next;
		if (key.tuple / ACL_MAX_TUPLES == generation) {
			if (n == cap) {
				struct acl_key *grown = realloc(doomed, (cap = cap ? 2 * cap : 4096) * sizeof(key));

				if (!grown)
					break;
				doomed = grown;
			}
			doomed[n++] = key;
		}
		more = xnf_map_ref_next_key(&m->entries, &key, &next) == 0;
	}
	for (size_t i = 0; i < n; i++)
		xnf_map_ref_delete(&m->entries, &doomed[i]);
	free(doomed);
}

static int by_key_then_seq(const void *a, const void *b, void *ctx)
{
	const struct compiled *c = ctx;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	int order = memcmp(&c->keys[i], &c->keys[j], sizeof(struct acl_key));

	if (order)
		return order;
	return c->entries[i].seq < c->entries[j].seq ? -1 : c->entries[i].seq > c->entries[j].seq;
}

/* Writes the generation's entries, one per key, the lowest sequence number's. */
static int write_entries(const struct acl_maps *m, struct compiled *c, char *err, size_t errlen)
{
	size_t n = c->count ? c->count : 1, kept = 0;
	size_t *order = malloc(n * sizeof(*order));
	struct acl_key *keys = malloc(n * sizeof(*keys));
	struct acl_entry *entries = malloc(n * sizeof(*entries));
	int rc = 0;

	if (!order || !keys || !entries) {
		free(order);
		free(keys);
		free(entries);
		snprintf(err, errlen, "out of memory compiling the rules");
		return -1;
	}
	for (size_t i = 0; i < c->count; i++)
		order[i] = i;
	qsort_r(order, c->count, sizeof(*order), by_key_then_seq, c);
	for (size_t i = 0; i < c->count; i++) {
		size_t at = order[i];

		if (i && memcmp(&c->keys[order[i - 1]], &c->keys[at], sizeof(struct acl_key)) == 0)
			continue;   /* a later rule with a key an earlier one already has: the earlier wins */
		keys[kept] = c->keys[at];
		entries[kept] = c->entries[at];
		kept++;
	}
	free(order);
	free(c->keys);
	free(c->entries);
	c->count = kept;
	c->keys = keys;
	c->entries = entries;
	if (c->count)
		rc = xnf_map_ref_update_batch(&m->entries, c->keys, c->entries, (__u32)c->count);
	if (rc)
		snprintf(err, errlen, "cannot write the compiled rules: %s", strerror(-rc));
	return rc ? -1 : 0;
}

static int write_tuples(const struct acl_maps *m, const struct compiled *c)
{
	for (__u32 i = 0; i < c->ntuples; i++) {
		__u32 slot = c->generation * ACL_MAX_TUPLES + i;

		if (xnf_map_ref_update(&m->tuples, &slot, &c->tuples[i], BPF_ANY))
			return -1;
	}
	if (set(m, ACL_SETTING_TRACKS_0 + c->generation, c->tracks ? ACL_TRACKS : 0) ||
	    xnf_map_ref_update(&m->steady_below, &c->generation, &c->steady_below, BPF_ANY))
		return -1;
	return set(m, ACL_SETTING_TUPLES_0 + c->generation, c->ntuples);
}

int acl_compile(const struct xnf_rules_target *maps, char *err, size_t errlen);

int acl_compile(const struct xnf_rules_target *maps, char *err, size_t errlen)
{
	struct compiled c = { .steady_below = ACL_NO_VARYING_RULE };
	struct numbered_rule *rules;
	struct acl_maps m;
	__u32 epoch;
	size_t n = 0;
	int rc = -1;

	if (find_maps(maps, &m, err, errlen) || !(rules = read_rules(&m.rules, &n, err, errlen)))
		return -1;
	epoch = setting(&m, ACL_SETTING_ACTIVE) + 1;
	c.generation = epoch & 1;
	clear_generation(&m, c.generation);
	for (size_t i = 0; i < n; i++) {
		if (compile_rule(&c, rules[i].seq, &rules[i].rule, err, errlen))
			goto out;
		c.tracks |= rules[i].rule.ct_states != 0;
		if ((rules[i].rule.flags_mask || rules[i].rule.vlan[0]) && rules[i].seq < c.steady_below)
			c.steady_below = rules[i].seq;
	}
	order_tuples(&c);
	if (write_entries(&m, &c, err, errlen))
		goto out;
	/* A new epoch: the decisions connections kept under the old rules no longer hold. */
	if (write_tuples(&m, &c) || set(&m, ACL_SETTING_ACTIVE, epoch)) {
		snprintf(err, errlen, "cannot put the compiled rules in force");
		goto out;
	}
	rc = 0;
out:
	if (rc)
		clear_generation(&m, c.generation);
	free(rules);
	free(c.keys);
	free(c.entries);
	return rc;
}

/* Housekeeping: frees connections of the table that are over (<xnf/conntrack_control.h>). */
static struct xnf_ct_sweeper sweeper;

static void acl_sweep(const struct xnf_rules_target *maps)
{
	xnf_ct_sweep(maps, "acl_ct", "acl_ct_timeouts", &sweeper);
}

XNF_EXPORT_HOUSEKEEPING(acl, acl_sweep);
