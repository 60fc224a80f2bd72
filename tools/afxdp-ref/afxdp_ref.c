// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnf-afxdp-ref: the smallest AF_XDP loop that does the job, for comparison
 * with xnf's runtime in the same run. One socket on queue 0, busy loop,
 * copy mode, need_wakeup; drop recycles frames straight to the fill ring,
 * macswap swaps MACs and sends back on the same socket. It loads the same
 * redirect program as xnf (the embedded object of the NF it is linked with,
 * in user-space mode), so only the loop differs.
 *
 *   xnf-afxdp-ref --iface IF --job drop|macswap [--core N] [--batch N]
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/if_xdp.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <xdp/xsk.h>

#include <xnf/runtime/log.h>
#include <xnf/runtime/options.h>
#include <xnf/runtime/ports.h>
#include <xnf/runtime/xdp_instance.h>

#define FRAMES 8192
#define FRAME_SIZE 4096
#define RING 2048

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

struct ref {
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	struct xsk_ring_prod fill, tx;
	struct xsk_ring_cons comp, rx;
	void *area;
	__u64 free[FRAMES];
	__u32 nfree;
	__u32 inflight;
	unsigned long long rx_packets, tx_packets;
};

static void swap_macs(__u8 *p)
{
	__u8 tmp[6];

	memcpy(tmp, p, 6);
	memcpy(p, p + 6, 6);
	memcpy(p + 6, tmp, 6);
}

static void refill(struct ref *r)
{
	__u32 idx, n = xsk_prod_nb_free(&r->fill, r->nfree);

	if (n > r->nfree)
		n = r->nfree;
	n = xsk_ring_prod__reserve(&r->fill, n, &idx);
	for (__u32 i = 0; i < n; i++)
		*xsk_ring_prod__fill_addr(&r->fill, idx + i) = r->free[--r->nfree];
	xsk_ring_prod__submit(&r->fill, n);
}

static void reap(struct ref *r)
{
	__u32 idx, n = xsk_ring_cons__peek(&r->comp, RING, &idx);

	for (__u32 i = 0; i < n; i++)
		r->free[r->nfree++] = *xsk_ring_cons__comp_addr(&r->comp, idx + i) & ~(__u64)(FRAME_SIZE - 1);
	xsk_ring_cons__release(&r->comp, n);
	r->inflight -= n;
}

static void loop(struct ref *r, bool macswap, __u32 batch)
{
	int fd = xsk_socket__fd(r->xsk);

	while (!stop) {
		__u32 idx_rx, idx_tx, n;

		reap(r);
		refill(r);
		n = xsk_ring_cons__peek(&r->rx, batch, &idx_rx);
		if (n && macswap && xsk_ring_prod__reserve(&r->tx, n, &idx_tx) == n) {
			for (__u32 i = 0; i < n; i++) {
				const struct xdp_desc *d = xsk_ring_cons__rx_desc(&r->rx, idx_rx + i);
				struct xdp_desc *t = xsk_ring_prod__tx_desc(&r->tx, idx_tx + i);

				swap_macs(xsk_umem__get_data(r->area, d->addr));
				*t = *d;
			}
			xsk_ring_prod__submit(&r->tx, n);
			r->inflight += n;
			r->tx_packets += n;
		} else {
			for (__u32 i = 0; i < n; i++)
				r->free[r->nfree++] =
					xsk_ring_cons__rx_desc(&r->rx, idx_rx + i)->addr & ~(__u64)(FRAME_SIZE - 1);
		}
		xsk_ring_cons__release(&r->rx, n);
		r->rx_packets += n;
		if (r->inflight)
			sendto(fd, NULL, 0, MSG_DONTWAIT, NULL, 0);
		else if (!n && xsk_ring_prod__needs_wakeup(&r->fill))
			recvfrom(fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
	}
}

static int setup(struct ref *r, const char *ifname, struct xnf_xdp_instance *x)
{
	struct xsk_socket_config cfg = { .rx_size = RING, .tx_size = RING,
					 .libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
					 .bind_flags = XDP_COPY | XDP_USE_NEED_WAKEUP };
	struct xsk_umem_config ucfg = { .fill_size = RING, .comp_size = RING, .frame_size = FRAME_SIZE };
	__u32 key = 0;
	int fd, err;

	r->area = mmap(NULL, (size_t)FRAMES * FRAME_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (r->area == MAP_FAILED)
		return -ENOMEM;
	for (__u32 i = 0; i < FRAMES; i++)
		r->free[r->nfree++] = (__u64)i * FRAME_SIZE;
	err = xsk_umem__create(&r->umem, r->area, (__u64)FRAMES * FRAME_SIZE, &r->fill, &r->comp, &ucfg);
	if (err)
		return err;
	/* The queue stays busy until the kernel has released the previous socket: retry for 3 s. */
	err = xsk_socket__create(&r->xsk, ifname, 0, r->umem, &r->rx, &r->tx, &cfg);
	for (int tries = 0; err == -EBUSY && tries < 300; tries++) {
		usleep(10000);
		err = xsk_socket__create(&r->xsk, ifname, 0, r->umem, &r->rx, &r->tx, &cfg);
	}
	if (err)
		return err;
	fd = xsk_socket__fd(r->xsk);
	return bpf_map_update_elem(bpf_object__find_map_fd_by_name(x->obj, "xnf_xsks"), &key, &fd, BPF_ANY);
}

static const char *const jobs[] = { "drop", "macswap", NULL };

struct options {
	char *iface;
	int job;      /* index in jobs */
	__u32 core;
	bool pinned;
	__u32 batch;
};

static int take_core(const struct xnf_option *o, const char *text, void *opts)
{
	struct options *opt = opts;

	if (xnf_parse_one_core(o->name, text, &opt->core))
		return -1;
	opt->pinned = true;
	return 0;
}

#define OPT(field) offsetof(struct options, field)

static const struct xnf_option table[] = {
	{ .name = "iface", .kind = XNF_OPT_STRING, .value = "IF", .offset = OPT(iface), .help = "the interface" },
	{ .name = "job", .kind = XNF_OPT_CHOICE, .value = "JOB", .choices = jobs, .offset = OPT(job),
	  .help = "receive and free, or swap the MACs and send back" },
	{ .name = "core", .kind = XNF_OPT_CUSTOM, .value = "N", .parse = take_core, .default_text = "not pinned",
	  .help = "pin the loop to this core" },
	{ .name = "batch", .kind = XNF_OPT_UINT, .value = "N", .offset = OPT(batch), .min = 1, .max = RING,
	  .help = "frames per round" },
	XNF_OPTIONS_END,
};

int main(int argc, char **argv)
{
	struct options opt = { .batch = 64 };
	struct xnf_xdp_instance x;
	struct xnf_port port;
	static struct ref r;
	char *ifname;
	const char *job;
	int err;
	__u32 batch;

	err = xnf_options_parse(table, argc, argv, &opt, NULL, "usage: xnf-afxdp-ref --iface IF [--job JOB] [options]",
				&(struct options){ .batch = 64 });
	if (err)
		return err > 0 ? 0 : 2;
	if (!opt.iface) {
		xnf_error("--iface is required (see --help)");
		return 2;
	}
	ifname = opt.iface;
	job = jobs[opt.job];
	batch = opt.batch;
	if (opt.pinned) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET((int)opt.core, &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	if (xnf_ports_resolve(&ifname, 1, &port) ||
	    xnf_xdp_load(&x, &port, 1, false, &(struct xnf_xdp_plan){ .datapath = XNF_DATAPATH_USER }, NULL, 0))
		return 1;
	err = setup(&r, ifname, &x);
	if (err || xnf_xdp_attach(&x)) {
		if (err)
			xnf_error("cannot set up the AF_XDP socket on %s: %s", ifname, strerror(-err));
		xnf_xdp_destroy(&x);
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	printf("xnf-afxdp-ref: %s on %s\n", job, ifname);
	fflush(stdout);
	loop(&r, strcmp(job, "macswap") == 0, batch);
	xnf_xdp_detach(&x);
	printf("{\"rx_packets\": %llu, \"tx_packets\": %llu}\n", r.rx_packets, r.tx_packets);
	xsk_socket__delete(r.xsk);
	xsk_umem__delete(r.umem);
	xnf_xdp_destroy(&x);
	return 0;
}
