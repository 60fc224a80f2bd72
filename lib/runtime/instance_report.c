// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* What the control socket answers about an instance: info, stats, frames (JSON). */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xnf/internal/native_maps.h>

#include <xnf/internal/nf_entry.h>
#include <xnf/rules.h>
#include <xnf/runtime/clock.h>
#include <xnf/runtime/conntrack_list.h>
#include <xnf/runtime/json.h>
#include <xnf/runtime/link_facts.h>
#include <xnf/runtime/stats.h>

#include "instance.h"

#define ACCOUNTING_TIMEOUT_MS 2000

/* Opens a JSON object with the fields every answer starts with (the exporter reads the tables from stats). */
static void write_identity(FILE *out, const struct instance *in)
{
	fprintf(out, "{\"name\": ");
	xnf_json_string(out, in->opt->name);
	fprintf(out, ", \"nf\": ");
	xnf_json_string(out, xnf_nf_name);
	fprintf(out, ", \"mode\": ");
	xnf_json_string(out, in->mode->name);
	if (in->opt->chain_split)
		fprintf(out, ", \"split\": %u", in->opt->chain_split);
	fprintf(out, ", \"conntrack_tables\": ");
	xnf_ct_tables_json(out);
}

#define LISTED_TC_PROGRAMS 64

static __u32 program_id(int fd)
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) == 0 ? info.id : 0;
}

/* What runs at the port's TCX ingress, this instance's own among them:
 * , "tc_ingress": [{"id": N, "name": "...", "own": true|false}, ...]. */
static void write_tc_ingress(FILE *out, int ifindex, __u32 own_id)
{
	__u32 ids[LISTED_TC_PROGRAMS], count = 0;

	fprintf(out, ", \"tc_ingress\": [");
	if (xnf_tc_ingress_programs(ifindex, ids, LISTED_TC_PROGRAMS, &count) == 0) {
		for (__u32 i = 0; i < count && i < LISTED_TC_PROGRAMS; i++) {
			struct bpf_prog_info info = { 0 };
			__u32 len = sizeof(info);
			int fd = bpf_prog_get_fd_by_id(ids[i]);

			if (fd >= 0 && bpf_obj_get_info_by_fd(fd, &info, &len) != 0)
				info.name[0] = '\0';
			if (fd >= 0)
				close(fd);
			fprintf(out, "%s{\"id\": %u, \"name\": ", i ? ", " : "", ids[i]);
			xnf_json_string(out, fd >= 0 ? info.name : "?");
			fprintf(out, ", \"own\": %s}", ids[i] == own_id ? "true" : "false");
		}
	}
	fprintf(out, "]");
}

/* The filters at the port's clsact ingress, which run after every TCX program (xnf's own, with --attach clsact,
 * among them): , "clsact_ingress": [{"pref": N, "kind": "bpf", "name": "...", "id": N, "own": true|false}]. */
static void write_clsact_ingress(FILE *out, int ifindex)
{
	struct xnf_tc_filter filters[LISTED_TC_PROGRAMS];
	__u32 count = 0;

	fprintf(out, ", \"clsact_ingress\": [");
	if (xnf_clsact_filters(ifindex, false, filters, LISTED_TC_PROGRAMS, &count) == 0) {
		for (__u32 i = 0; i < count; i++) {
			fprintf(out, "%s{\"pref\": %u, \"kind\": ", i ? ", " : "", filters[i].pref);
			xnf_json_string(out, filters[i].kind);
			fprintf(out, ", \"name\": ");
			xnf_json_string(out, filters[i].name);
			fprintf(out, ", \"id\": %u, \"own\": %s}", filters[i].prog_id,
				filters[i].pref == XNF_TC_PRIORITY ? "true" : "false");
		}
	}
	fprintf(out, "]");
}

int xnf_report_info(void *ctx, FILE *out)
{
	struct instance *in = ctx;

	write_identity(out, in);
	fprintf(out, ", \"pid\": %d, \"has_rules\": %s, \"workers\": %u, \"ports\": [", (int)getpid(),
		xnf_nf_rules ? "true" : "false", in->afxdp ? xnf_afxdp_nworkers(in->afxdp) : 0);
	for (__u32 i = 0; i < in->xdp.nports; i++) {
		fprintf(out, "%s{\"port\": %u, \"iface\": ", i ? ", " : "", i);
		xnf_json_string(out, in->xdp.ports[i].name);
		fprintf(out, ", \"ifindex\": %d", in->xdp.ports[i].ifindex);
		if (in->mode->hook == XNF_AT_TC) {
			write_tc_ingress(out, in->xdp.ports[i].ifindex, program_id(in->xdp.prog_fd));
			write_clsact_ingress(out, in->xdp.ports[i].ifindex);
		}
		fprintf(out, "}");
	}
	fprintf(out, "]}\n");
	return 0;
}

static void write_worker(FILE *out, const struct instance *in, __u32 index,
			 const struct xnf_afxdp_worker_stats *s)
{
	fprintf(out, "{\"worker\": %u, \"tx_path\": {", index);
	for (__u32 p = 0; p < in->xdp.nports; p++) {
		fprintf(out, "%s", p ? ", " : "");
		xnf_json_string(out, in->xdp.ports[p].name);
		fprintf(out, ": \"%s\"", xnf_tx_path_name(xnf_afxdp_tx_path(in->afxdp, p)));
	}
	fprintf(out, "}, ");
	xnf_afxdp_write_counters(in->afxdp, index, s, out);
	fprintf(out, ", \"verdicts\": {");
	for (__u32 slot = 0; slot < XNF_STAT_NSLOTS; slot++)
		fprintf(out, "%s\"%s\": %llu", slot ? ", " : "", xnf_stat_names[slot],
			(unsigned long long)s->verdicts[slot]);
	fprintf(out, "}}");
}

/* In user-space modes the verdicts are the workers'; the kernel only counts frames with no socket.
 * In hybrid mode the kernel counts what it handled and the workers what they forwarded; in a split chain the
 * kernel what its members dropped or passed, the workers the verdicts of the rest. */
static void add_worker_verdicts(struct instance *in, struct xnf_counter totals[XNF_STAT_NSLOTS], FILE *out)
{
	if (out)
		fprintf(out, ", \"workers\": [");
	for (__u32 w = 0; w < xnf_afxdp_nworkers(in->afxdp); w++) {
		struct xnf_afxdp_worker_stats s;

		xnf_afxdp_read_stats(in->afxdp, w, &s);
		if (in->mode->datapath != XNF_DATAPATH_KERNEL) {
			for (__u32 slot = 0; slot < XNF_STAT_NSLOTS; slot++) {
				totals[slot].packets += s.verdicts[slot];
				totals[slot].bytes += s.verdict_bytes[slot];
			}
		}
		if (out) {
			fprintf(out, "%s", w ? ", " : "");
			write_worker(out, in, w, &s);
		}
	}
	if (out)
		fprintf(out, "]");
}

/* The instance's verdict totals, kernel and workers together; then, with out, the workers' JSON. */
static int read_totals(struct instance *in, struct xnf_counter totals[XNF_STAT_NSLOTS], FILE *out)
{
	if (xnf_xdp_read_stats(&in->xdp, totals))
		return -1;
	if (in->mode->datapath == XNF_DATAPATH_USER) {
		/* The kernel program only redirects, dispatches to the local stack (--local), drops by an offloaded
		 * rule (--offload-drops) or before the instance is in force; every other verdict is the workers'. */
		for (__u32 slot = 0; slot < XNF_STAT_NSLOTS; slot++) {
			if (slot != XNF_STAT_REDIRECT_ERROR && slot != XNF_STAT_LOCAL && slot != XNF_STAT_DROP &&
			    slot != XNF_STAT_NOT_READY)
				totals[slot] = (struct xnf_counter){ 0 };
		}
	}
	if (in->afxdp)
		add_worker_verdicts(in, totals, out);
	return 0;
}

void xnf_report_summary(struct instance *in, FILE *out)
{
	struct xnf_counter totals[XNF_STAT_NSLOTS];
	unsigned long long handled = 0;

	if (read_totals(in, totals, NULL))
		return;
	for (__u32 slot = 0; slot < XNF_STAT_NSLOTS; slot++)
		handled += slot == XNF_STAT_MALFORMED ? 0 : totals[slot].packets;
	fprintf(out, "xnf: %s stopped after %.1f s: %llu frames", in->opt->name, xnf_seconds_since(&in->started),
		handled);
	for (__u32 slot = 0, first = 1; slot < XNF_STAT_NSLOTS; slot++) {
		if (!totals[slot].packets)
			continue;
		fprintf(out, "%s%s %llu", first ? " (" : ", ", xnf_stat_names[slot],
			(unsigned long long)totals[slot].packets);
		first = 0;
	}
	fprintf(out, "%s", handled ? ")" : "");
	if (xnf_egress_watch_lost(in->egress))
		fprintf(out, "; %llu sent frames lost after the verdict (xnf stats: egress)",
			(unsigned long long)xnf_egress_watch_lost(in->egress));
	fputc('\n', out);
}

/* Adds one side's per-CPU (or per-worker) values of the NF's counters to totals. */
static void add_counters(const struct xnf_map_ref *ref, __u64 *values, int slots, __u64 totals[XNF_MAX_NF_COUNTERS])
{
	for (__u32 i = 0; i < XNF_MAX_NF_COUNTERS && xnf_nf_counter_names[i]; i++) {
		memset(values, 0, (size_t)slots * sizeof(*values));
		if (xnf_map_ref_lookup(ref, &i, values) == 0) {
			for (int c = 0; c < slots; c++)
				totals[i] += values[c];
		}
	}
}

/* The NF's own counters by name, summed over CPUs (kernel) or workers (native); a split chain's members count
 * on the side that runs them, so both sides are summed. */
static void write_nf_counters(FILE *out, struct instance *in)
{
	struct xnf_rules_target maps = xnf_instance_maps(in);
	__u64 totals[XNF_MAX_NF_COUNTERS] = { 0 };
	int slots = libbpf_num_possible_cpus();
	struct xnf_map_ref ref;
	__u64 *values;

	if (slots < XNF_NATIVE_MAX_CPUS)
		slots = XNF_NATIVE_MAX_CPUS;
	values = calloc((size_t)slots, sizeof(*values));
	if (values && in->mode->datapath == XNF_DATAPATH_SPLIT) {
		if (xnf_xdp_resolve_map(&in->xdp, "xnf_nf_counters", &ref) == 0)
			add_counters(&ref, values, slots, totals);
		if (xnf_native_resolve_map(NULL, "xnf_nf_counters", &ref) == 0)
			add_counters(&ref, values, slots, totals);
	} else if (values && maps.resolve(maps.ctx, "xnf_nf_counters", &ref) == 0) {
		add_counters(&ref, values, slots, totals);
	}
	fprintf(out, ", \"counters\": {");
	for (__u32 i = 0; values && i < XNF_MAX_NF_COUNTERS && xnf_nf_counter_names[i]; i++) {
		fprintf(out, "%s", i ? ", " : "");
		xnf_json_string(out, xnf_nf_counter_names[i]);
		fprintf(out, ": %llu", (unsigned long long)totals[i]);
	}
	fprintf(out, "}");
	free(values);
}

int xnf_report_stats(void *ctx, FILE *out)
{
	struct instance *in = ctx;
	struct xnf_counter totals[XNF_STAT_NSLOTS];

	write_identity(out, in);
	fprintf(out, ", \"uptime_s\": %.3f", xnf_seconds_since(&in->started));
	if (read_totals(in, totals, out))
		return -1;
	write_nf_counters(out, in);
	if (in->offload)
		drop_offload_report(in->offload, out);
	if (xnf_egress_watch_json(in->egress, out))
		return -1;
	port_guard_json(&in->ports, out);
	fprintf(out, ", \"verdicts\": {");
	for (__u32 slot = 0; slot < XNF_STAT_NSLOTS; slot++)
		fprintf(out, "%s\"%s\": {\"packets\": %llu, \"bytes\": %llu}", slot ? ", " : "", xnf_stat_names[slot],
			(unsigned long long)totals[slot].packets, (unsigned long long)totals[slot].bytes);
	fprintf(out, "}}\n");
	return 0;
}

int xnf_report_frames(void *ctx, FILE *out)
{
	struct instance *in = ctx;
	struct xnf_frame_accounting acc[XNF_MAX_WORKERS];
	__u32 n;

	if (!in->afxdp)
		return -1;
	n = xnf_afxdp_nworkers(in->afxdp);
	if (xnf_afxdp_account(in->afxdp, acc, ACCOUNTING_TIMEOUT_MS))
		return -1;
	fprintf(out, "{\"workers\": [");
	for (__u32 w = 0; w < n; w++)
		fprintf(out, "%s{\"worker\": %u, \"total\": %llu, \"free\": %llu, \"fill\": %llu, \"rx\": %llu, "
			"\"worker_held\": %llu, \"tx\": %llu, \"completion\": %llu, \"kernel\": %llu, "
			"\"tx_inflight\": %llu, \"duplicates\": %llu, \"invalid\": %llu}",
			w ? ", " : "", w, (unsigned long long)acc[w].total, (unsigned long long)acc[w].free,
			(unsigned long long)acc[w].fill, (unsigned long long)acc[w].rx,
			(unsigned long long)acc[w].worker, (unsigned long long)acc[w].tx,
			(unsigned long long)acc[w].completion, (unsigned long long)acc[w].kernel,
			(unsigned long long)acc[w].tx_inflight, (unsigned long long)acc[w].duplicates,
			(unsigned long long)acc[w].invalid);
	fprintf(out, "]}\n");
	return 0;
}
