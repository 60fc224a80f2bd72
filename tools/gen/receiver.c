// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "receiver.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xnf/runtime/log.h>
#include <xnf/runtime/port_checks.h>

#include "probe.h"
#include "recv.skel.h"

/* Whether frames of several buffers can reach XDP on the interface: its MTU passes a page's. */
static bool takes_multi_buffer(const char *ifname)
{
	char path[128];
	unsigned int mtu = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/net/%s/mtu", ifname);
	f = fopen(path, "r");
	if (f && fscanf(f, "%u", &mtu) != 1)
		mtu = 0;
	if (f)
		fclose(f);
	return mtu > XNF_VETH_XDP_MAX_MTU;
}

int receiver_attach(struct receiver *r, const char *ifname, const struct receiver_class *classes, __u32 nclasses,
		    bool check_payload)
{
	LIBBPF_OPTS(bpf_link_create_opts, opts, .flags = XDP_FLAGS_DRV_MODE);
	int ifindex = (int)if_nametoindex(ifname);

	r->link_fd = -1;
	r->ifname = ifname;
	r->nclasses = nclasses;
	r->check_payload = check_payload;
	if (!ifindex) {
		xnf_error("receive interface '%s' does not exist in this network namespace", ifname);
		return -1;
	}
	r->skel = recv_bpf__open();
	if (r->skel) {
		r->skel->rodata->nclasses = nclasses;
		r->skel->rodata->check_payload = check_payload;
		r->skel->rodata->multi_buffer = takes_multi_buffer(ifname);
		if (r->skel->rodata->multi_buffer)
			bpf_program__set_flags(r->skel->progs.xnf_recv,
					       bpf_program__flags(r->skel->progs.xnf_recv) | BPF_F_XDP_HAS_FRAGS);
		for (__u32 i = 0; i < nclasses && i < XNF_GEN_MAX_CLASSES; i++)
			r->skel->rodata->class_first_flow[i] = classes[i].first_flow;
	}
	if (r->skel && recv_bpf__load(r->skel)) {
		recv_bpf__destroy(r->skel);
		r->skel = NULL;
	}
	if (!r->skel) {
		xnf_error("cannot load the receiver's BPF program: %s", strerror(errno));
		return -1;
	}
	r->link_fd = bpf_link_create(bpf_program__fd(r->skel->progs.xnf_recv), ifindex, BPF_XDP, &opts);
	if (r->link_fd < 0) {
		xnf_error("cannot attach the receiver to %s: %s%s", ifname, strerror(-r->link_fd),
			  r->link_fd == -EBUSY || r->link_fd == -EEXIST
				  ? " (it already has an XDP program: the receiver needs the interface to itself)" : "");
		recv_bpf__destroy(r->skel);
		r->skel = NULL;
		return -1;
	}
	return 0;
}

void receiver_detach(struct receiver *r)
{
	if (r->link_fd >= 0)
		close(r->link_fd);
	r->link_fd = -1;
	recv_bpf__destroy(r->skel);
	r->skel = NULL;
}

__u64 latency_bucket_floor(__u32 bucket)
{
	__u32 sub = bucket & ((1 << XNF_LAT_SUB_BITS) - 1), group = bucket >> XNF_LAT_SUB_BITS;

	if (group == 0)
		return bucket;
	return (__u64)((1 << XNF_LAT_SUB_BITS) + sub) << (group - 1);
}

static __u64 bucket_ceiling(__u32 bucket)
{
	return bucket + 1 < XNF_LAT_BUCKETS ? latency_bucket_floor(bucket + 1) : ~0ull;
}

static __u64 sum_percpu(int fd, __u32 key, __u64 *scratch, int ncpus)
{
	__u64 total = 0;

	if (bpf_map_lookup_elem(fd, &key, scratch))
		return 0;
	for (int c = 0; c < ncpus; c++)
		total += scratch[c];
	return total;
}

/* The latency of classes [first, first + n) together; with the histogram, or the summary alone. */
static void write_latency(int fd, int ncpus, __u32 first, __u32 n, bool histogram, FILE *out)
{
	static const struct { const char *name; double q; } quantiles[] = {
		{ "p50", 0.50 }, { "p90", 0.90 }, { "p99", 0.99 }, { "p99_9", 0.999 },
	};
	__u64 counts[XNF_LAT_BUCKETS] = { 0 }, *scratch = calloc(ncpus, sizeof(__u64)), total = 0;
	double weighted = 0;
	__u32 last = 0;

	for (__u32 b = 0; b < XNF_LAT_BUCKETS; b++) {
		for (__u32 c = first; scratch && c < first + n; c++)
			counts[b] += sum_percpu(fd, c * XNF_LAT_BUCKETS + b, scratch, ncpus);
		total += counts[b];
		weighted += (double)counts[b] * (latency_bucket_floor(b) + bucket_ceiling(b)) / 2.0;
		if (counts[b])
			last = b;
	}
	free(scratch);
	fprintf(out, "\"latency_ns\": {\"samples\": %llu", (unsigned long long)total);
	if (total) {
		__u64 seen = 0;
		size_t q = 0;

		for (__u32 b = 0; b < XNF_LAT_BUCKETS && q < 4; b++) {
			seen += counts[b];
			/* a quantile is reported as the upper edge of its bucket: never optimistic */
			while (q < 4 && seen >= quantiles[q].q * total) {
				fprintf(out, ", \"%s\": %llu", quantiles[q].name, (unsigned long long)bucket_ceiling(b));
				q++;
			}
		}
		fprintf(out, ", \"max\": %llu, \"mean\": %.0f", (unsigned long long)bucket_ceiling(last),
			weighted / total);
	}
	if (histogram) {
		fprintf(out, ", \"histogram\": [");
		for (__u32 b = 0, first_bucket = 1; b < XNF_LAT_BUCKETS; b++) {
			if (!counts[b])
				continue;
			fprintf(out, "%s[%llu, %llu]", first_bucket ? "" : ", ", (unsigned long long)latency_bucket_floor(b),
				(unsigned long long)counts[b]);
			first_bucket = 0;
		}
		fprintf(out, "]");
	}
	fprintf(out, "}");
}

/* Frames received on flows [first, first + n), summed over CPUs. */
static __u64 received_on(const struct receiver *r, __u32 first, __u32 n, __u64 *reordered)
{
	int ncpus = libbpf_num_possible_cpus(), fd = bpf_map__fd(r->skel->maps.recv_flows);
	struct xnf_recv_flow *per_cpu = calloc(ncpus, sizeof(*per_cpu));
	__u64 got = 0;

	for (__u32 flow = first; per_cpu && flow < first + n; flow++) {
		if (bpf_map_lookup_elem(fd, &flow, per_cpu))
			continue;
		for (int c = 0; c < ncpus; c++) {
			got += per_cpu[c].packets;
			if (reordered)
				*reordered += per_cpu[c].reordered;
		}
	}
	free(per_cpu);
	return got;
}

int receiver_class_report(const struct receiver *r, const struct receiver_class *c, __u32 index,
			  const __u64 *sent_per_flow, FILE *out)
{
	__u64 sent = 0, received = received_on(r, c->first_flow, c->flows, NULL), lost;

	for (__u32 flow = c->first_flow; flow < c->first_flow + c->flows; flow++)
		sent += sent_per_flow[flow];
	lost = sent > received ? sent - received : 0;
	fprintf(out, "\"received\": %llu, \"lost\": %llu, \"loss_ratio\": %.9f, ", (unsigned long long)received,
		(unsigned long long)lost, sent ? (double)lost / (double)sent : 0.0);
	write_latency(bpf_map__fd(r->skel->maps.recv_latency), libbpf_num_possible_cpus(), index, 1, false, out);
	return 0;
}

int receiver_report(const struct receiver *r, const __u64 *sent_per_flow, __u32 flows, __u64 send_errors,
		    FILE *out)
{
	int ncpus = libbpf_num_possible_cpus();
	struct xnf_recv_flow *per_cpu = calloc(ncpus, sizeof(*per_cpu));
	__u64 *scratch = calloc(ncpus, sizeof(__u64));
	__u64 received = 0, reordered = 0, lost = 0, sent = 0;
	__u32 flows_with_loss = 0;
	int fd = bpf_map__fd(r->skel->maps.recv_flows);

	if (!per_cpu || !scratch) {
		free(per_cpu);
		free(scratch);
		return -ENOMEM;
	}
	for (__u32 flow = 0; flow < flows; flow++) {
		__u64 got = 0;

		if (bpf_map_lookup_elem(fd, &flow, per_cpu))
			continue;
		for (int c = 0; c < ncpus; c++) {
			got += per_cpu[c].packets;
			reordered += per_cpu[c].reordered;
		}
		received += got;
		sent += sent_per_flow[flow];
		if (got < sent_per_flow[flow]) {
			lost += sent_per_flow[flow] - got;
			flows_with_loss++;
		}
	}
	/* Frames refused at send never left: not the DUT's loss. Per flow they cannot be told apart,
	 * so flows_with_loss stays an upper bound when there were any. */
	sent -= send_errors < sent ? send_errors : sent;
	lost = sent > received ? sent - received : 0;
	fd = bpf_map__fd(r->skel->maps.recv_counters);
	fprintf(out, "\"received\": %llu, \"not_probes\": %llu, \"lost\": %llu, \"loss_ratio\": %.9f, "
		"\"flows_with_loss\": %u, \"reordered\": %llu, ",
		(unsigned long long)received, (unsigned long long)sum_percpu(fd, XNF_RECV_OTHER, scratch, ncpus),
		(unsigned long long)lost, sent ? (double)lost / (double)sent : 0.0, flows_with_loss,
		(unsigned long long)reordered);
	if (r->check_payload)
		fprintf(out, "\"payload_checked\": %llu, \"payload_wrong\": %llu, ",
			(unsigned long long)sum_percpu(fd, XNF_RECV_PAYLOAD_CHECKED, scratch, ncpus),
			(unsigned long long)sum_percpu(fd, XNF_RECV_PAYLOAD_WRONG, scratch, ncpus));
	write_latency(bpf_map__fd(r->skel->maps.recv_latency), ncpus, 0, r->nclasses, true, out);
	free(per_cpu);
	free(scratch);
	return 0;
}
