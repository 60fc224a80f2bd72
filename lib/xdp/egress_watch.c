// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The egress watcher's loader and its counts (egress_watch.h). */
#include <xnf/runtime/egress_watch.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <xnf/runtime/json.h>
#include <xnf/runtime/link_facts.h>

#include "egress_watch_abi.h"
#include "egress_watch.skel.h"

_Static_assert(XNF_EGRESS_MAX_PORTS == XNF_MAX_PORTS, "the watcher counts every port");

struct xnf_egress_watch {
	struct egress_watch_bpf *skel;
	__u32 nports;
	struct xnf_port ports[XNF_MAX_PORTS];
};

struct xnf_egress_watch *xnf_egress_watch_open(const struct xnf_port *ports, __u32 nports, int ports_map_fd,
					       char *err, size_t err_len)
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
	if ((rc = xnf_netns_cookie_here(&cookie)) || (rc = bpf_obj_get_info_by_fd(ports_map_fd, &info, &len) ? -errno : 0)) {
		snprintf(err, err_len, "cannot identify the ports (%s)", strerror(-rc));
		goto fail;
	}
	w->skel = egress_watch_bpf__open();
	if (!w->skel) {
		snprintf(err, err_len, "cannot open its programs (%s)", strerror(errno));
		goto fail;
	}
	w->nports = nports;
	memcpy(w->ports, ports, nports * sizeof(*ports));
	w->skel->rodata->netns_cookie = cookie;
	w->skel->rodata->nports = nports;
	w->skel->rodata->ports_map_id = info.id;
	for (__u32 p = 0; p < nports; p++)
		w->skel->rodata->port_ifindex[p] = (__u32)ports[p].ifindex;
	if ((rc = egress_watch_bpf__load(w->skel)) || (rc = egress_watch_bpf__attach(w->skel))) {
		snprintf(err, err_len, "this kernel does not let its tracepoint programs %s (%s)",
			 w->skel->links.xnf_egress_redirect_err ? "attach" : "load", strerror(-rc));
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
