// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Connection tracking's rule words and sweeper (<xnf/conntrack_control.h>). The sweeper visits SWEEP_BUDGET entries
 * a call (about one a second) and goes on from there the next time, so a table of millions never holds up the
 * control thread; the data path already treats an entry that is over as absent, so a late sweep costs only room.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xnf/conntrack_control.h>
#include <xnf/rules_text.h>
#include <xnf/internal/native_maps.h>
#include <xnf/runtime/conntrack_list.h>

#define SWEEP_BUDGET 65536

static const char *const state_names[XNF_CT_STATES] = { "new", "established", "related", "invalid", "untracked" };

/* The idle times by slot (enum xnf_ct_tcp, then enum xnf_ct_timeout); NONE has none. */
static const char *const timeout_names[XNF_CT_NTIMEOUTS] = {
	[XNF_TCP_SYN_SENT] = "tcp_syn_sent",     [XNF_TCP_SYN_RECV] = "tcp_syn_recv",
	[XNF_TCP_ESTABLISHED] = "tcp_established", [XNF_TCP_FIN_WAIT] = "tcp_fin_wait",
	[XNF_TCP_CLOSE_WAIT] = "tcp_close_wait", [XNF_TCP_LAST_ACK] = "tcp_last_ack",
	[XNF_TCP_TIME_WAIT] = "tcp_time_wait",   [XNF_TCP_CLOSE] = "tcp_close",
	[XNF_TCP_SYN_SENT2] = "tcp_syn_sent2",   [XNF_CT_TIMEOUT_UDP] = "udp",
	[XNF_CT_TIMEOUT_UDP_STREAM] = "udp_stream", [XNF_CT_TIMEOUT_ICMP] = "icmp",
	[XNF_CT_TIMEOUT_GENERIC] = "generic",    [XNF_CT_TIMEOUT_TCP_RETRANS] = "tcp_max_retrans",
	[XNF_CT_TIMEOUT_TCP_UNACK] = "tcp_unacknowledged",
};

static int state_bit(const char *name, size_t len)
{
	for (int i = 0; i < XNF_CT_STATES; i++) {
		if (strlen(state_names[i]) == len && strncmp(name, state_names[i], len) == 0)
			return i;
	}
	return -1;
}

int xnf_ct_parse_states(const char *list, __u8 *mask, char *err, size_t errlen)
{
	*mask = 0;
	for (const char *name = list;;) {
		const char *comma = strchr(name, ',');
		size_t len = comma ? (size_t)(comma - name) : strlen(name);
		int bit = state_bit(name, len);

		if (bit < 0) {
			snprintf(err, errlen, "unknown connection state '%.*s': new, established, related, invalid, "
				 "untracked, comma-separated", (int)(len > 40 ? 40 : len), name);
			return -1;
		}
		if (*mask & (1u << bit)) {
			snprintf(err, errlen, "the state %s is named twice: name each state once", state_names[bit]);
			return -1;
		}
		*mask |= (__u8)(1u << bit);
		if (!comma)
			return 0;
		name = comma + 1;
	}
}

void xnf_ct_format_states(__u8 mask, char *out, size_t outlen)
{
	size_t used = 0;

	out[0] = '\0';
	for (int i = 0; i < XNF_CT_STATES && used < outlen; i++) {
		if (mask & (1u << i))
			used += (size_t)snprintf(out + used, outlen - used, "%s%s", used ? "," : "", state_names[i]);
	}
}

static int timeout_slot(const char *name)
{
	for (int i = 0; i < XNF_CT_NTIMEOUTS; i++) {
		if (timeout_names[i] && strcmp(name, timeout_names[i]) == 0)
			return i;
	}
	return -1;
}

int xnf_ct_parse_timeout(const char *timeouts_map, char **words, int n, struct xnf_rule_entry *entry, char *err,
			 size_t errlen)
{
	__u32 slot, seconds;
	int found;

	if (n != 3) {
		snprintf(err, errlen, "'timeout' takes a name and seconds: timeout tcp_established 3600");
		return -1;
	}
	found = timeout_slot(words[1]);
	if (found < 0) {
		snprintf(err, errlen, "unknown idle time '%.40s': tcp_syn_sent, tcp_syn_recv, tcp_established, "
			 "tcp_fin_wait, tcp_close_wait, tcp_last_ack, tcp_time_wait, tcp_close, tcp_syn_sent2, "
			 "tcp_max_retrans, tcp_unacknowledged, udp, udp_stream, icmp, generic", words[1]);
		return -1;
	}
	if (xnf_rules_parse_number(words[2], 1, XNF_CT_MAX_TIMEOUT_S, "timeout in seconds (1 up to a year)", &seconds,
				   err, errlen))
		return -1;
	slot = (__u32)found;
	entry->map = timeouts_map;
	memcpy(entry->key, &slot, sizeof(slot));
	memcpy(entry->value, &seconds, sizeof(seconds));
	entry->reset_on_delete = true;
	return 0;
}

int xnf_ct_parse_setting(const char *timeouts_map, char **words, int n, struct xnf_rule_entry *entry, char *err,
			 size_t errlen)
{
	__u32 slot = XNF_CT_SETTING_LIBERAL, on = 1;

	if (n != 2 || strcmp(words[1], "liberal") != 0) {
		snprintf(err, errlen, "'conntrack' takes one setting: conntrack liberal (TCP windows not checked, as "
			 "netfilter's nf_conntrack_tcp_be_liberal=1)");
		return -1;
	}
	entry->map = timeouts_map;
	memcpy(entry->key, &slot, sizeof(slot));
	memcpy(entry->value, &on, sizeof(on));
	entry->reset_on_delete = true;
	return 0;
}

int xnf_ct_format_timeout(const void *key, const void *value, char *out, size_t outlen)
{
	__u32 slot = *(const __u32 *)key, seconds = *(const __u32 *)value;

	if (slot == XNF_CT_SETTING_LIBERAL && seconds) {
		snprintf(out, outlen, "conntrack liberal");
		return 0;
	}
	if (slot >= XNF_CT_NTIMEOUTS || !timeout_names[slot] || !seconds)
		return -1;
	snprintf(out, outlen, "timeout %s %u", timeout_names[slot], seconds);
	return 0;
}

static void read_timeouts(const struct xnf_rules_target *maps, const char *timeouts_map, __u64 *ns)
{
	struct xnf_map_ref ref;
	int found = xnf_map_find(maps, timeouts_map, &ref) == 0;

	for (__u32 slot = 0; slot < XNF_CT_NTIMEOUTS; slot++) {
		__u32 seconds = 0;

		if (found)
			xnf_map_ref_lookup(&ref, &slot, &seconds);
		ns[slot] = (__u64)(seconds ? seconds : xnf_ct_default_timeout_s(slot)) * 1000000000ull;
	}
}

/* An entry's idle time, from the idle times by slot (as xnf__ct_over reads them). */
static __u64 idle_time_ns(const __u64 *timeout_ns, const struct xnf_ct_key *k, const struct xnf_ct_entry *e)
{
	__u32 cap = xnf__ct_cap_slot(k, e);
	__u64 state_ns = timeout_ns[xnf__ct_timeout_slot(k, e)];

	return cap < XNF_CT_NTIMEOUTS ? xnf__ct_idle_time(state_ns, timeout_ns[cap]) : state_ns;
}

struct sweep_clock {
	__u64 timeout_ns[XNF_CT_NTIMEOUTS];
	__u64 now;
	__u64 soonest_over;   /* of the entries this call found not over */
	struct xnf_map_ref windows;
	bool has_windows;     /* the table keeps TCP windows beside (a build before them did not) */
};

static int connection_over(void *ctx, const void *key, const void *value, int live)
{
	struct sweep_clock *clock = ctx;
	const struct xnf_ct_entry *e = value;
	__u64 timeout = idle_time_ns(clock->timeout_ns, key, e);

	if (xnf_idle_past(clock->now, e->last_seen_ns, timeout)) {
		if (clock->has_windows && ((const struct xnf_ct_key *)key)->proto == IPPROTO_TCP)
			xnf_map_ref_delete(&clock->windows, key);
		return 1;
	}
	xnf_sweep_kept(&clock->soonest_over, e->last_seen_ns + timeout, live);
	return 0;
}

static __u64 shortest(const __u64 *timeout_ns)
{
	__u64 least = UINT64_MAX;

	for (__u32 slot = 0; slot < XNF_CT_NTIMEOUTS; slot++)
		least = timeout_ns[slot] < least ? timeout_ns[slot] : least;
	return least;
}

__u32 xnf_ct_sweep(const struct xnf_rules_target *maps, const char *table, const char *timeouts_map,
		   struct xnf_ct_sweeper *sweeper)
{
	struct sweep_clock clock = { .now = xnf_now_coarse_ns(), .soonest_over = UINT64_MAX };
	struct xnf_map_ref entries;
	char windows[160];
	__u32 ends, gone;

	if (xnf_map_find(maps, table, &entries))
		return 0;
	snprintf(windows, sizeof(windows), "%s%s", table, XNF_CT_WINDOWS_SUFFIX);
	clock.has_windows = xnf_map_find(maps, windows, &clock.windows) == 0;
	read_timeouts(maps, timeouts_map, clock.timeout_ns);
	if (memcmp(clock.timeout_ns, sweeper->rested_on, sizeof(clock.timeout_ns)) != 0) {
		memcpy(sweeper->rested_on, clock.timeout_ns, sizeof(clock.timeout_ns));
		xnf_sweep_rest_end(&sweeper->rest);
	}
	if (xnf_sweep_resting(&sweeper->rest, &sweeper->walk, clock.now))
		return 0;
	ends = sweeper->walk.ends;
	gone = xnf_map_ref_sweep(&entries, &sweeper->walk, SWEEP_BUDGET, connection_over, &clock);
	xnf_sweep_rest_after(&sweeper->rest, &sweeper->walk, ends, clock.soonest_over, shortest(clock.timeout_ns));
	return gone;
}

/* ---------------------------------------------------------------------------------------------- the listing */

#define LIST_BATCH 256

static void print_endpoint(FILE *out, const struct xnf_ct_key *k, int side)
{
	char addr[INET6_ADDRSTRLEN] = "?";

	inet_ntop(k->family == 4 ? AF_INET : AF_INET6, k->addr[side], addr, sizeof(addr));
	fprintf(out, "{\"addr\": \"%s\", \"port\": %u}", addr, ntohs(k->port[side]));
}

static void print_connection(FILE *out, const struct xnf_ct_key *k, const struct xnf_ct_entry *e, __u64 timeout_ns,
			     __u64 now)
{
	int opener = e->opener & 1, tcp = k->proto == IPPROTO_TCP && e->tcp_state < XNF_TCP_NSTATES &&
						timeout_names[e->tcp_state];
	__u64 idle = now > e->last_seen_ns ? now - e->last_seen_ns : 0;

	fprintf(out, "{\"family\": %u, \"proto\": %u, \"opener\": ", k->family, k->proto);
	print_endpoint(out, k, opener);
	fprintf(out, ", \"answerer\": ");
	print_endpoint(out, k, !opener);
	/* TCP's state by its idle time's name less "tcp_": netfilter's names, written once above. */
	if (tcp)
		fprintf(out, ", \"tcp_state\": \"%s\"", timeout_names[e->tcp_state] + 4);
	else
		fputs(", \"tcp_state\": null", out);
	fprintf(out, ", \"answered\": %s, \"assured\": %s, \"idle_s\": %.1f, \"left_s\": %.1f}\n",
		e->seen_reply & XNF_CT_REPLIED ? "true" : "false", e->seen_reply & XNF_CT_ASSURED ? "true" : "false",
		idle / 1e9, (timeout_ns - idle) / 1e9);
}

/* "TABLE [LIMIT]": the table's name into name (of size len) and the limit; 0, or -1 with why. */
static int list_request(const char *request, char *name, size_t len, __u32 *limit, char *err, size_t errlen)
{
	size_t name_len = strcspn(request, " ");
	const char *rest = request + name_len;

	if (!name_len || name_len >= len) {
		snprintf(err, errlen, "connections takes a table's name and, if you like, how many to list at most");
		return -1;
	}
	memcpy(name, request, name_len);
	name[name_len] = '\0';
	*limit = UINT32_MAX;
	return *rest ? xnf_rules_parse_number(rest + 1, 1, UINT32_MAX, "how many connections to list", limit, err,
					      errlen) : 0;
}

int xnf_ct_list(const struct xnf_rules_target *maps, const char *request, FILE *out, char *err, size_t errlen)
{
	struct xnf_ct_key keys[LIST_BATCH];
	struct xnf_ct_entry values[LIST_BATCH];
	struct xnf_map_walk walk = { 0 };
	__u64 timeout_ns[XNF_CT_NTIMEOUTS], now = xnf_now_coarse_ns(), in_force = 0, over = 0, read = 0;
	__u32 limit;
	char timeouts_map[160], table[128];
	struct xnf_map_ref ref;
	int rc;

	if (list_request(request, table, sizeof(table), &limit, err, errlen))
		return -1;
	if (xnf_map_find(maps, table, &ref) || ref.key_size != sizeof(keys[0]) || ref.value_size != sizeof(values[0])) {
		snprintf(err, errlen, "no connection table '%s' in this NF (an XNF_CT_TABLE of its source)", table);
		return -1;
	}
	snprintf(timeouts_map, sizeof(timeouts_map), "%s%s", table, XNF_CT_TIMEOUTS_SUFFIX);
	read_timeouts(maps, timeouts_map, timeout_ns);
	/* Bounded: a native walk whose last key the data path deleted starts over, should that keep happening. */
	do {
		__u32 count = LIST_BATCH;

		rc = xnf_map_ref_read_batch(&ref, &walk, keys, values, &count);
		if (rc && rc != -ENOENT) {
			snprintf(err, errlen, "cannot read the table '%s': %s", table, strerror(-rc));
			return -1;
		}
		read += count;
		for (__u32 i = 0; i < count; i++) {
			__u64 timeout = idle_time_ns(timeout_ns, &keys[i], &values[i]);

			if (xnf_idle_past(now, values[i].last_seen_ns, timeout)) {
				over++;
				continue;
			}
			if (in_force++ < limit)
				print_connection(out, &keys[i], &values[i], timeout, now);
		}
	} while (rc == 0 && read <= 2ull * ref.max_entries);
	fprintf(out, "{\"table\": \"%s\", \"in_force\": %llu, \"listed\": %llu, \"over_not_swept\": %llu, "
		"\"capacity\": %u}\n", ref.name, (unsigned long long)in_force,
		(unsigned long long)(in_force < limit ? in_force : limit), (unsigned long long)over, ref.max_entries);
	return 0;
}

/* Every side of the NF has its maps natively too (the native build is in every binary): they say which it has. */
void xnf_ct_tables_json(FILE *out)
{
	char twin[256];

	fputc('[', out);
	for (size_t i = 0, shown = 0; xnf_native_map_at(i); i++) {
		const char *name = xnf_native_map_at(i)->name;
		bool table;

		snprintf(twin, sizeof(twin), "%s%s", name, XNF_CT_TIMEOUTS_SUFFIX);
		table = xnf_native_map_find(twin) != NULL;
		snprintf(twin, sizeof(twin), "%s%s", name, XNF_CT_RING_SUFFIX);
		if (table && xnf_native_map_find(twin))
			fprintf(out, "%s\"%s\"", shown++ ? ", " : "", name);
	}
	fputc(']', out);
}
