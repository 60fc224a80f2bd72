// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnf dump's server side: a control request "capture VERDICTS COUNT SNAP AT [FILTER]" keeps its connection,
 * and a thread sends it the frames given those verdicts (AT exit, each with its verdict), and every frame as it
 * came in (AT entry, or both), SNAP bytes of each at most, those a libpcap filter expression matches if one is
 * given, from the kernel's ring buffer (the NF in XDP) and from the workers'
 * capture queues (the NF in user space), until COUNT frames (0: no limit), the client closes its side (Ctrl-C:
 * it still gets the totals), or the instance stops. One capture at a time per instance; with none running the
 * data path only tests a switch. A reader slower than the traffic, or paused (Ctrl-S, SIGSTOP), holds the
 * session back as long as it likes: meanwhile the kernel's ring and the workers' queues drop what does not fit
 * and count it, and the totals say how many. It never ends a capture by itself.
 *
 * The stream after "ok\n": one JSON line (the verdicts' names by slot, the ports, the snap length and the
 * offset from CLOCK_MONOTONIC to the wall clock), then records (struct xnf_capture_header and cap_len bytes),
 * then a header whose side is XNF_CAPTURE_END and a JSON line with the totals.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <xnf/internal/capture_abi.h>
#include <xnf/runtime/json.h>
#include <xnf/runtime/log.h>
#include <xnf/runtime/stats.h>

#include "capture_filter.h"
#include "capture_session.h"
#include "instance.h"

const char *const capture_side_names[] = {
	[XNF_CAPTURE_KERNEL] = "xdp",
	[XNF_CAPTURE_WORKER] = "worker",
	[XNF_CAPTURE_TC] = "tc",
	NULL,
};

#define POLL_MS 20

struct capture_session {
	struct instance *in;
	int fd;
	__u32 slots;
	__u32 at;                   /* XNF_CAPTURE_AT_ENTRY, XNF_CAPTURE_AT_EXIT */
	__u32 snap;
	struct capture_filter *filter; /* or NULL: every frame */
	__u64 filtered;             /* records the filter did not match */
	__u64 limit, captured;
	int ctl_fd;                 /* the kernel's switch, or -1 when the NF does not run there */
	struct ring_buffer *ring;   /* the kernel's records, or NULL */
	__u64 kernel_lost_before, worker_lost_before;
	bool client_done;           /* the client closed its side: finish with the totals */
	bool client_gone;           /* it is gone: nothing more can be sent */
	bool ending;                /* sending the end: an instance that stops gives it END_WAIT_MS */
	atomic_bool stop;
	atomic_bool done;
	pthread_t thread;
};

static __u64 now_ns(clockid_t clock)
{
	struct timespec t;

	clock_gettime(clock, &t);
	return (__u64)t.tv_sec * 1000000000ull + (__u64)t.tv_nsec;
}

/* entry, exit or both. */
static int parse_at(const char *text, __u32 *at, char *err, size_t errlen)
{
	*at = !strcmp(text, "entry") ? XNF_CAPTURE_AT_ENTRY : !strcmp(text, "exit") ? XNF_CAPTURE_AT_EXIT :
	      !strcmp(text, "both") ? XNF_CAPTURE_AT_ENTRY | XNF_CAPTURE_AT_EXIT : 0;
	return *at ? 0 : -1;
}

/* A frame is captured by its verdict; malformed is a reason, not a verdict, and a not_ready frame is dropped
 * before the capture points. */
static bool capturable(__u32 slot)
{
	return slot != XNF_STAT_MALFORMED && slot != XNF_STAT_NOT_READY;
}

/* "all", or verdict names joined by commas. */
static int parse_slots(const char *text, __u32 *slots, char *err, size_t errlen)
{
	char copy[256], *save = NULL;

	*slots = 0;
	if (strcmp(text, "all") == 0) {
		for (__u32 slot = 0; slot < XNF_STAT_NSLOTS; slot++)
			if (capturable(slot))
				*slots |= 1u << slot;
		return 0;
	}
	snprintf(copy, sizeof(copy), "%s", text);
	for (char *name = strtok_r(copy, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		__u32 slot = 0;

		while (slot < XNF_STAT_NSLOTS && (!capturable(slot) || strcmp(name, xnf_stat_names[slot])))
			slot++;
		if (slot == XNF_STAT_NSLOTS) {
			snprintf(err, errlen, "no verdict '%s' to capture: give all, or some of abort, drop, pass, tx, "
				 "redirect, redirect_error, local", name);
			return -1;
		}
		*slots |= 1u << slot;
	}
	if (!*slots)
		snprintf(err, errlen, "capture needs at least one verdict, or all");
	return *slots ? 0 : -1;
}

/* Sends the whole buffer, waiting for the reader as long as it takes, in short waits so that the instance's
 * stop still gets through: then the wait ends (after END_WAIT_MS for the capture's end, which the reader should
 * get if it reads at all). -1 once the client is gone, or the instance stops. */
#define END_WAIT_MS 1000

static int send_all(struct capture_session *c, const void *buf, size_t len)
{
	const char *p = buf;
	int waited_stopping_ms = 0;

	while (len) {
		struct pollfd out = { .fd = c->fd, .events = POLLOUT };
		ssize_t n = send(c->fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
			if (atomic_load(&c->stop) && (!c->ending || (waited_stopping_ms += POLL_MS) > END_WAIT_MS))
				return -1;
			poll(&out, 1, POLL_MS);
			continue;
		}
		if (n <= 0) {
			c->client_gone = true;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Sends one record; non-zero once the capture has all it wants. */
static int emit(void *ctx, const struct xnf_capture_record *r)
{
	struct capture_session *c = ctx;

	if (c->client_gone || c->client_done || (c->limit && c->captured >= c->limit))
		return 1;
	if (c->filter && !capture_filter_match(c->filter, r->data, r->h.cap_len, r->h.wire_len)) {
		c->filtered++;
		return 0;
	}
	if (send_all(c, r, sizeof(r->h) + r->h.cap_len))
		return 1;
	c->captured++;
	return c->limit && c->captured >= c->limit;
}

static int on_kernel_record(void *ctx, void *data, size_t size)
{
	if (size < sizeof(struct xnf_capture_header))
		return 0;
	return emit(ctx, data) ? -1 : 0; /* negative: libbpf stops reading this round */
}

/* The client closed its side (what xnf dump does on Ctrl-C: it still reads the end), or went away. */
static void look_at_client(struct capture_session *c)
{
	struct pollfd p = { .fd = c->fd, .events = POLLIN | POLLRDHUP };
	char byte;

	if (poll(&p, 1, 0) <= 0)
		return;
	if (p.revents & (POLLHUP | POLLERR))
		c->client_gone = true;
	else if ((p.revents & POLLRDHUP) || recv(c->fd, &byte, 1, MSG_DONTWAIT) <= 0)
		c->client_done = true;
}

static int read_kernel_control(int fd, struct xnf_capture_control *ctl)
{
	__u32 zero = 0;

	return fd < 0 ? -1 : bpf_map_lookup_elem(fd, &zero, ctl);
}

/* The kernel's switch: the verdicts captured at the exit, the entry or not, the snap length (off: all 0). */
static void set_kernel_switch(struct capture_session *c, __u32 slots, __u32 at)
{
	struct xnf_capture_control ctl = { 0 };
	__u32 zero = 0;

	if (c->ctl_fd < 0)
		return;
	read_kernel_control(c->ctl_fd, &ctl);
	ctl.slots = slots;
	ctl.at = at;
	ctl.snap = c->snap;
	bpf_map_update_elem(c->ctl_fd, &zero, &ctl, BPF_ANY);
}

static void switch_on(struct capture_session *c)
{
	struct xnf_capture_control ctl = { 0 };

	if (read_kernel_control(c->ctl_fd, &ctl) == 0)
		c->kernel_lost_before = ctl.lost;
	set_kernel_switch(c, c->at & XNF_CAPTURE_AT_EXIT ? c->slots : 0, c->at);
	if (c->in->afxdp && (c->at & XNF_CAPTURE_AT_EXIT)) {
		c->worker_lost_before = xnf_afxdp_capture_lost(c->in->afxdp);
		xnf_afxdp_capture_set(c->in->afxdp, c->slots);
	}
}

static int discard(void *ctx, const struct xnf_capture_record *r)
{
	(void)ctx;
	(void)r;
	return 1;
}

static void switch_off_and_report(struct capture_session *c)
{
	struct xnf_capture_control ctl = { 0 };
	struct xnf_capture_header end = { .side = XNF_CAPTURE_END };
	__u64 kernel_lost = 0, worker_lost = 0;
	char totals[256];
	int n;

	set_kernel_switch(c, 0, 0);
	if (read_kernel_control(c->ctl_fd, &ctl) == 0)
		kernel_lost = ctl.lost - c->kernel_lost_before;
	if (c->ring)
		while (ring_buffer__consume(c->ring) > 0)
			; /* what is left of this capture must not open the next one */
	if (c->in->afxdp) {
		xnf_afxdp_capture_set(c->in->afxdp, 0);
		worker_lost = xnf_afxdp_capture_lost(c->in->afxdp) - c->worker_lost_before;
		xnf_afxdp_capture_drain(c->in->afxdp, discard, NULL);
	}
	if (c->client_gone)
		return;
	n = snprintf(totals, sizeof(totals), "{\"captured\": %llu, \"lost_in_kernel\": %llu, \"lost_in_workers\": %llu, "
		     "\"filtered\": %llu, \"ended_by\": \"%s\"}\n", (unsigned long long)c->captured,
		     (unsigned long long)kernel_lost, (unsigned long long)worker_lost, (unsigned long long)c->filtered,
		     c->client_done ? "client" : atomic_load(&c->stop) ? "instance stopping" : "count");
	c->ending = true;
	if (send_all(c, &end, sizeof(end)) == 0)
		send_all(c, totals, (size_t)n);
}

static void *capture_main(void *arg)
{
	struct capture_session *c = arg;
	struct timespec pause = { .tv_nsec = POLL_MS * 1000000L };

	switch_on(c);
	while (!atomic_load(&c->stop) && !c->client_gone && !c->client_done && !(c->limit && c->captured >= c->limit)) {
		if (c->ring)
			ring_buffer__poll(c->ring, POLL_MS);
		else
			nanosleep(&pause, NULL);
		if (c->in->afxdp)
			xnf_afxdp_capture_drain(c->in->afxdp, emit, c);
		look_at_client(c);
	}
	switch_off_and_report(c);
	close(c->fd);
	atomic_store(&c->done, true);
	return NULL;
}

static void write_stream_header(FILE *out, const struct capture_session *c)
{
	const struct instance *in = c->in;

	fprintf(out, "ok\n{\"snap\": %u, \"entry_slot\": %d, \"realtime_minus_monotonic_ns\": %lld, \"verdicts\": [",
		c->snap, XNF_CAPTURE_SLOT_ENTRY, (long long)(now_ns(CLOCK_REALTIME) - now_ns(CLOCK_MONOTONIC)));
	for (__u32 slot = 0; slot < XNF_STAT_NSLOTS; slot++)
		fprintf(out, "%s\"%s\"", slot ? ", " : "", xnf_stat_names[slot]);
	fprintf(out, "], \"ports\": [");
	for (__u32 i = 0; i < in->xdp.nports; i++) {
		fprintf(out, "%s{\"port\": %u, \"iface\": ", i ? ", " : "", i);
		xnf_json_string(out, in->xdp.ports[i].name);
		fprintf(out, ", \"ifindex\": %d}", in->xdp.ports[i].ifindex);
	}
	fprintf(out, "]}\n");
}

/* Connects the session to the data path's sources: the kernel's ring when the NF runs there, or when frames are
 * taken as they came in (the kernel program sees them first in every mode). */
static int open_sources(struct capture_session *c, char *err, size_t errlen)
{
	struct instance *in = c->in;
	struct xnf_map_ref ctl, ring;

	c->ctl_fd = -1;
	if ((in->mode->datapath != XNF_DATAPATH_USER || (c->at & XNF_CAPTURE_AT_ENTRY)) &&
	    xnf_xdp_resolve_map(&in->xdp, "xnf_capture_ctl", &ctl) == 0 &&
	    xnf_xdp_resolve_map(&in->xdp, "xnf_capture_ring", &ring) == 0) {
		c->ctl_fd = ctl.fd;
		c->ring = ring_buffer__new(ring.fd, on_kernel_record, c, NULL);
		if (!c->ring) {
			snprintf(err, errlen, "cannot read the capture ring: %s", strerror(errno));
			return -1;
		}
	}
	if (in->afxdp && xnf_afxdp_capture_open(in->afxdp, c->snap)) {
		snprintf(err, errlen, "no memory for the workers' capture queues");
		return -1;
	}
	return 0;
}

static void session_free(struct capture_session *c)
{
	if (!c)
		return;
	ring_buffer__free(c->ring);
	capture_filter_free(c->filter);
	free(c);
}

int capture_session_start(struct instance *in, int fd, const char *args, char *err, size_t errlen)
{
	char verdicts[256], at[16], *header = NULL;
	unsigned long long limit;
	__u32 snap, at_bits;
	int filter_at = 0;
	size_t header_len = 0;
	struct capture_session *c;
	FILE *out;

	if (in->capture && !atomic_load(&in->capture->done)) {
		snprintf(err, errlen, "a capture is already running on this instance (one at a time): stop it first");
		return -1;
	}
	capture_session_stop(in);
	if (sscanf(args, "%255s %llu %u %15s %n", verdicts, &limit, &snap, at, &filter_at) != 4 ||
	    parse_at(at, &at_bits, err, errlen)) {
		snprintf(err, errlen, "capture takes VERDICTS COUNT SNAP AT [FILTER]: all or verdict names joined by "
			 "commas, 0 for no limit, 1-%d bytes (0: whole frames), entry, exit or both, and a tcpdump filter "
			 "expression",
			 XNF_CAPTURE_SNAP_MAX);
		return -1;
	}
	if (snap == 0) /* tcpdump's -s 0: the whole frame */
		snap = XNF_CAPTURE_SNAP_MAX;
	if (snap > XNF_CAPTURE_SNAP_MAX) {
		snprintf(err, errlen, "a snap length of %u: give 1 to %d bytes", snap, XNF_CAPTURE_SNAP_MAX);
		return -1;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	*c = (struct capture_session){ .in = in, .fd = fd, .limit = limit, .snap = snap, .at = at_bits };
	if (args[filter_at] && !(c->filter = capture_filter_compile(args + filter_at, snap, err, errlen))) {
		session_free(c);
		return -1;
	}
	if (parse_slots(verdicts, &c->slots, err, errlen) || open_sources(c, err, errlen)) {
		session_free(c);
		return -1;
	}
	out = open_memstream(&header, &header_len);
	if (!out) {
		session_free(c);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	write_stream_header(out, c);
	fclose(out);
	if (send_all(c, header, header_len) || pthread_create(&c->thread, NULL, capture_main, c)) {
		free(header);
		session_free(c);
		close(fd);
		return 0; /* the client is gone, or the thread could not start: the connection is closed either way */
	}
	free(header);
	in->capture = c;
	return 0;
}

void capture_session_stop(struct instance *in)
{
	if (!in->capture)
		return;
	atomic_store(&in->capture->stop, true);
	pthread_join(in->capture->thread, NULL);
	session_free(in->capture);
	in->capture = NULL;
}
