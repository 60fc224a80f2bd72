// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The NAT's start and sweep steps.
 * Start: each port's own MAC (the source of what the NAT sends out of it) and the namespace's IPv4 addresses (frames
 * to them are the local stack's, not a flow to translate), read once.
 * Commit (after every change of the rules): the port forwards read backwards, so that an inside server answers from
 * its public port.
 * Sweep (about once a second): removes mappings, bindings and sessions idle past their protocol's timeout. The
 * packet path already ignores them; this keeps the tables from filling. At most SWEEP_BUDGET entries of each
 * table per call, going on from there the next time. After a whole pass over a table its sweep rests until the
 * soonest one of its entries can be over (<xnf/sweep_rest.h>); a binding that goes ends the mappings' rest (a mapping
 * is over with its binding), a change of the timeouts every rest.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <xnf/control.h>
#include <xnf/helpers.h>
#include <xnf/sweep_rest.h>
#include "nat.h"

#define SWEEP_BUDGET 65536
/* Bindings tables up to this size are read whole once a sweep (a few MB for a moment); a larger one would cost more
 * than the budget's lookups it saves, and each mapping looks its own binding up. */
#define SNAPSHOT_MAX_BINDINGS (4 * SWEEP_BUDGET)

static void take_port_macs(const struct xnf_map_ref *port_mac)
{
	for (__u32 port = 0; port < xnf_instance_ports()->nports; port++) {
		struct nat_port_mac mac = { .set = 1 };

		if (xnf_instance_port_mac(port, mac.mac) == 0)
			xnf_map_ref_update(port_mac, &port, &mac, BPF_ANY);
	}
}

static int take_local_addrs(const struct xnf_map_ref *local, const struct xnf_map_ref *local6, char *err,
			    size_t errlen)
{
	struct ifaddrs *all;
	__u32 one = 1, n = 0, n6 = 0;

	if (getifaddrs(&all)) {
		snprintf(err, errlen, "cannot read this namespace's addresses");
		return -1;
	}
	for (struct ifaddrs *a = all; a; a = a->ifa_next) {
		struct nat_local_addr key = { 0 };
		struct nat_local6_addr key6;

		if (a->ifa_addr && a->ifa_addr->sa_family == AF_INET6) {
			memcpy(key6.addr, &((struct sockaddr_in6 *)a->ifa_addr)->sin6_addr, sizeof(key6.addr));
			if (n6++ < NAT_MAX_LOCAL_ADDRS)
				xnf_map_ref_update(local6, &key6, &one, BPF_ANY);
		}
		if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET)
			continue;
		key.addr = ((struct sockaddr_in *)a->ifa_addr)->sin_addr.s_addr;
		if (n++ < NAT_MAX_LOCAL_ADDRS)
			xnf_map_ref_update(local, &key, &one, BPF_ANY);
	}
	freeifaddrs(all);
	if (n > NAT_MAX_LOCAL_ADDRS || n6 > NAT_MAX_LOCAL_ADDRS)
		fprintf(stderr, "nat: this namespace has %u IPv4 and %u IPv6 addresses; frames to the first %d of each go to "
			"the local stack, to the others they are translated like any\n", n, n6, NAT_MAX_LOCAL_ADDRS);
	return 0;
}

static int nat_start(const struct xnf_rules_target *maps, char *err, size_t errlen)
{
	struct xnf_map_ref port_mac, local, local6;

	if (xnf_map_find(maps, "nat_port_mac", &port_mac) || xnf_map_find(maps, "nat_local", &local) ||
	    xnf_map_find(maps, "nat_local6", &local6)) {
		snprintf(err, errlen, "the NAT's maps are missing");
		return -1;
	}
	take_port_macs(&port_mac);
	return take_local_addrs(&local, &local6, err, errlen);
}

/* A binding as a sweep found it: a mapping's public port is still its own while one holds its inside endpoint. */
struct held_port {
	struct nat_public_key port;
	struct nat_endpoint inside;
};

/* What one sweep reads once instead of per entry: the idle times, and the bindings (sorted by port) that the
 * mappings are checked against; `bindings` NULL where they could not be read (each mapping then reads its own). */
struct sweep_view {
	__u64 timeout_ns[NAT_NSETTINGS];
	__u64 now;
	__u64 soonest_over;   /* of the entries this call kept, in the batch's copy */
	const struct xnf_rules_target *maps;
	struct held_port *bindings;
	__u32 nbindings;
};

static __u64 timeout_ns(const struct sweep_view *view, __u8 proto, __u32 closing)
{
	return view->timeout_ns[nat_timeout_slot(proto, closing)];
}

/* Each table's entries over: idle past their idle time; a mapping also once its public port is no longer its own
 * (the binding swept, or taken over), so that mappings of closed connections do not outlive them. live: read
 * what the entry depends on from the tables now, not from the view. */
struct sweep {
	const char *map;
	xnf_map_entry_over over;   /* ctx: the sweep's view */
	struct xnf_map_walk walk;
	struct xnf_sweep_rest rest;
};

/* An entry kept, idle for timeout_ns after last_seen_ns (<xnf/sweep_rest.h>). Returns 0: not over. */
static int kept_until(struct sweep_view *view, __u64 last_seen_ns, __u64 timeout_ns, int live)
{
	xnf_sweep_kept(&view->soonest_over, last_seen_ns + timeout_ns, live);
	return 0;
}

static int port_order(const void *a, const void *b)
{
	return memcmp(&((const struct held_port *)a)->port, &((const struct held_port *)b)->port,
		      sizeof(struct nat_public_key));
}

/* The inside endpoint bound to port: as the view holds it, or from the bindings table. 1: bound; 0: none; -1: the
 * bindings table is not there (nothing to judge by). */
static int bound_inside(const struct sweep_view *view, const struct nat_public_key *port, bool live,
			struct nat_endpoint *inside)
{
	struct xnf_map_ref bindings;
	struct nat_binding binding;

	if (!live && view->bindings) {
		struct held_port wanted = { .port = *port };
		const struct held_port *held = bsearch(&wanted, view->bindings, view->nbindings, sizeof(wanted),
						       port_order);

		if (!held)
			return 0;
		*inside = held->inside;
		return 1;
	}
	if (xnf_map_find(view->maps, "nat_bindings", &bindings))
		return -1;
	if (xnf_map_ref_lookup(&bindings, port, &binding))
		return 0;
	*inside = binding.inside;
	return 1;
}

static int mapping_over(void *ctx, const void *key, const void *value, int live)
{
	struct sweep_view *view = ctx;
	const struct nat_endpoint *inside = key;
	const struct nat_mapping *mapping = value;
	struct nat_public_key public_key = { .port = mapping->public_port, .proto = inside->proto,
					     .addr_index = mapping->addr_index };
	struct nat_endpoint bound;
	int found;

	if (xnf_idle_past(view->now, mapping->last_seen_ns, timeout_ns(view, inside->proto, 0)))
		return 1;
	found = bound_inside(view, &public_key, live, &bound);
	if (found == 0 || (found > 0 && (bound.addr != inside->addr || bound.port != inside->port)))
		return 1;
	return kept_until(view, mapping->last_seen_ns, timeout_ns(view, inside->proto, 0), live);
}

static int binding_over(void *ctx, const void *key, const void *value, int live)
{
	struct sweep_view *view = ctx;
	const struct nat_binding *b = value;
	__u64 timeout = timeout_ns(view, ((const struct nat_public_key *)key)->proto, b->closing);

	return xnf_idle_past(view->now, b->last_seen_ns, timeout) ? 1 : kept_until(view, b->last_seen_ns, timeout, live);
}

static int session_over(void *ctx, const void *key, const void *value, int live)
{
	struct sweep_view *view = ctx;
	const struct nat_session *s = value;
	__u64 timeout = timeout_ns(view, ((const struct nat_session_key *)key)->inside.proto, s->closing);

	return xnf_idle_past(view->now, s->last_seen_ns, timeout) ? 1 : kept_until(view, s->last_seen_ns, timeout, live);
}

/* Bindings before mappings: a mapping whose binding went in this pass goes with it. */
enum { SWEEP_SESSIONS, SWEEP_BINDINGS, SWEEP_MAPPINGS, NSWEEPS };
static struct sweep sweeps[NSWEEPS] = {
	[SWEEP_SESSIONS] = { .map = "nat_sessions", .over = session_over },
	[SWEEP_BINDINGS] = { .map = "nat_bindings", .over = binding_over },
	[SWEEP_MAPPINGS] = { .map = "nat_mappings", .over = mapping_over },
};
static __u64 rested_on[NAT_NSETTINGS];   /* the timeouts the rests were reckoned with: a change ends them */

static void read_timeouts(const struct xnf_map_ref *config, struct sweep_view *view)
{
	for (__u32 slot = 0; slot < NAT_NSETTINGS; slot++) {
		__u32 seconds = 0;

		xnf_map_ref_lookup(config, &slot, &seconds);
		view->timeout_ns[slot] = (__u64)(seconds ? seconds : nat_default_timeout_s(slot)) * 1000000000ull;
	}
}

/* Every binding, read in batches and sorted by port; the view keeps NULL where they cannot all be read. */
static void read_bindings(struct sweep_view *view)
{
	struct nat_public_key *keys = NULL;
	struct nat_binding *values = NULL;
	struct xnf_map_walk walk = { 0 };
	struct xnf_map_ref bindings;
	__u32 n = 0;
	int err = 0;

	if (xnf_map_find(view->maps, "nat_bindings", &bindings) || bindings.max_entries > SNAPSHOT_MAX_BINDINGS)
		return;
	keys = malloc((size_t)bindings.max_entries * sizeof(*keys));
	values = malloc((size_t)bindings.max_entries * sizeof(*values));
	view->bindings = malloc((size_t)bindings.max_entries * sizeof(*view->bindings));
	while (keys && values && view->bindings && err == 0 && n < bindings.max_entries) {
		__u32 got = bindings.max_entries - n;

		err = xnf_map_ref_read_batch(&bindings, &walk, keys + n, values + n, &got);
		n += err == 0 || err == -ENOENT ? got : 0;
	}
	/* a full table read to its capacity is read whole; a binding a walk under churn missed looks gone, and the
	 * mapping is read again with its binding live before it goes */
	if ((err != -ENOENT && n < bindings.max_entries) || !view->bindings) {
		free(view->bindings);
		view->bindings = NULL;
	} else {
		for (__u32 i = 0; i < n; i++)
			view->bindings[i] = (struct held_port){ .port = keys[i], .inside = values[i].inside };
		view->nbindings = n;
		qsort(view->bindings, n, sizeof(*view->bindings), port_order);
	}
	free(keys);
	free(values);
}

/* The shortest idle time any entry can have: that of one made or used since a pass began. */
static __u64 shortest_timeout(const struct sweep_view *view)
{
	static const __u32 slots[] = { NAT_SETTING_TIMEOUT_TCP_S, NAT_SETTING_TIMEOUT_UDP_S, NAT_SETTING_TIMEOUT_ICMP_S,
				       NAT_SETTING_TIMEOUT_TCP_CLOSING_S };
	__u64 shortest = UINT64_MAX;

	for (size_t i = 0; i < sizeof(slots) / sizeof(slots[0]); i++)
		if (view->timeout_ns[slots[i]] < shortest)
			shortest = view->timeout_ns[slots[i]];
	return shortest;
}

static void end_rests_if_timeouts_changed(const struct sweep_view *view)
{
	if (memcmp(rested_on, view->timeout_ns, sizeof(rested_on)) == 0)
		return;
	memcpy(rested_on, view->timeout_ns, sizeof(rested_on));
	for (int i = 0; i < NSWEEPS; i++)
		xnf_sweep_rest_end(&sweeps[i].rest);
}

/* Bindings are read after the bindings' own sweep: one it removed no longer holds its mapping's port. */
static void nat_sweep(const struct xnf_rules_target *maps)
{
	struct sweep_view view = { .maps = maps, .now = xnf_now_ns() };
	struct xnf_map_ref config, table;
	__u32 ends, gone;

	if (xnf_map_find(maps, "nat_config", &config))
		return;
	read_timeouts(&config, &view);
	end_rests_if_timeouts_changed(&view);
	for (int i = 0; i < NSWEEPS; i++) {
		struct sweep *sweep = &sweeps[i];

		if (xnf_map_find(maps, sweep->map, &table) || xnf_sweep_resting(&sweep->rest, &sweep->walk, view.now))
			continue;
		if (i == SWEEP_MAPPINGS)
			read_bindings(&view);
		ends = sweep->walk.ends;
		view.soonest_over = UINT64_MAX;
		gone = xnf_map_ref_sweep(&table, &sweep->walk, SWEEP_BUDGET, sweep->over, &view);
		xnf_sweep_rest_after(&sweep->rest, &sweep->walk, ends, view.soonest_over, shortest_timeout(&view));
		if (i == SWEEP_BINDINGS && gone)
			xnf_sweep_rest_end(&sweeps[SWEEP_MAPPINGS].rest);
	}
	free(view.bindings);
}

/*
 * Deletes the entries of a map derived from the rules that kept() says no rule leads to any more: found in one walk,
 * then deleted (a walk that deletes as it goes loses its place). The derived maps are changed in place, never
 * emptied, so that frames of what stays keep finding it throughout a change of the rules.
 */
static int delete_unkept(const struct xnf_map_ref *map, const struct xnf_map_ref *rules,
			 bool (*kept)(const struct xnf_map_ref *rules, const void *key, const void *value), char *err,
			 size_t errlen)
{
	__u8 *gone = calloc(map->max_entries ? map->max_entries : 1, map->key_size), *value = malloc(map->value_size);
	__u8 *key = malloc(map->key_size), *next = malloc(map->key_size);
	__u32 ngone = 0;
	int rc = 0;

	if (!gone || !value || !key || !next) {
		snprintf(err, errlen, "out of memory");
		rc = -1;
		goto out;
	}
	for (bool first = true; ngone < map->max_entries && xnf_map_ref_next_key(map, first ? NULL : key, next) == 0;
	     first = false) {
		memcpy(key, next, map->key_size);
		if (xnf_map_ref_lookup(map, key, value) == 0 && !kept(rules, key, value))
			memcpy(gone + (size_t)ngone++ * map->key_size, key, map->key_size);
	}
	for (__u32 i = 0; i < ngone; i++)
		xnf_map_ref_delete(map, gone + (size_t)i * map->key_size);
out:
	free(gone);
	free(value);
	free(key);
	free(next);
	return rc;
}

/* nat_settings, what the packet path reads, from nat_config's slots as they are now. */
static int publish_settings(const struct xnf_rules_target *maps, char *err, size_t errlen)
{
	struct xnf_map_ref config, settings;
	struct nat_settings all = { 0 };
	__u32 zero = 0;

	if (xnf_map_find(maps, "nat_config", &config) || xnf_map_find(maps, "nat_settings", &settings)) {
		snprintf(err, errlen, "the NAT's maps are missing");
		return -1;
	}
	for (__u32 slot = 0; slot < NAT_NSETTINGS; slot++)
		if (xnf_map_ref_lookup(&config, &slot, &all.value[slot]))
			all.value[slot] = 0;
	if (xnf_map_ref_update(&settings, &zero, &all, BPF_ANY)) {
		snprintf(err, errlen, "cannot write the NAT's settings");
		return -1;
	}
	return 0;
}

/* Whether an entry of nat_forward_back still answers for a forward of the rules (forwards are keyed by protocol and
 * public port on the first public address). */
static bool forward_back_kept(const struct xnf_map_ref *forwards, const void *key, const void *value)
{
	const struct nat_endpoint *inside = key;
	const struct nat_forward_back *answer = value;
	struct nat_public_key public = { .port = answer->public_port, .proto = inside->proto };
	struct nat_forward forward;

	return xnf_map_ref_lookup(forwards, &public, &forward) == 0 &&
	       memcmp(&forward.inside, inside, sizeof(*inside)) == 0;
}

/* nat_forward_back from nat_forwards, changed in place: each forward's server answers from its public port. */
static int commit_forwards(const struct xnf_rules_target *maps, char *err, size_t errlen)
{
	struct nat_public_key key, next;
	struct xnf_map_ref forwards, back;
	struct nat_forward forward;
	bool first = true;

	if (xnf_map_find(maps, "nat_forwards", &forwards) || xnf_map_find(maps, "nat_forward_back", &back)) {
		snprintf(err, errlen, "the NAT's maps are missing");
		return -1;
	}
	for (; xnf_map_ref_next_key(&forwards, first ? NULL : &key, &next) == 0; key = next, first = false) {
		struct nat_forward_back answer = { .public_port = next.port };

		if (xnf_map_ref_lookup(&forwards, &next, &forward))
			continue;
		if (xnf_map_ref_update(&back, &forward.inside, &answer, BPF_ANY)) {
			snprintf(err, errlen, "cannot note the port forward to its server");
			return -1;
		}
	}
	return delete_unkept(&back, &forwards, forward_back_kept, err, errlen);
}

static int address_order(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

/* The public addresses of the rules (nat_public_set) into nat_public's slots: an address keeps its slot while it is
 * in the rules (the mappings made on it name the slot), a removed one frees its slot, a new one takes the first free
 * slot; nat_public_index is rebuilt, and the slots in use noted. */
static int commit_public(const struct xnf_rules_target *maps, char *err, size_t errlen)
{
	struct xnf_map_ref set, slots, index, config;
	struct nat_public pub[NAT_MAX_PUBLIC];
	struct nat_local_addr key, next;
	struct nat_public_ports ports;
	__u32 used = 0, slot, setting = NAT_SETTING_PUBLIC_SLOTS, fresh[NAT_MAX_PUBLIC + 1], fresh_count = 0;
	bool first = true;

	if (xnf_map_find(maps, "nat_public_set", &set) || xnf_map_find(maps, "nat_public", &slots) ||
	    xnf_map_find(maps, "nat_public_index", &index) || xnf_map_find(maps, "nat_config", &config)) {
		snprintf(err, errlen, "the NAT's maps are missing");
		return -1;
	}
	for (slot = 0; slot < NAT_MAX_PUBLIC; slot++) {
		struct nat_local_addr at = { 0 };

		if (xnf_map_ref_lookup(&slots, &slot, &pub[slot]))
			memset(&pub[slot], 0, sizeof(pub[slot]));
		at.addr = pub[slot].addr;
		if (pub[slot].addr && xnf_map_ref_lookup(&set, &at, &ports))
			memset(&pub[slot], 0, sizeof(pub[slot]));   /* no longer in the rules */
		else if (pub[slot].addr)
			pub[slot].port_lo = ports.port_lo, pub[slot].port_hi = ports.port_hi;
	}
	/* New addresses take free slots in address order: the kernel's and the native table's walks differ, the
	 * slots must not. */
	for (; xnf_map_ref_next_key(&set, first ? NULL : &key, &next) == 0; key = next, first = false) {
		bool placed = false;

		for (slot = 0; slot < NAT_MAX_PUBLIC && !placed; slot++)
			placed = pub[slot].addr == next.addr;
		if (!placed && fresh_count < NAT_MAX_PUBLIC + 1)
			fresh[fresh_count++] = ntohl(next.addr);
	}
	qsort(fresh, fresh_count, sizeof(fresh[0]), address_order);
	for (__u32 i = 0; i < fresh_count; i++) {
		struct nat_local_addr at = { .addr = htonl(fresh[i]) };
		bool placed = false;

		for (slot = 0; slot < NAT_MAX_PUBLIC && !placed; slot++) {
			if (pub[slot].addr || xnf_map_ref_lookup(&set, &at, &ports))
				continue;
			pub[slot] = (struct nat_public){ .addr = at.addr, .port_lo = ports.port_lo, .port_hi = ports.port_hi };
			placed = true;
		}
		if (!placed) {
			snprintf(err, errlen, "at most %d public addresses", NAT_MAX_PUBLIC);
			return -1;
		}
	}
	/* The index is changed in place, never emptied: frames to an address that stays keep finding it. A removed
	 * address is deleted and the walk starts over (its place went with it); kept ones are walked past. */
	first = true;
	while (xnf_map_ref_next_key(&index, first ? NULL : &key, &next) == 0) {
		bool kept = false;

		for (slot = 0; slot < NAT_MAX_PUBLIC && !kept; slot++)
			kept = pub[slot].addr == next.addr;
		if (!kept && xnf_map_ref_delete(&index, &next) == 0) {
			first = true;
			continue;
		}
		key = next;
		first = false;
	}
	for (slot = 0; slot < NAT_MAX_PUBLIC; slot++) {
		struct nat_local_addr at = { .addr = pub[slot].addr };

		if (xnf_map_ref_update(&slots, &slot, &pub[slot], BPF_ANY) ||
		    (pub[slot].addr && xnf_map_ref_update(&index, &at, &slot, BPF_ANY))) {
			snprintf(err, errlen, "cannot write the public addresses");
			return -1;
		}
		if (pub[slot].addr)
			used = slot + 1;
	}
	if (xnf_map_ref_update(&config, &setting, &used, BPF_ANY)) {
		snprintf(err, errlen, "cannot note the public addresses' slots in use");
		return -1;
	}
	return publish_settings(maps, err, errlen);
}

/* Whether a prefix of nat_inside is still one of the rules'. */
static bool inside_kept(const struct xnf_map_ref *rules, const void *key, const void *value)
{
	__u32 ruled;

	(void)value;
	return xnf_map_ref_lookup(rules, key, &ruled) == 0;
}

/*
 * nat_inside (what frames are matched against) brought to the rules' prefixes, and their count, where the packet
 * path reads it (0: every source is inside), set in between: first the prefixes the rules added, then the count,
 * then what they removed. A reload commits in the generation not yet in force; this order is for a single rule's
 * change (xnf rules add|del), which commits in the tables in force. So the first prefix added is in place before the count turns from "every source", and
 * the last one removed stays until the count has turned back: no frame finds a state neither the rules before
 * the change nor after it give (a source once went untranslated for the moment between the two).
 */
static int commit_inside(const struct xnf_rules_target *maps, char *err, size_t errlen)
{
	struct nat_inside_prefix key, next;
	struct xnf_map_ref rules, inside, config;
	__u32 count = 0, in = 1, setting = NAT_SETTING_INSIDE_PREFIXES;
	bool first = true;

	if (xnf_map_find(maps, "nat_inside_rules", &rules) || xnf_map_find(maps, "nat_inside", &inside) ||
	    xnf_map_find(maps, "nat_config", &config)) {
		snprintf(err, errlen, "the NAT's maps are missing");
		return -1;
	}
	for (; xnf_map_ref_next_key(&rules, first ? NULL : &key, &next) == 0; first = false, count++) {
		key = next;
		if (xnf_map_ref_update(&inside, &key, &in, BPF_ANY)) {
			snprintf(err, errlen, "cannot place inside prefix %u of the rules", count + 1);
			return -1;
		}
	}
	if (xnf_map_ref_update(&config, &setting, &count, BPF_ANY)) {
		snprintf(err, errlen, "cannot set the count of inside prefixes");
		return -1;
	}
	if (publish_settings(maps, err, errlen))
		return -1;
	return delete_unkept(&inside, &rules, inside_kept, err, errlen);
}

/* Whether an entry of nat_prefix6_in still leads back to a rule of nat_prefix6_out. */
static bool prefix6_back_kept(const struct xnf_map_ref *out, const void *key, const void *value)
{
	const struct nat_prefix6_key *outside = key;
	const struct nat_prefix6 *back = value;
	struct nat_prefix6_key inside = { .prefixlen = outside->prefixlen };
	struct nat_prefix6 to;

	memcpy(inside.addr, back->addr, sizeof(inside.addr));
	return xnf_map_ref_lookup(out, &inside, &to) == 0 && memcmp(to.addr, outside->addr, sizeof(to.addr)) == 0;
}

/* nat_prefix6_in from nat_prefix6_out, changed in place: each outside prefix leads back to its inside one (the
 * adjustment's ones' complement negative), and only what no rule leads to any more is deleted, so that frames of a
 * pair that stays are turned back throughout a change of the rules. */
static int commit_prefix6(const struct xnf_rules_target *maps, char *err, size_t errlen)
{
	struct nat_prefix6_key key, next;
	struct xnf_map_ref out, in;
	struct nat_prefix6 to, back;
	bool first = true;

	if (xnf_map_find(maps, "nat_prefix6_out", &out) || xnf_map_find(maps, "nat_prefix6_in", &in)) {
		snprintf(err, errlen, "the NAT's maps are missing");
		return -1;
	}
	for (; xnf_map_ref_next_key(&out, first ? NULL : &key, &next) == 0; key = next, first = false) {
		struct nat_prefix6_key outside = { .prefixlen = next.prefixlen };

		if (xnf_map_ref_lookup(&out, &next, &to))
			continue;
		back = (struct nat_prefix6){ .len = (__u8)next.prefixlen, .adjustment = (__u16)~to.adjustment };
		memcpy(outside.addr, to.addr, sizeof(outside.addr));
		memcpy(back.addr, next.addr, sizeof(back.addr));
		if (xnf_map_ref_update(&in, &outside, &back, BPF_ANY)) {
			snprintf(err, errlen, "cannot note the IPv6 prefix translation back");
			return -1;
		}
	}
	return delete_unkept(&in, &out, prefix6_back_kept, err, errlen);
}

/* After every change of the rules: the public addresses' slots, the port forwards read backwards, the inside
 * prefixes counted, the IPv6 prefixes read backwards; the settings the packet path reads follow each count as it
 * is set (the rules' own settings, an idle time or the inside port, with the first). */
int nat_commit(const struct xnf_rules_target *maps, char *err, size_t errlen);

int nat_commit(const struct xnf_rules_target *maps, char *err, size_t errlen)
{
	if (commit_public(maps, err, errlen) || commit_forwards(maps, err, errlen) || commit_inside(maps, err, errlen))
		return -1;
	return commit_prefix6(maps, err, errlen);
}

XNF_EXPORT_START(nat, nat_start);
XNF_EXPORT_HOUSEKEEPING(nat, nat_sweep);
