// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "afxdp_internal.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <linux/if_xdp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <xnf/runtime/log.h>

#define MAX_BATCH 256
#define MIN_RING 64
#define MAX_RING 16384

/* ---------------------------------------------------------------- checks */

static bool power_of_two(__u32 n)
{
	return n && !(n & (n - 1));
}

/* Number of rx queues of an interface, from this namespace's sysfs; -1 if unknown. */
static int rx_queue_count(const char *ifname)
{
	char path[128];
	struct dirent *e;
	int count = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/sys/class/net/%s/queues", ifname);
	dir = opendir(path);
	if (!dir)
		return -1;
	while ((e = readdir(dir)))
		count += strncmp(e->d_name, "rx-", 3) == 0;
	closedir(dir);
	return count;
}

/* A frame of the port's MTU (Ethernet and a VLAN tag on top) in descriptors of the UMEM's frames, less the
 * headroom the kernel keeps in each: a frame may have XNF_MAX_FRAGS + 1 (the kernel sends none longer). */
static int check_descriptors_per_frame(const struct xnf_afxdp_config *cfg, const struct xnf_port *port)
{
	int mtu = xnf_afxdp_port_mtu(port->name);
	__u32 room = cfg->frame_size - XDP_PACKET_HEADROOM, need;

	if (mtu < 0)
		return 0;
	need = ((__u32)mtu + XNF_L2_OVERHEAD + room - 1) / room;
	if (need <= XNF_MAX_FRAGS + 1)
		return 0;
	xnf_error("interface %s has an MTU of %d: a frame would take %u AF_XDP descriptors of --frame-size %u, and a "
		  "frame may have %d: use --frame-size 4096, or lower the MTU to %u", port->name, mtu, need,
		  cfg->frame_size, XNF_MAX_FRAGS + 1, (XNF_MAX_FRAGS + 1) * room - XNF_L2_OVERHEAD);
	return -1;
}

static int check_ports(const struct xnf_afxdp_config *cfg, const struct xnf_port *ports, __u32 nports)
{
	for (__u32 p = 0; p < nports; p++) {
		int have = rx_queue_count(ports[p].name);

		if (check_descriptors_per_frame(cfg, &ports[p]))
			return -1;
		if (have >= 0 && (__u32)have < cfg->queues) {
			xnf_error("interface %s has %d rx queue%s (0-%d) and --queues %u needs queue %u: lower "
				  "--queues, or give the interface more queues (ethtool -L, or numrxqueues for veth)",
				  ports[p].name, have, have == 1 ? "" : "s", have - 1, cfg->queues, cfg->queues - 1);
			return -1;
		}
	}
	return 0;
}

int xnf_afxdp_check_config(const struct xnf_afxdp_config *cfg, const struct xnf_port *ports, __u32 nports)
{
	if (cfg->queues < 1 || cfg->queues > XNF_MAX_QUEUES) {
		xnf_error("--queues %u is out of range 1-%d", cfg->queues, XNF_MAX_QUEUES);
		return -1;
	}
	if (cfg->workers < 1 || cfg->workers > cfg->queues) {
		xnf_error("--workers %u: give between 1 and --queues (%u) workers; a worker serves whole queues",
			  cfg->workers, cfg->queues);
		return -1;
	}
	if (!power_of_two(cfg->ring_size) || cfg->ring_size < MIN_RING || cfg->ring_size > MAX_RING) {
		xnf_error("--ring-size %u must be a power of two from %d to %d", cfg->ring_size, MIN_RING, MAX_RING);
		return -1;
	}
	if (cfg->batch < 1 || cfg->batch > MAX_BATCH) {
		xnf_error("--batch %u is out of range 1-%d", cfg->batch, MAX_BATCH);
		return -1;
	}
	if (cfg->batch > cfg->ring_size) {
		xnf_error("--batch %u is larger than the ring size %u: a batch must fit in a ring",
			  cfg->batch, cfg->ring_size);
		return -1;
	}
	if (cfg->frame_size != 2048 && cfg->frame_size != 4096) {
		xnf_error("--frame-size %u: use 2048 or 4096", cfg->frame_size);
		return -1;
	}
	if (cfg->cores.count && cfg->cores.count != cfg->workers) {
		xnf_error("--cores lists %u cores for %u workers: give one core per worker", cfg->cores.count,
			  cfg->workers);
		return -1;
	}
	return check_ports(cfg, ports, nports) || xnf_tx_path_check(cfg, ports, nports) ? -1 : 0;
}

/* ---------------------------------------------------------------- sockets */

static int bind_flags(const struct xnf_afxdp *a)
{
	return (a->zerocopy ? XDP_ZEROCOPY : XDP_COPY) | (a->cfg.need_wakeup ? XDP_USE_NEED_WAKEUP : 0) |
	       (a->cfg.multi_buffer ? XDP_USE_SG : 0);
}

static int open_socket(struct xnf_afxdp *a, struct afxdp_worker *w, struct xsk_port_socket *s, bool first)
{
	const char *ifname = a->ports[s->port].name;
	struct xsk_socket_config sc = {
		.rx_size = a->cfg.ring_size,
		.tx_size = a->cfg.ring_size,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD, /* our own XDP program redirects */
		.bind_flags = (__u16)bind_flags(a),
	};

	if (first)
		return xsk_socket__create(&s->xsk, ifname, s->queue, w->umem, &s->rx, &s->tx, &sc);
	return xsk_socket__create_shared(&s->xsk, ifname, s->queue, w->umem, &s->rx, &s->tx, &s->fill,
					 &s->comp, &sc);
}

static int explain_socket_failure(const struct xnf_afxdp *a, const struct xsk_port_socket *s, int err)
{
	const char *ifname = a->ports[s->port].name;

	if (a->zerocopy && (err == -EOPNOTSUPP || err == -EINVAL || err == -EPROTONOSUPPORT))
		xnf_error("the driver of %s does not support AF_XDP zero-copy (veth never does): drop "
			  "--zerocopy, or add --copy-fallback to use copy mode when zero-copy is missing", ifname);
	else if (err == -EBUSY)
		xnf_error("queue %u of %s is already used by another AF_XDP socket: stop the other program",
			  s->queue, ifname);
	else if (err == -EPERM)
		xnf_error("AF_XDP sockets need root (CAP_NET_RAW and CAP_NET_ADMIN): run xnf with sudo");
	else
		xnf_error("cannot open an AF_XDP socket on %s queue %u: %s", ifname, s->queue, strerror(-err));
	return -1;
}

/* A socket closed moments ago keeps its queue until the kernel's deferred release has run. */
#define BUSY_RETRY_MS 3000

static int open_socket_patiently(struct xnf_afxdp *a, struct afxdp_worker *w, struct xsk_port_socket *s,
				 bool first)
{
	struct timespec pause = { .tv_nsec = 10 * 1000000 };
	int err = open_socket(a, w, s, first);

	for (int waited = 0; err == -EBUSY && waited < BUSY_RETRY_MS; waited += 10) {
		nanosleep(&pause, NULL);
		err = open_socket(a, w, s, first);
	}
	return err;
}

static int create_socket(struct xnf_afxdp *a, struct afxdp_worker *w, struct xsk_port_socket *s, bool first)
{
	int err = open_socket_patiently(a, w, s, first);

	if (err && a->zerocopy && a->cfg.copy_fallback && (err == -EOPNOTSUPP || err == -EINVAL)) {
		xnf_warn("%s has no AF_XDP zero-copy support: falling back to copy mode (--copy-fallback)",
			 a->ports[s->port].name);
		a->zerocopy = false;
		err = open_socket_patiently(a, w, s, first);
	}
	if (err)
		return explain_socket_failure(a, s, err);
	s->fd = xsk_socket__fd(s->xsk);
	return 0;
}

#ifndef XDP_MAX_TX_SKB_BUDGET
#define XDP_MAX_TX_SKB_BUDGET 9 /* Linux 6.17 */
#endif
#ifndef XDP_GENERIC_XMIT_BATCH
#define XDP_GENERIC_XMIT_BATCH 10
#endif

static int set_tx_option(const struct xsk_port_socket *s, int option, const char *flag, __u32 value,
			 __u32 ring_size)
{
	if (!value || setsockopt(s->fd, SOL_XDP, option, &value, sizeof(value)) == 0)
		return 0;
	if (errno == ENOPROTOOPT || errno == EOPNOTSUPP || (errno == EINVAL && option == XDP_GENERIC_XMIT_BATCH))
		xnf_error("this kernel does not know %s (XDP socket option %d): leave it out", flag, option);
	else if (errno == EACCES || errno == EINVAL)
		xnf_error("%s %u is out of the range this kernel accepts (32 to the ring size, %u)", flag, value,
			  ring_size);
	else
		xnf_error("cannot set %s: %s", flag, strerror(errno));
	return -1;
}

static int register_socket(struct xnf_afxdp *a, const struct xsk_port_socket *s)
{
	__u32 key = s->port * XNF_MAX_QUEUES + s->queue;
	int err;

	if (a->xsks_fd < 0) {
		xnf_error("the NF's XDP object has no socket map (xnf_xsks): rebuild it with this xnf");
		return -1;
	}
	err = bpf_map_update_elem(a->xsks_fd, &key, &s->fd, BPF_ANY);
	if (err) {
		xnf_error("cannot register the AF_XDP socket of %s queue %u: %s", a->ports[s->port].name,
			  s->queue, strerror(-err));
		return -1;
	}
	return 0;
}

/* ---------------------------------------------------------------- workers */

/* Frames are touched up front (MAP_POPULATE) so no page fault lands in the packet path. */
static void *map_area(size_t size)
{
	void *area = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	return area == MAP_FAILED ? NULL : area;
}

__u64 xnf_afxdp_worker_frames(const struct xnf_afxdp_config *cfg, __u32 nsockets, bool live)
{
	/* A full fill ring and a full tx ring per socket, a ring's worth in flight, and a live call's worth. */
	return cfg->frames ? cfg->frames : (__u64)nsockets * cfg->ring_size * 3 + (live ? cfg->live_batch : 0);
}

/* How many sockets and UMEM frames worker w needs. */
static void plan_worker(struct xnf_afxdp *a, struct afxdp_worker *w, bool live)
{
	const struct xnf_afxdp_config *cfg = &a->cfg;
	__u32 nqueues = 0, frames_per_page = (__u32)sysconf(_SC_PAGESIZE) / cfg->frame_size;

	for (__u32 q = w->index; q < cfg->queues; q += a->nworkers)
		nqueues++;
	w->nports = a->nports;
	w->nsockets = nqueues * w->nports;
	w->nframes = xnf_afxdp_worker_frames(cfg, w->nsockets, live);
	/* Workers' stretches of the shared live UMEM each start on a page. */
	w->nframes = (w->nframes + frames_per_page - 1) / frames_per_page * frames_per_page;
	if (cfg->frames && w->index == 0 && cfg->frames < (__u64)w->nsockets * cfg->ring_size)
		xnf_warn("--frames %u is fewer than one ring (%u) per socket: the kernel will find the fill ring empty "
			 "and drop most frames (counted as rx_fill_ring_empty and kernel_rx_dropped); the default is three rings "
			 "per socket", cfg->frames, cfg->ring_size);
}

static int setup_worker(struct xnf_afxdp *a, struct afxdp_worker *w)
{
	const struct xnf_afxdp_config *cfg = &a->cfg;
	__u32 rx_batch = cfg->multi_buffer && cfg->batch <= XNF_MAX_FRAGS ? XNF_MAX_FRAGS + 1 : cfg->batch;
	__u32 nports = w->nports, batch_room = nports * rx_batch;
	struct xsk_umem_config uc = {
		.fill_size = cfg->ring_size, .comp_size = cfg->ring_size, .frame_size = cfg->frame_size,
	};
	int err;

	w->sockets = calloc(w->nsockets, sizeof(*w->sockets));
	w->free_frames = calloc(w->nframes, sizeof(*w->free_frames));
	w->rx_batch = rx_batch;
	if (cfg->multi_buffer && !(w->frags = calloc(rx_batch, sizeof(*w->frags)))) {
		xnf_error("cannot allocate worker %u's frame buffers", w->index);
		return -1;
	}
	w->live = a->live != NULL;
	w->area = w->live ? xnf_live_tx_umem(a->live, w->index) : map_area(w->nframes * cfg->frame_size);
	if (!w->sockets || !w->free_frames || !w->area) {
		xnf_error("cannot allocate %llu frames of %u bytes for worker %u", (unsigned long long)w->nframes,
			  cfg->frame_size, w->index);
		return -1;
	}
	if (w->live) {
		w->live_descs = xnf_live_tx_descs(a->live, w->index);
		w->live_first_frame = xnf_live_tx_first_frame(a->live, w->index);
		w->live_max_len = xnf_live_max_len(cfg);
		w->live_pass_port = -1;
	}
	for (__u64 i = 0; i < w->nframes; i++)
		w->free_frames[i] = i * cfg->frame_size;
	w->nfree = w->nframes;
	err = xsk_umem__create(&w->umem, w->area, w->nframes * cfg->frame_size, &w->sockets[0].fill,
			       &w->sockets[0].comp, &uc);
	if (err) {
		xnf_error("cannot register %llu frames as AF_XDP memory: %s", (unsigned long long)w->nframes,
			  strerror(-err));
		return -1;
	}
	for (__u32 i = 0; i < w->nsockets; i++) {
		struct xsk_port_socket *s = &w->sockets[i];

		s->port = i % nports;
		s->queue = w->index + (i / nports) * a->nworkers;
		s->pending_addr = calloc(batch_room, sizeof(*s->pending_addr));
		s->pending_len = calloc(batch_room, sizeof(*s->pending_len));
		s->pending_options = calloc(batch_room, sizeof(*s->pending_options));
		if (!s->pending_addr || !s->pending_len || !s->pending_options || create_socket(a, w, s, i == 0))
			return -1;
		if (cfg->wait == XNF_WAIT_SYSCALL && xnf_busy_poll_apply_socket(s->fd, cfg))
			return -1;
		if (set_tx_option(s, XDP_MAX_TX_SKB_BUDGET, "--tx-budget", cfg->tx_budget, cfg->ring_size) ||
		    set_tx_option(s, XDP_GENERIC_XMIT_BATCH, "--xmit-batch", cfg->xmit_batch, cfg->ring_size))
			return -1;
		xnf_worker_prime_fill(w, s);
		if (register_socket(a, s))
			return -1;
	}
	return 0;
}

static void teardown_worker(struct afxdp_worker *w)
{
	for (__u32 i = 0; w->sockets && i < w->nsockets; i++) {
		if (w->sockets[i].xsk)
			xsk_socket__delete(w->sockets[i].xsk);
		free(w->sockets[i].pending_addr);
		free(w->sockets[i].pending_len);
		free(w->sockets[i].pending_options);
	}
	if (w->umem)
		xsk_umem__delete(w->umem);
	if (w->area && !w->live) /* the live path's UMEM is its map's, unmapped when it closes */
		munmap(w->area, w->nframes * w->owner->cfg.frame_size);
	free(w->sockets);
	free(w->free_frames);
	free(w->frags);
}

static int worker_core(const struct xnf_afxdp_config *cfg, __u32 index)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	if (cfg->cores.count)
		return cfg->cores.cores[index];
	/* From the last core down: core 0 is where the lab's generator runs. */
	return (int)((ncpu - 1 - (long)index % ncpu + ncpu) % ncpu);
}

struct xnf_afxdp *xnf_afxdp_create(const struct xnf_afxdp_config *cfg, const struct xnf_port *ports, __u32 nports,
				   int xsks_fd)
{
	struct xnf_afxdp *a = calloc(1, sizeof(*a));
	bool live;

	if (!a)
		return NULL;
	a->cfg = *cfg;
	memcpy(a->ports, ports, nports * sizeof(*ports));
	a->nports = nports;
	a->xsks_fd = xsks_fd;
	for (__u32 p = 0; p < XNF_MAX_PORTS; p++)
		a->pass_fds[p] = a->pass_links[p] = -1;
	a->zerocopy = cfg->zerocopy;
	a->nworkers = cfg->workers;
	a->workers = aligned_alloc(CACHE_LINE, sizeof(*a->workers) * a->nworkers);
	if (!a->workers) {
		free(a);
		return NULL;
	}
	memset(a->workers, 0, sizeof(*a->workers) * a->nworkers);
	live = xnf_tx_path_wants_live(a);
	for (__u32 i = 0; i < a->nworkers; i++) {
		a->workers[i].owner = a;
		a->workers[i].index = i;
		a->workers[i].core = worker_core(cfg, i);
		plan_worker(a, &a->workers[i], live);
	}
	if (xnf_tx_path_choose(a, live))
		goto fail;
	for (__u32 i = 0; i < a->nworkers; i++) {
		if (setup_worker(a, &a->workers[i]))
			goto fail;
	}
	for (__u32 p = 0; cfg->wait == XNF_WAIT_SYSCALL && p < a->nports; p++) {
		if (xnf_busy_poll_apply_iface(a, a->ports[p].name))
			goto fail;
	}
	/* The NF runs here only in the user-space modes: only there can it say PASS to a worker. */
	for (__u32 p = 0; !cfg->nf_in_kernel && p < a->nports; p++) {
		if (xnf_pass_tap_open(a, p))
			goto fail;
	}
	return a;
fail:
	xnf_afxdp_destroy(a);
	return NULL;
}

/*
 * The process's other threads (control, housekeeping, RCU callbacks) stay off the workers' cores where there is
 * another core: a spinning worker that one of them preempts for a millisecond overflows its rings at line rate.
 * Threads created later (liburcu's call_rcu thread, a capture's) take this mask with them.
 */
static void keep_off_worker_cores(const struct xnf_afxdp *a)
{
	cpu_set_t allowed;

	if (pthread_getaffinity_np(pthread_self(), sizeof(allowed), &allowed))
		return;
	for (__u32 i = 0; i < a->nworkers; i++)
		CPU_CLR(a->workers[i].core, &allowed);
	if (CPU_COUNT(&allowed) > 0)
		pthread_setaffinity_np(pthread_self(), sizeof(allowed), &allowed);
}

int xnf_afxdp_start(struct xnf_afxdp *a)
{
	for (__u32 i = 0; i < a->nworkers; i++) {
		int err = pthread_create(&a->workers[i].thread, NULL, xnf_afxdp_worker_main, &a->workers[i]);

		if (err) {
			xnf_error("cannot start worker %u: %s", i, strerror(err));
			atomic_store(&a->stop, true);
			for (__u32 j = 0; j < i; j++)
				pthread_join(a->workers[j].thread, NULL);
			return -1;
		}
	}
	a->started = true;
	keep_off_worker_cores(a);
	return 0;
}

void xnf_afxdp_destroy(struct xnf_afxdp *a)
{
	if (!a)
		return;
	atomic_store(&a->stop, true);
	for (__u32 i = 0; a->started && i < a->nworkers; i++)
		pthread_join(a->workers[i].thread, NULL);
	for (__u32 i = 0; i < a->nworkers; i++)
		teardown_worker(&a->workers[i]);
	xnf_live_tx_close(a->live); /* after the UMEMs it holds are gone */
	xnf_busy_poll_restore(a);
	xnf_pass_tap_close_all(a);
	xnf_afxdp_capture_close(a);
	free(a->workers);
	free(a);
}

/* ---------------------------------------------------------------- reading */

__u32 xnf_afxdp_nworkers(const struct xnf_afxdp *a)
{
	return a->nworkers;
}

bool xnf_afxdp_zerocopy(const struct xnf_afxdp *a)
{
	return a->zerocopy;
}

void xnf_afxdp_read_stats(const struct xnf_afxdp *a, __u32 worker, struct xnf_afxdp_worker_stats *out)
{
	/* Aligned 64-bit loads: each counter is read whole, the set is a close snapshot. */
	memcpy(out, &a->workers[worker].stats, sizeof(*out));
	if (a->live) {
		const struct xnf_live_cursor *c = xnf_live_tx_cursor(a->live, worker);

		out->live_refused = c->refused;
		out->live_redirect_errors = c->redirect_errors;
		out->live_device_sent = c->device_sent;
		out->live_device_dropped = c->device_dropped;
	}
}

int xnf_afxdp_account(struct xnf_afxdp *a, struct xnf_frame_accounting *out, __u32 timeout_ms)
{
	struct timespec pause = { .tv_nsec = 1000000 };

	if (!a->started) {
		for (__u32 i = 0; i < a->nworkers; i++)
			xnf_afxdp_worker_account(&a->workers[i], &out[i]);
		return 0;
	}
	for (__u32 i = 0; i < a->nworkers; i++) {
		atomic_store(&a->workers[i].account_ready, 0);
		atomic_store_explicit(&a->workers[i].account_requested, 1, memory_order_release);
	}
	for (__u32 waited = 0; waited <= timeout_ms; waited++) {
		__u32 ready = 0;

		for (__u32 i = 0; i < a->nworkers; i++)
			ready += atomic_load_explicit(&a->workers[i].account_ready, memory_order_acquire);
		if (ready == a->nworkers) {
			for (__u32 i = 0; i < a->nworkers; i++)
				out[i] = a->workers[i].accounting;
			return 0;
		}
		nanosleep(&pause, NULL);
	}
	return -ETIMEDOUT;
}
