// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The egress watcher's loader and its counts (egress_watch.h). */
#include <xnf/runtime/egress_watch.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <xnf/runtime/json.h>
#include <xnf/runtime/kernel.h>
#include <xnf/runtime/link_facts.h>

#include "egress_watch_abi.h"
#include "egress_watch.skel.h"

_Static_assert(XNF_EGRESS_MAX_PORTS == XNF_MAX_PORTS, "the watcher counts every port");

struct xnf_egress_watch {
	struct egress_watch_bpf *skel;
	__u32 nports;
	struct xnf_port ports[XNF_MAX_PORTS];
};

/* The functions that carry out a tc redirect after the program returns, and free the skb where they cannot. */
static const char *const redirect_texts[XNF_EGRESS_REDIRECT_TEXTS] = { "skb_do_redirect", "__bpf_redirect",
								       "__bpf_redirect.cold" };

static int kallsyms_starts(FILE *f, __u64 *start)
{
	char line[512], name[256], type;
	unsigned long long at;
	int found = 0;

	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &at, &type, name) != 3)
			continue;
		for (int i = 0; i < XNF_EGRESS_REDIRECT_TEXTS; i++) {
			if (!start[i] && strcmp(name, redirect_texts[i]) == 0) {
				start[i] = at;
				found++;
			}
		}
	}
	return found;
}

/* Each function's end: the next symbol's address above its start. */
static void kallsyms_ends(FILE *f, const __u64 *start, __u64 *end)
{
	char line[512];
	unsigned long long at;

	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx", &at) != 1)
			continue;
		for (int i = 0; i < XNF_EGRESS_REDIRECT_TEXTS; i++) {
			if (start[i] && at > start[i] && (!end[i] || at < end[i]))
				end[i] = at;
		}
	}
}

/* Where the redirect's code lies, from /proc/kallsyms; the first function must be found, and its address shown. */
static int redirect_text(__u64 *start, __u64 *end)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	int found;

	if (!f)
		return -errno;
	found = kallsyms_starts(f, start);
	rewind(f);
	kallsyms_ends(f, start, end);
	fclose(f);
	return found && start[0] && end[0] ? 0 : -ENOENT;
}

static int watch_tc(struct egress_watch_bpf *skel, char *err, size_t err_len)
{
	__u64 start[XNF_EGRESS_REDIRECT_TEXTS] = { 0 }, end[XNF_EGRESS_REDIRECT_TEXTS] = { 0 };
	int rc = redirect_text(start, end);

	if (rc) {
		snprintf(err, err_len, "cannot find the kernel's redirect code in /proc/kallsyms (%s: its addresses "
			 "show only to root with kernel.kptr_restrict below 2)", strerror(-rc));
		return rc;
	}
	for (int i = 0; i < XNF_EGRESS_REDIRECT_TEXTS; i++) {
		skel->rodata->redirect_text_start[i] = start[i];
		skel->rodata->redirect_text_end[i] = end[i];
	}
	return 0;
}

/* At tc only the skb program counts; at XDP every program but it. */
static void choose_programs(struct egress_watch_bpf *skel, bool at_tc)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, skel->obj)
		bpf_program__set_autoload(prog, (prog == skel->progs.xnf_egress_skb_refused) == at_tc);
}

struct xnf_egress_watch *xnf_egress_watch_open(const struct xnf_port *ports, __u32 nports, int ports_map_fd,
					       bool at_tc, char *err, size_t err_len)
{
	struct bpf_map_info info = { 0 };
	__u32 len = sizeof(info);
	struct xnf_egress_watch *w = calloc(1, sizeof(*w));
	__u64 cookie;
	int rc;

	if (!w) {
		snprintf(err, err_len, "out of memory");
		return NULL;
	}
	if (!xnf_kernel_has(XNF_KF_TP_BTF) || !xnf_kernel_has(XNF_KF_BTF)) {
		xnf_kernel_refusal(xnf_kernel_has(XNF_KF_BTF) ? XNF_KF_TP_BTF : XNF_KF_BTF, err, err_len);
		goto fail;
	}
	if ((rc = xnf_netns_cookie_here(&cookie)) || (rc = bpf_obj_get_info_by_fd(ports_map_fd, &info, &len) ? -errno : 0)) {
		snprintf(err, err_len, "cannot identify the ports: %s", strerror(-rc));
		goto fail;
	}
	w->skel = egress_watch_bpf__open();
	if (!w->skel) {
		snprintf(err, err_len, "cannot open its programs: %s", strerror(errno));
		goto fail;
	}
	w->nports = nports;
	memcpy(w->ports, ports, nports * sizeof(*ports));
	w->skel->rodata->netns_cookie = cookie;
	w->skel->rodata->nports = nports;
	w->skel->rodata->ports_map_id = info.id;
	for (__u32 p = 0; p < nports; p++)
		w->skel->rodata->port_ifindex[p] = (__u32)ports[p].ifindex;
	choose_programs(w->skel, at_tc);
	if (at_tc && watch_tc(w->skel, err, err_len))
		goto fail;
	if ((rc = egress_watch_bpf__load(w->skel)) || (rc = egress_watch_bpf__attach(w->skel))) {
		snprintf(err, err_len, "this kernel does not let it %s its tracepoint programs: %s",
			 w->skel->links.xnf_egress_redirect_err || w->skel->links.xnf_egress_skb_refused ?
			 "attach" : "load", strerror(-rc));
		goto fail;
	}
	return w;
fail:
	xnf_egress_watch_close(w);
	return NULL;
}

void xnf_egress_watch_close(struct xnf_egress_watch *w)
{
	if (!w)
		return;
	egress_watch_bpf__destroy(w->skel);
	free(w);
}

/* Port p's counts summed over CPUs. */
static int read_port(const struct xnf_egress_watch *w, __u32 p, struct xnf_egress_counts *sum)
{
	int ncpus = libbpf_num_possible_cpus(), err;
	struct xnf_egress_counts *per_cpu;

	memset(sum, 0, sizeof(*sum));
	if (ncpus <= 0)
		return -EINVAL;
	per_cpu = calloc((size_t)ncpus, sizeof(*per_cpu));
	if (!per_cpu)
		return -ENOMEM;
	err = bpf_map_lookup_elem(bpf_map__fd(w->skel->maps.xnf_egress), &p, per_cpu);
	for (int c = 0; !err && c < ncpus; c++) {
		sum->sent += per_cpu[c].sent;
		sum->dropped += per_cpu[c].dropped;
		sum->refused += per_cpu[c].refused;
		if (per_cpu[c].last_error)
			sum->last_error = per_cpu[c].last_error;
	}
	free(per_cpu);
	return err;
}

int xnf_egress_watch_json(const struct xnf_egress_watch *w, FILE *out)
{
	struct xnf_egress_counts counts[XNF_MAX_PORTS], total = { 0 };

	if (!w)
		return 0;
	for (__u32 p = 0; p < w->nports; p++) {
		int err = read_port(w, p, &counts[p]);

		if (err)
			return err;
		total.sent += counts[p].sent;
		total.dropped += counts[p].dropped;
		total.refused += counts[p].refused;
	}
	fprintf(out, ", \"egress\": {\"sent\": %llu, \"dropped\": %llu, \"refused\": %llu, \"ports\": [",
		(unsigned long long)total.sent, (unsigned long long)total.dropped, (unsigned long long)total.refused);
	for (__u32 p = 0; p < w->nports; p++) {
		fprintf(out, "%s{\"iface\": ", p ? ", " : "");
		xnf_json_string(out, w->ports[p].name);
		fprintf(out, ", \"sent\": %llu, \"dropped\": %llu, \"refused\": %llu, \"last_error\": ",
			(unsigned long long)counts[p].sent, (unsigned long long)counts[p].dropped,
			(unsigned long long)counts[p].refused);
		xnf_json_string(out, counts[p].last_error ? strerror((int)-counts[p].last_error) : "");
		fprintf(out, "}");
	}
	fprintf(out, "]}");
	return 0;
}

__u64 xnf_egress_watch_lost(const struct xnf_egress_watch *w)
{
	struct xnf_egress_counts c;
	__u64 lost = 0;

	for (__u32 p = 0; w && p < w->nports; p++) {
		if (read_port(w, p, &c) == 0)
			lost += c.dropped + c.refused;
	}
	return lost;
}
