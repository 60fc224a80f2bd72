// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The workers' counters by name: the one list the stats answer and `describe` are written from. */
#include "afxdp_internal.h"

#include <sys/socket.h>

#define WORKER(field) { #field, offsetof(struct xnf_afxdp_worker_stats, field) }

const struct xnf_stat_field xnf_worker_stat_fields[] = {
	WORKER(rx_packets), WORKER(rx_bytes), WORKER(tx_packets), WORKER(tx_bytes), WORKER(tx_ring_full),
	WORKER(fill_empty), WORKER(pass_injected), WORKER(pass_dropped), WORKER(empty_polls), WORKER(wakeups),
	WORKER(busy_polls), WORKER(polls), WORKER(live_calls), WORKER(live_frames), WORKER(live_unsent),
	WORKER(live_refused), WORKER(live_redirect_errors), WORKER(live_device_sent), WORKER(live_device_dropped),
	WORKER(xsk_fallback), WORKER(rx_too_many_buffers), { NULL, 0 },
};

/* The kernel's XDP_STATISTICS, under the names stats has always used. */
const struct xnf_stat_field xnf_socket_stat_fields[] = {
	{ "kernel_rx_dropped", offsetof(struct xdp_statistics, rx_dropped) },
	{ "rx_invalid_descs", offsetof(struct xdp_statistics, rx_invalid_descs) },
	{ "tx_invalid_descs", offsetof(struct xdp_statistics, tx_invalid_descs) },
	{ "rx_ring_full", offsetof(struct xdp_statistics, rx_ring_full) },
	{ "rx_fill_ring_empty", offsetof(struct xdp_statistics, rx_fill_ring_empty_descs) },
	{ "tx_ring_empty", offsetof(struct xdp_statistics, tx_ring_empty_descs) },
	{ NULL, 0 },
};

static void write_fields(FILE *out, const struct xnf_stat_field *fields, const void *values, bool first)
{
	for (size_t i = 0; fields[i].name; i++, first = false)
		fprintf(out, "%s\"%s\": %llu", first ? "" : ", ", fields[i].name,
			*(const unsigned long long *)((const char *)values + fields[i].offset));
}

/* The socket counters summed over the worker's sockets. */
static void sum_socket_stats(const struct afxdp_worker *w, struct xdp_statistics *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (__u32 i = 0; i < w->nsockets; i++) {
		struct xdp_statistics st = { 0 };
		socklen_t len = sizeof(st);

		if (getsockopt(w->sockets[i].fd, SOL_XDP, XDP_STATISTICS, &st, &len))
			continue;
		for (size_t f = 0; xnf_socket_stat_fields[f].name; f++)
			*(__u64 *)((char *)sum + xnf_socket_stat_fields[f].offset) +=
				*(const __u64 *)((const char *)&st + xnf_socket_stat_fields[f].offset);
	}
}

void xnf_afxdp_write_counters(const struct xnf_afxdp *a, __u32 worker, const struct xnf_afxdp_worker_stats *s,
			      FILE *out)
{
	struct xdp_statistics sum;

	sum_socket_stats(&a->workers[worker], &sum);
	write_fields(out, xnf_worker_stat_fields, s, true);
	write_fields(out, xnf_socket_stat_fields, &sum, false);
}
