// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The offload controller (drop_offload.h). A rule's hits are counted in one
 * place, its entry in the native xnf_drop_hits table: the workers add the NF's
 * own drops to `user`; the pre-filter counts its drops in the rule's slot of
 * xnf_offload_hits (per CPU), and when the rule leaves the kernel the slot's
 * count is folded into `kernel` one interval later, once no XDP program can
 * still be counting in it, and the slot is zeroed for the next rule.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <xnf/control.h>
#include <xnf/drop_rules.h>
#include <xnf/internal/native_maps.h>
#include <xnf/internal/nf_entry.h>
#include <xnf/runtime/clock.h>
#include <xnf/runtime/json.h>
#include <xnf/runtime/log.h>
#include <xnf/runtime/rules_generations.h>
#include <xnf/runtime/xdp_instance.h>

#include "drop_offload.h"
#include <xnf/runtime/modes.h>

#define MAX_KEY_SIZE 64
/* The stats list this many rules, the most hit first. */
#define REPORTED_RULES 64

/* A rule hot enough in user space to go into the kernel. */
struct candidate {
	__u8 key[MAX_KEY_SIZE];
	struct xnf_drop_rule_hits *hits;
	double pps;
};

struct slot {
	bool used;       /* the rule is in the kernel */
	bool draining;   /* taken out this interval: its count is folded in at the next */
	__u8 key[MAX_KEY_SIZE];
	struct xnf_drop_rule_hits *hits;
	__u64 kernel_seen;
	double pps;
};

struct drop_offload {
	struct drop_offload_config cfg;
	struct xnf_map *hits;       /* the native per-rule table */
	struct xnf_map_ref rules;   /* the NF's map of rules (native: the NF runs in user space) */
	int prefilter_fd;           /* key -> slot, what XDP drops */
	int slot_hits_fd;           /* slot -> per-CPU count */
	int ncpus;
	__u64 *per_cpu;             /* one slot's values, read and zeroed */
	struct timespec last;
	__u64 installs, removals;
	struct slot slots[XNF_MAX_OFFLOADED_DROPS];
	struct candidate *candidates; /* XNF_MAX_DROP_RULE_HITS of them */
};

int drop_offload_check(const struct drop_offload_config *cfg, bool user_space_mode, const char *nf_name)
{
	if (!cfg->enabled)
		return 0;
	if (!user_space_mode) {
		xnf_error("--offload-drops moves a user-space NF's hot drop rules into XDP: give a user-space mode "
			  "(%s); in the kernel modes every rule already runs in the kernel", xnf_user_space_modes());
		return -1;
	}
	if (!xnf_nf_drop_rules || !xnf_native_map_find("xnf_drop_hits")) {
		xnf_error("--offload-drops: %s declares no pure-drop rules (XNF_DROP_RULES, "
			  "XNF_EXPORT_DROP_RULES: see docs/writing-an-nf.md); the firewall does", nf_name);
		return -1;
	}
	if (cfg->below_pps >= cfg->above_pps) {
		xnf_error("--offload-below %u must be less than --offload-above %u, or a rule would go back and forth",
			  cfg->below_pps, cfg->above_pps);
		return -1;
	}
	return 0;
}

static int open_maps(struct drop_offload *o, struct xnf_xdp_instance *xdp)
{
	struct xnf_map_ref ref;

	o->hits = xnf_native_map_find("xnf_drop_hits");
	if (!o->hits || o->hits->key_size > MAX_KEY_SIZE)
		return -EINVAL;
	if (xnf_native_resolve_map(NULL, xnf_nf_drop_rules->map, &o->rules) ||
	    o->rules.key_size != o->hits->key_size)
		return -EINVAL;
	if (xnf_xdp_resolve_map(xdp, "xnf_offload_drops", &ref))
		return -ENOENT;
	o->prefilter_fd = ref.fd;
	if (xnf_xdp_resolve_map(xdp, "xnf_offload_hits", &ref))
		return -ENOENT;
	o->slot_hits_fd = ref.fd;
	return 0;
}

struct drop_offload *drop_offload_start(const struct drop_offload_config *cfg, struct xnf_xdp_instance *xdp)
{
	struct drop_offload *o = calloc(1, sizeof(*o));

	if (!o) {
		xnf_error("--offload-drops: out of memory");
		return NULL;
	}
	o->cfg = *cfg;
	o->ncpus = libbpf_num_possible_cpus();
	o->per_cpu = o->ncpus > 0 ? calloc((size_t)o->ncpus, sizeof(__u64)) : NULL;
	o->candidates = calloc(XNF_MAX_DROP_RULE_HITS, sizeof(*o->candidates));
	if (!o->per_cpu || !o->candidates || open_maps(o, xdp)) {
		xnf_error("--offload-drops: the NF's pure-drop rules and their maps do not match (map %s): a bug in "
			  "its XNF_DROP_RULES or XNF_EXPORT_DROP_RULES", xnf_nf_drop_rules->map);
		drop_offload_stop(o);
		return NULL;
	}
	clock_gettime(CLOCK_MONOTONIC, &o->last);
	return o;
}

/* The pre-filter's count in a slot, over every CPU; zeroes the slot when asked. */
static __u64 slot_count(struct drop_offload *o, __u32 slot, bool zero)
{
	__u64 total = 0;

	if (bpf_map_lookup_elem(o->slot_hits_fd, &slot, o->per_cpu) == 0) {
		for (int c = 0; c < o->ncpus; c++)
			total += o->per_cpu[c];
	}
	if (zero) {
		memset(o->per_cpu, 0, (size_t)o->ncpus * sizeof(__u64));
		bpf_map_update_elem(o->slot_hits_fd, &slot, o->per_cpu, BPF_ANY);
	}
	return total;
}

/* In the kernel now: not taken out and waiting to be folded in. */
static bool in_kernel(const struct slot *s)
{
	return s->used && !s->draining;
}

typedef void (*rule_visitor)(struct drop_offload *o, const void *key, struct xnf_drop_rule_hits *hits, void *ctx);

/* Every rule hit so far (the per-rule table), with its key and its hits. */
static void each_rule_hit(struct drop_offload *o, rule_visitor visit, void *ctx)
{
	__u8 key[MAX_KEY_SIZE], next[MAX_KEY_SIZE];
	const void *prev = NULL;

	while (xnf_native_map_get_next_key(o->hits, prev, next) == 0) {
		struct xnf_drop_rule_hits *hits = xnf_map_lookup(o->hits, next);

		memcpy(key, next, o->hits->key_size);
		prev = key;
		if (hits)
			visit(o, key, hits, ctx);
	}
}

/* Out of the kernel: from now on the rule's packets reach the NF, which drops them itself. */
static void take_out(struct drop_offload *o, struct slot *s)
{
	bpf_map_delete_elem(o->prefilter_fd, s->key);
	s->draining = true;
	o->removals++;
}

static struct slot *find_slot(struct drop_offload *o, const void *key)
{
	for (__u32 i = 0; i < o->cfg.table; i++) {
		if (o->slots[i].used && memcmp(o->slots[i].key, key, o->hits->key_size) == 0)
			return &o->slots[i];
	}
	return NULL;
}

/* The rule under key as it is in force (a rules table's generation in force, xnf/rules_tables.h). 0, or -1. */
static int rule_in_force(const struct drop_offload *o, const void *key, void *value, size_t size)
{
	struct xnf_rules_view view = { .sides = { .resolve = xnf_native_resolve_map } };
	struct xnf_rules_target in_force = xnf_rules_view_target(&view);
	struct xnf_map_ref ref;

	if (xnf_map_find(&in_force, o->rules.name, &ref) || ref.value_size > size)
		return -1;
	return xnf_map_ref_lookup(&ref, key, value);
}

/* Still a rule of the NF's, and a pure drop: a rule changed since its hits were counted is not copied. */
static bool is_drop_rule(struct drop_offload *o, const void *key)
{
	__u8 value[256];

	return rule_in_force(o, key, value, sizeof(value)) == 0 && xnf_nf_drop_rules->drops(value);
}

/* A free slot for a rule dropping at pps; or, with the table full, the coolest rule goes to make room
 * at the next interval. */
static struct slot *free_slot(struct drop_offload *o, double pps)
{
	struct slot *coolest = NULL;

	for (__u32 i = 0; i < o->cfg.table; i++) {
		struct slot *s = &o->slots[i];

		if (!s->used && !s->draining)
			return s;
		if (in_kernel(s) && (!coolest || s->pps < coolest->pps))
			coolest = s;
	}
	if (coolest && coolest->pps < pps)
		take_out(o, coolest);
	return NULL;
}

static void put_in(struct drop_offload *o, const void *key, struct xnf_drop_rule_hits *hits, double pps)
{
	struct slot *s = free_slot(o, pps);
	__u32 index;

	if (!s)
		return;
	index = (__u32)(s - o->slots);
	memcpy(s->key, key, o->hits->key_size);
	if (bpf_map_update_elem(o->prefilter_fd, key, &index, BPF_NOEXIST))
		return;
	s->used = true;
	s->hits = hits;
	s->kernel_seen = 0;
	s->pps = pps;
	o->installs++;
}

/* Slots taken out an interval ago: their count joins the rule's, and they are free again. */
static void fold_drained(struct drop_offload *o)
{
	for (__u32 i = 0; i < o->cfg.table; i++) {
		struct slot *s = &o->slots[i];

		if (s->draining) {
			s->hits->kernel += slot_count(o, i, true);
			s->used = s->draining = false;
		}
	}
}

static void measure_offloaded(struct drop_offload *o, double seconds)
{
	for (__u32 i = 0; i < o->cfg.table; i++) {
		struct slot *s = &o->slots[i];
		__u64 count;

		if (!in_kernel(s))
			continue;
		count = slot_count(o, i, false);
		s->pps = (double)(count - s->kernel_seen) / seconds;
		s->kernel_seen = count;
		if (s->pps < o->cfg.below_pps)
			take_out(o, s);
	}
}

static int by_pps_descending(const void *a, const void *b)
{
	const struct candidate *x = a, *y = b;

	return x->pps < y->pps ? 1 : x->pps > y->pps ? -1 : 0;
}

struct measuring {
	double seconds;
	size_t n;
};

/* One rule's rate in user space since the last look; a candidate when above the threshold and not in. */
static void measure_rule(struct drop_offload *o, const void *key, struct xnf_drop_rule_hits *hits, void *ctx)
{
	struct measuring *m = ctx;
	__u64 user = __atomic_load_n(&hits->user, __ATOMIC_RELAXED);
	double pps = (double)(user - hits->user_seen) / m->seconds;

	hits->user_seen = user;
	if (pps >= o->cfg.above_pps && m->n < XNF_MAX_DROP_RULE_HITS && !find_slot(o, key)) {
		memcpy(o->candidates[m->n].key, key, o->hits->key_size);
		o->candidates[m->n].hits = hits;
		o->candidates[m->n++].pps = pps;
	}
}

/* The rules above the threshold in user space, the hottest first: a hotter rule must not wait behind a
 * cooler one for a slot, or the two would take turns. */
static size_t hot_in_user_space(struct drop_offload *o, double seconds)
{
	struct measuring m = { .seconds = seconds };

	each_rule_hit(o, measure_rule, &m);
	qsort(o->candidates, m.n, sizeof(*o->candidates), by_pps_descending);
	return m.n;
}

static void measure_in_user_space(struct drop_offload *o, double seconds)
{
	size_t n = hot_in_user_space(o, seconds);

	for (size_t i = 0; i < n; i++) {
		if (is_drop_rule(o, o->candidates[i].key))
			put_in(o, o->candidates[i].key, o->candidates[i].hits, o->candidates[i].pps);
	}
}

int drop_offload_tick(struct drop_offload *o)
{
	struct timespec now;
	double seconds;

	clock_gettime(CLOCK_MONOTONIC, &now);
	seconds = xnf_seconds_between(&o->last, &now);
	if (seconds * 1000 < o->cfg.interval_ms)
		return (int)(o->cfg.interval_ms - seconds * 1000) + 1;
	o->last = now;
	fold_drained(o);
	measure_offloaded(o, seconds);
	measure_in_user_space(o, seconds);
	return (int)o->cfg.interval_ms;
}

void drop_offload_withdraw_all(struct drop_offload *o)
{
	for (__u32 i = 0; o && i < o->cfg.table; i++) {
		if (in_kernel(&o->slots[i]))
			take_out(o, &o->slots[i]);
	}
}

struct rule_report {
	__u8 key[MAX_KEY_SIZE];
	struct xnf_drop_rule_hits *hits;
	__u64 total;
};

static int by_total_descending(const void *a, const void *b)
{
	const struct rule_report *x = a, *y = b;

	return x->total < y->total ? 1 : x->total > y->total ? -1 : 0;
}

static void write_rule(struct drop_offload *o, FILE *out, const struct rule_report *r, bool first)
{
	struct slot *s = find_slot(o, r->key); /* a slot taken out is still counting until it is folded in */
	__u64 kernel_hits = s ? r->hits->kernel + slot_count(o, (__u32)(s - o->slots), false) : r->hits->kernel;
	char text[XNF_RULE_MAX_TEXT] = "?";
	__u8 value[256];

	if (xnf_nf_rules && rule_in_force(o, r->key, value, sizeof(value)) == 0)
		xnf_nf_rules->format(o->rules.name, r->key, value, text, sizeof(text));
	fprintf(out, "%s{\"rule\": ", first ? "" : ", ");
	xnf_json_string(out, text);
	fprintf(out, ", \"where\": \"%s\", \"hits\": %llu, \"kernel_hits\": %llu, \"user_hits\": %llu}",
		s && in_kernel(s) ? "kernel" : "user", (unsigned long long)(kernel_hits + r->hits->user),
		(unsigned long long)kernel_hits, (unsigned long long)r->hits->user);
}

struct report {
	struct rule_report *rules;
	size_t n;
};

static void add_to_report(struct drop_offload *o, const void *key, struct xnf_drop_rule_hits *hits, void *ctx)
{
	struct report *r = ctx;

	if (r->n == XNF_MAX_DROP_RULE_HITS)
		return;
	memcpy(r->rules[r->n].key, key, o->hits->key_size);
	r->rules[r->n].hits = hits;
	r->rules[r->n++].total = hits->user + hits->kernel;
}

void drop_offload_report(struct drop_offload *o, FILE *out)
{
	struct report r = { .rules = calloc(XNF_MAX_DROP_RULE_HITS, sizeof(*r.rules)) };

	fprintf(out, ", \"offload\": {\"above_pps\": %u, \"below_pps\": %u, \"table\": %u, \"installs\": %llu, "
		"\"removals\": %llu, \"rules\": [", o->cfg.above_pps, o->cfg.below_pps, o->cfg.table,
		(unsigned long long)o->installs, (unsigned long long)o->removals);
	if (r.rules) {
		each_rule_hit(o, add_to_report, &r);
		qsort(r.rules, r.n, sizeof(*r.rules), by_total_descending);
	}
	for (size_t i = 0; i < r.n && i < REPORTED_RULES; i++)
		write_rule(o, out, &r.rules[i], i == 0);
	fprintf(out, "], \"rules_hit\": %zu}", r.n);
	free(r.rules);
}

void drop_offload_stop(struct drop_offload *o)
{
	if (!o)
		return;
	free(o->per_cpu);
	free(o->candidates);
	free(o);
}
