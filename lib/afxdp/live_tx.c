// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Loading the live-frames transmit program for an instance and calling it.
 *
 * Two kernel facts shape this file:
 * - The UMEM is the program's own xnf_live_umem map (an mmapable array the
 *   workers map and register as AF_XDP memory), so the program reads each
 *   frame where the kernel received it: one copy per frame, into the live
 *   frame, and none in user space.
 * - BPF_PROG_RUN adds an XDP program to the kernel's XDP dispatcher for the
 *   call and removes it after, waiting for RCU (~30 ms) each time, unless the
 *   program is attached somewhere. It is attached (generic mode) to the
 *   loopback of a private network namespace that only this process holds, so
 *   no packet ever runs it there, and it goes away with the process.
 */
#include "live_tx.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_link.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <xnf/runtime/kernel.h>

#include "live_tx.skel.h"

/* The kernel's own batch inside a call: 64 (its default); larger was slower where measured. */
#define KERNEL_BATCH 64
/* The loopback device has this index in every network namespace. */
#define LOOPBACK_IFINDEX 1
#define PAGE 4096

struct xnf_live_tx {
	struct live_tx_bpf *skel;
	int prog_fd;
	/* A call enters on a port: one whose frames the NF passed, which the stack then receives there; port 0
	 * otherwise (a redirect picks each frame's egress whatever the ingress). */
	int port_ifindex[XNF_LIVE_MAX_PORTS];
	__u32 nworkers;
	__u32 frame_size;
	__u32 *first_frame;
	void *umem;
	size_t umem_len;
	struct xnf_live_desc *descs;
	size_t descs_len;
	struct xnf_live_cursor *cursors;
	size_t cursors_len;
	struct bpf_link *tracepoints[2];
	int hold_link_fd;
	int hold_netns_fd;
};

static const __u8 seed_frame[XNF_LIVE_SEED_LEN + XNF_LIVE_MAX_WORKERS];

static void say(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

static void *map_shared(int fd, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

static size_t page_round(size_t n)
{
	return (n + PAGE - 1) / PAGE * PAGE;
}

/* ---------------------------------------------------------------- holding the program in the dispatcher */

struct hold {
	int prog_fd;
	int link_fd;
	int netns_fd;
	int err;
};

/* Runs on a thread of its own: unshare() moves only the calling thread into the new namespace. */
static void *hold_in_private_netns(void *arg)
{
	struct hold *h = arg;
	LIBBPF_OPTS(bpf_link_create_opts, opts, .flags = XDP_FLAGS_SKB_MODE);

	if (unshare(CLONE_NEWNET)) {
		h->err = -errno;
		return NULL;
	}
	/* The namespace lives while this descriptor is open, and the attachment with it. */
	h->netns_fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (h->netns_fd < 0) {
		h->err = -errno;
		return NULL;
	}
	h->link_fd = bpf_link_create(h->prog_fd, LOOPBACK_IFINDEX, BPF_XDP, &opts);
	if (h->link_fd < 0)
		h->err = h->link_fd;
	return NULL;
}

static int hold_program(struct xnf_live_tx *t, char *err, size_t err_len)
{
	struct hold h = { .prog_fd = t->prog_fd, .link_fd = -1, .netns_fd = -1 };
	pthread_t thread;
	int rc = pthread_create(&thread, NULL, hold_in_private_netns, &h);

	if (rc == 0)
		pthread_join(thread, NULL);
	else
		h.err = -rc;
	t->hold_link_fd = h.link_fd;
	t->hold_netns_fd = h.netns_fd;
	if (h.err == 0)
		return 0;
	say(err, err_len, "cannot keep the transmit program in the kernel's XDP dispatcher (it is attached to the "
	    "loopback of a private network namespace, which needs CAP_SYS_ADMIN): %s; without that every call "
	    "would wait ~30 ms", strerror(-h.err));
	return -1;
}

/* ---------------------------------------------------------------- loading */

static int size_maps(struct xnf_live_tx *t, const struct xnf_port *ports, __u32 nports, __u64 total_frames,
		     char *err, size_t err_len)
{
	struct live_tx_bpf *s = t->skel;

	s->rodata->frame_size = t->frame_size;
	s->rodata->nports = nports;
	for (__u32 p = 0; p < nports; p++)
		s->rodata->port_ifindex[p] = (__u32)ports[p].ifindex;
	if (bpf_map__set_value_size(s->maps.xnf_live_umem, t->frame_size) ||
	    bpf_map__set_max_entries(s->maps.xnf_live_umem, (__u32)total_frames) ||
	    bpf_map__set_max_entries(s->maps.xnf_live_descs, t->nworkers * XNF_LIVE_MAX_BATCH) ||
	    bpf_map__set_max_entries(s->maps.xnf_live_cursors, t->nworkers)) {
		say(err, err_len, "cannot size the live-frames transmit maps: %s", strerror(errno));
		return -1;
	}
	/* Only the tracepoints attach through the skeleton; the XDP program is called, and held (below). */
	bpf_program__set_autoattach(s->progs.xnf_live_tx, false);
	return 0;
}

static int fill_ports(struct xnf_live_tx *t, const struct xnf_port *ports, __u32 nports, char *err, size_t err_len)
{
	int fd = bpf_map__fd(t->skel->maps.xnf_live_ports);

	for (__u32 p = 0; p < nports; p++) {
		__u32 ifindex = (__u32)ports[p].ifindex;

		if (bpf_map_update_elem(fd, &p, &ifindex, BPF_ANY)) {
			say(err, err_len, "%s cannot be a destination of XDP redirects: %s", ports[p].name,
			    strerror(errno));
			return -1;
		}
	}
	return 0;
}

static int note_program_id(struct xnf_live_tx *t, char *err, size_t err_len)
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(t->prog_fd, &info, &len)) {
		say(err, err_len, "cannot read the live-frames transmit program's id: %s", strerror(errno));
		return -1;
	}
	t->skel->bss->live_prog_id = info.id;
	return 0;
}

static int map_shared_areas(struct xnf_live_tx *t, __u64 total_frames, char *err, size_t err_len)
{
	struct live_tx_bpf *s = t->skel;

	t->umem_len = page_round(total_frames * t->frame_size);
	t->descs_len = page_round((size_t)t->nworkers * XNF_LIVE_MAX_BATCH * sizeof(struct xnf_live_desc));
	t->cursors_len = page_round((size_t)t->nworkers * sizeof(struct xnf_live_cursor));
	t->umem = map_shared(bpf_map__fd(s->maps.xnf_live_umem), t->umem_len);
	t->descs = map_shared(bpf_map__fd(s->maps.xnf_live_descs), t->descs_len);
	t->cursors = map_shared(bpf_map__fd(s->maps.xnf_live_cursors), t->cursors_len);
	if (!t->umem || !t->descs || !t->cursors) {
		say(err, err_len, "cannot map the live-frames transmit memory (%llu frames of %u bytes): %s",
		    (unsigned long long)total_frames, t->frame_size, strerror(errno));
		return -1;
	}
	return 0;
}

static int attach_tracepoints(struct xnf_live_tx *t, char *err, size_t err_len)
{
	struct bpf_program *progs[2] = { t->skel->progs.xnf_live_redirect_err, t->skel->progs.xnf_live_devmap_xmit };

	for (int i = 0; i < 2; i++) {
		t->tracepoints[i] = bpf_program__attach(progs[i]);
		if (!t->tracepoints[i]) {
			t->tracepoints[i] = NULL;
			say(err, err_len, "cannot attach %s, which counts the frames a device refuses: %s",
			    bpf_program__section_name(progs[i]), strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* One BPF_PROG_RUN call in live-frames mode: the program runs repeat times for worker w. */
static int run_program(const struct xnf_live_tx *t, __u32 worker, __u32 repeat, __u32 ingress_port)
{
	__u32 seed_len = XNF_LIVE_SEED_LEN + worker;
	struct xdp_md ctx_in = { .data_end = seed_len, .ingress_ifindex = (__u32)t->port_ifindex[ingress_port] };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = seed_frame, .data_size_in = seed_len,
		    .ctx_in = &ctx_in, .ctx_size_in = sizeof(ctx_in), .repeat = repeat,
		    .flags = BPF_F_TEST_XDP_LIVE_FRAMES, .batch_size = KERNEL_BATCH);

	return bpf_prog_test_run_opts(t->prog_fd, &opts) ? -errno : 0;
}

/* A call with no descriptors (the program refuses its one frame): does this program run on live frames here? The
 * kernel's own answer is the facility table's (kernel.h); this one is the program's and its ports'. */
static int probe_live_frames(struct xnf_live_tx *t, char *err, size_t err_len)
{
	struct xnf_live_cursor *c = &t->cursors[0];
	int rc;

	if (!xnf_kernel_has(XNF_KF_LIVE_FRAMES)) {
		xnf_kernel_refusal(XNF_KF_LIVE_FRAMES, err, err_len);
		return -1;
	}
	c->next = c->count = 0;
	rc = run_program(t, 0, 1, 0);
	memset(c, 0, sizeof(*c));
	if (rc == 0)
		return 0;
	say(err, err_len, "a live-frames call fails here: %s", strerror(-rc));
	return -1;
}

struct xnf_live_tx *xnf_live_tx_open(const struct xnf_port *ports, __u32 nports, __u32 nworkers,
				     const __u64 *frames, __u32 frame_size, char *err, size_t err_len)
{
	struct xnf_live_tx *t = calloc(1, sizeof(*t));
	__u64 total = 0;

	if (!t || nports > XNF_LIVE_MAX_PORTS || nworkers > XNF_LIVE_MAX_WORKERS ||
	    !(t->first_frame = calloc(nworkers, sizeof(__u32)))) {
		say(err, err_len, "cannot set up the live-frames transmit path: %s",
		    !t ? strerror(ENOMEM) : nports > XNF_LIVE_MAX_PORTS ? "too many ports" : "too many workers");
		free(t);
		return NULL;
	}
	t->hold_link_fd = t->hold_netns_fd = -1;
	t->nworkers = nworkers;
	t->frame_size = frame_size;
	for (__u32 p = 0; p < nports; p++)
		t->port_ifindex[p] = ports[p].ifindex;
	for (__u32 w = 0; w < nworkers; w++) {
		t->first_frame[w] = (__u32)total;
		total += frames[w];
	}
	t->skel = live_tx_bpf__open();
	if (!t->skel) {
		say(err, err_len, "cannot open the live-frames transmit program: %s", strerror(errno));
		goto fail;
	}
	if (size_maps(t, ports, nports, total, err, err_len))
		goto fail;
	if (live_tx_bpf__load(t->skel)) {
		say(err, err_len, "the kernel refused the live-frames transmit program (%s; -v shows the verifier's "
		    "log)", strerror(errno));
		goto fail;
	}
	t->prog_fd = bpf_program__fd(t->skel->progs.xnf_live_tx);
	if (note_program_id(t, err, err_len) || fill_ports(t, ports, nports, err, err_len) ||
	    map_shared_areas(t, total, err, err_len) || attach_tracepoints(t, err, err_len) ||
	    hold_program(t, err, err_len) || probe_live_frames(t, err, err_len))
		goto fail;
	return t;
fail:
	xnf_live_tx_close(t);
	return NULL;
}

void xnf_live_tx_close(struct xnf_live_tx *t)
{
	if (!t)
		return;
	if (t->hold_link_fd >= 0)
		close(t->hold_link_fd);
	if (t->hold_netns_fd >= 0)
		close(t->hold_netns_fd);
	for (int i = 0; i < 2; i++)
		bpf_link__destroy(t->tracepoints[i]);
	if (t->umem)
		munmap(t->umem, t->umem_len);
	if (t->descs)
		munmap(t->descs, t->descs_len);
	if (t->cursors)
		munmap(t->cursors, t->cursors_len);
	live_tx_bpf__destroy(t->skel);
	free(t->first_frame);
	free(t);
}

/* ---------------------------------------------------------------- per worker */

void *xnf_live_tx_umem(const struct xnf_live_tx *t, __u32 worker)
{
	return (char *)t->umem + (size_t)t->first_frame[worker] * t->frame_size;
}

__u32 xnf_live_tx_first_frame(const struct xnf_live_tx *t, __u32 worker)
{
	return t->first_frame[worker];
}

struct xnf_live_desc *xnf_live_tx_descs(const struct xnf_live_tx *t, __u32 worker)
{
	return &t->descs[(size_t)worker * XNF_LIVE_MAX_BATCH];
}

const struct xnf_live_cursor *xnf_live_tx_cursor(const struct xnf_live_tx *t, __u32 worker)
{
	return &t->cursors[worker];
}

int xnf_live_tx_take_error(struct xnf_live_tx *t, __u32 worker, __u32 *port)
{
	struct xnf_live_cursor *c = &t->cursors[worker];
	int err = c->last_error;

	/* The tracepoints write a worker's cursor only inside that worker's calls: none is running now. */
	c->last_error = 0;
	*port = c->last_error_port;
	return err;
}

int xnf_live_tx_send(struct xnf_live_tx *t, __u32 worker, __u32 count, __u32 ingress_port, __u32 *unsent)
{
	struct xnf_live_cursor *c = &t->cursors[worker];
	int calls = 0;

	c->next = 0;
	c->count = count;
	while (c->next < count) {
		__u32 before = c->next;
		int rc = run_program(t, worker, count - c->next, ingress_port);

		calls++;
		/* A signal ends a call early; the cursor says how far it got. No progress at all is an error. */
		if ((rc == 0 || rc == -EINTR) && c->next > before)
			continue;
		*unsent = count - c->next;
		return rc ? rc : -EIO;
	}
	*unsent = 0;
	return calls;
}
