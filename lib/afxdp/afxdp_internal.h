/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Structures shared by the AF_XDP set-up (afxdp_runtime.c) and the worker loop (worker_loop.c). */
#ifndef XNF_LIB_AFXDP_INTERNAL_H
#define XNF_LIB_AFXDP_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <xdp/xsk.h>

#include <xnf/pkt.h>
#include <xnf/runtime/afxdp.h>
#include <xnf/internal/capture_abi.h>

#include "live_tx.h"

#define CACHE_LINE 64

/* Frames of several descriptors (Linux 6.6; bookworm's headers predate them): a socket bound with XDP_USE_SG takes
 * and sends them, every descriptor but a frame's last marked XDP_PKT_CONTD. */
#ifndef XDP_USE_SG
#define XDP_USE_SG (1 << 4)
#endif
#ifndef XDP_PKT_CONTD
#define XDP_PKT_CONTD (1 << 0)
#endif

/* One AF_XDP socket: a (port, queue) pair, with its own fill and completion rings. */
struct xsk_port_socket {
	struct xsk_socket *xsk;
	struct xsk_ring_cons rx;
	struct xsk_ring_prod tx;
	struct xsk_ring_prod fill;
	struct xsk_ring_cons comp;
	int fd;
	__u32 port;
	__u32 queue;
	/* Put on the tx ring and not yet back through the completion ring. */
	__u32 tx_inflight;
	/* Descriptors gathered for this socket's tx ring during one batch; options: XDP_PKT_CONTD where a frame
	 * goes on in the next one. */
	__u32 pending;
	__u64 *pending_addr;
	__u32 *pending_len;
	__u32 *pending_options;
	/* A frame of more descriptors than a frame may have is dropped whole: its descriptors after the ones seen. */
	bool dropping_rest;
};

struct afxdp_worker {
	struct xnf_afxdp_worker_stats stats; /* written by this worker only */
	struct xnf_afxdp *owner;
	pthread_t thread;
	__u32 index;
	int core;
	struct xsk_umem *umem;
	void *area;
	__u64 nframes;
	__u64 *free_frames; /* a stack of frame base addresses */
	__u64 nfree;
	/* Frames of several descriptors (cfg.multi_buffer): the buffers after each frame's first, per batch slot;
	 * rx_batch descriptors are taken at once, a whole frame's at least. */
	struct xnf_frags *frags;
	__u32 rx_batch;
	/* sockets[q * nports + port] for the queues this worker serves */
	struct xsk_port_socket *sockets;
	__u32 nsockets;
	__u32 nports;
	/* The live-frames path: descriptors gathered for the next call (in the shared map), since when. */
	bool live;
	__u32 live_ports;       /* this round's copy of the instance's live_ports */
	struct xnf_live_desc *live_descs;
	__u32 live_first_frame; /* this worker's first frame in the shared UMEM map */
	__u32 live_max_len;     /* longer frames go on the xsk ring */
	__u32 live_pending;
	__u64 live_pending_bytes;
	__u32 live_pending_passes; /* of them, frames for the local stack ... */
	int live_pass_port;        /* ... of this port, where the call enters; -1 when none */
	__u64 live_oldest_ns;
	bool live_flush_now;    /* a frame of this round went on the xsk ring: send the live ones first */
	int live_reported_error;
	/* Frame accounting on request: the control thread sets requested, the worker answers. */
	atomic_uint account_requested;
	struct xnf_frame_accounting accounting;
	atomic_uint account_ready;
	/* xnf dump: this worker's queue of captured frames, from the first capture on (worker_capture.c) */
	struct capture_queue *capture;
} __attribute__((aligned(CACHE_LINE)));

/* A sysfs setting of an interface changed for busy polling, and its value before. */
struct saved_setting {
	char path[128];
	char journal[4096]; /* the old value's journal in the run dir, until it is put back; "" when none */
	char old_value[32];
	bool changed;
};

struct xnf_afxdp {
	struct xnf_afxdp_config cfg;
	struct xnf_port ports[XNF_MAX_PORTS];
	__u32 nports;
	int xsks_fd;                 /* the XDP program's socket map */
	enum xnf_tx_path tx_path;    /* resolved: XNF_TX_XSK or XNF_TX_LIVE */
	struct xnf_live_tx *live;    /* the live path's program and shared UMEM, when tx_path is live */
	atomic_uint live_ports;      /* ports the live path sends to now; the rest go on the xsk ring */
	struct afxdp_worker *workers;
	__u32 nworkers;
	bool zerocopy;
	bool started;
	atomic_bool stop;
	struct saved_setting settings[XNF_MAX_PORTS * 2];
	__u32 nsettings;
	int pass_fds[XNF_MAX_PORTS]; /* TAP devices for XNF_PASS, per port; -1 when none */
	int pass_links[XNF_MAX_PORTS]; /* the TCX links of the program that hands their frames on; -1 when none */
	struct pass_redirect_bpf *pass_skel; /* that program (pass_tap.c), or NULL */
	atomic_uint capture_slots;   /* xnf dump: the verdict slots the workers copy out (0: no capture) */
};

void *xnf_afxdp_worker_main(void *arg);
/* A port stopped taking frames from XDP (auto): its frames go on the xsk ring until it takes them again. */
void xnf_afxdp_live_port_refused(struct xnf_afxdp *a, __u32 port);
void xnf_afxdp_worker_account(struct afxdp_worker *w, struct xnf_frame_accounting *out);

/* tx_path.c */
/* The MTU of an interface in this namespace; -1 if unknown. */
int xnf_afxdp_port_mtu(const char *ifname);
/* Ethernet header and one VLAN tag on top of the MTU: a port's longest frame. */
#define XNF_L2_OVERHEAD 18
int xnf_tx_path_check(const struct xnf_afxdp_config *cfg, const struct xnf_port *ports, __u32 nports);
/* Whether to set up the live-frames program: the workers send through it (asked for, or auto finds copy mode,
 * senders and ports it fits), or the NF runs in the workers on copy-mode sockets and may pass frames. */
bool xnf_tx_path_wants_live(const struct xnf_afxdp *a);
/* Opens the live path when wanted (its map becomes the UMEMs, so before the workers' set-up); with auto, a
 * failure means the xsk ring and a warning. -1 when --tx-path live cannot be had. */
int xnf_tx_path_choose(struct xnf_afxdp *a, bool live);

/* pass_tap.c: a port's TAP device for XNF_PASS, whose frames go on into the port's receive. */
int xnf_pass_tap_open(struct xnf_afxdp *a, __u32 port);
void xnf_pass_tap_close_all(struct xnf_afxdp *a);

/* worker_loop.c: a socket's fill ring given frames before its worker runs: registered in the XSKMAP, it takes frames
 * at once (a program may send it some before the worker's first round: a restart under --state), instead of
 * dropping them. */
void xnf_worker_prime_fill(struct afxdp_worker *w, struct xsk_port_socket *s);

/* worker_capture.c: copies one frame and its verdict into the worker's capture queue */
void xnf_worker_capture(struct afxdp_worker *w, const struct xsk_port_socket *s, const struct xnf_pkt *pkt,
			__u32 slot);

/* busy_poll.c */
int xnf_busy_poll_apply_socket(int fd, const struct xnf_afxdp_config *cfg);
int xnf_busy_poll_apply_iface(struct xnf_afxdp *a, const char *ifname);
void xnf_busy_poll_restore(struct xnf_afxdp *a);

#endif
