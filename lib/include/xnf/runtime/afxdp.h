/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The user-space data path: AF_XDP sockets, one UMEM per worker shared by
 * all of that worker's sockets (one per port for each queue it serves), and
 * worker threads that run the NF's native batch function on what they receive.
 */
#ifndef XNF_RUNTIME_AFXDP_H
#define XNF_RUNTIME_AFXDP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <xnf/common.h>
#include <xnf/runtime/options.h>
#include <xnf/runtime/types.h>

#define XNF_MAX_WORKERS XNF_MAX_CORES

enum xnf_afxdp_wait {
	XNF_WAIT_BUSY,     /* spin on the rings; the driver runs from interrupts/softirq */
	XNF_WAIT_SYSCALL,  /* preferred busy poll: recvfrom/sendto run the driver */
	XNF_WAIT_POLL,     /* block in poll() until a socket has work */
};

/* How workers send what the NF forwards (--tx-path). */
enum xnf_tx_path {
	XNF_TX_AUTO,  /* live frames on copy-mode sockets where the kernel runs them; the xsk ring otherwise */
	XNF_TX_XSK,   /* the socket's tx ring: copy mode builds an skb per frame, zero-copy sends from the UMEM */
	XNF_TX_LIVE,  /* one BPF_PROG_RUN call per batch in live-frames mode: XDP's own transmit, no skb */
};

struct xnf_afxdp_config {
	enum xnf_afxdp_wait wait;
	bool nf_in_kernel;  /* xdp-sk modes: the NF runs in XDP; the sockets are open but idle */
	bool forward_only;  /* hybrid: the NF ran in XDP; each frame's verdict came with it */
	bool verdict_in_frame; /* hybrid: the verdict is the frame's first 4 bytes, not its metadata (no XDP metadata) */
	__u32 queues;       /* queues 0..queues-1 of every port */
	__u32 workers;      /* queue q is served by worker q % workers */
	struct xnf_core_list cores; /* worker i on cores.cores[i]; none given: from the last core down */
	__u32 batch;
	__u32 ring_size;    /* rx, tx, fill and completion rings */
	__u32 frame_size;   /* 2048 or 4096 */
	__u32 frames;       /* per worker; 0 picks three rings' worth per socket */
	bool zerocopy;
	bool copy_fallback; /* zero-copy refused: fall back to copy mode instead of failing */
	bool need_wakeup;
	__u32 busy_poll_usec;
	__u32 busy_poll_budget;
	__u32 tx_budget;    /* XDP_MAX_TX_SKB_BUDGET: descriptors one sendto() may send in copy mode; 0 = kernel default */
	__u32 xmit_batch;   /* XDP_GENERIC_XMIT_BATCH: skbs handed to the driver at once; 0 = not set */
	enum xnf_tx_path tx_path;
	__u32 live_batch;   /* live path: frames one call sends at most */
	__u32 live_wait_us; /* live path: the longest a frame waits for its call while frames keep coming */
	bool multi_buffer;  /* sockets bound with XDP_USE_SG: frames of several descriptors (a port brings jumbo ones) */
	const char *journal_dir; /* where interface settings' old values are kept until put back (the run dir) */
};

/* Counters of one worker; kernel socket statistics are added when read. */
struct xnf_afxdp_worker_stats {
	__u64 rx_packets;
	__u64 rx_bytes;
	__u64 tx_packets;    /* descriptors put on a tx ring */
	__u64 tx_bytes;
	__u64 verdicts[XNF_STAT_NSLOTS];
	__u64 verdict_bytes[XNF_STAT_NSLOTS];
	__u64 tx_ring_full;  /* verdict TX/REDIRECT but no room on the tx ring: dropped */
	__u64 fill_empty;    /* a fill ring wanted frames and the worker had none free */
	__u64 pass_injected; /* XNF_PASS: handed to the local stack through the port's TAP device */
	__u64 pass_dropped;  /* XNF_PASS the TAP device refused: dropped */
	__u64 empty_polls;   /* loop rounds in which no socket had a packet */
	__u64 wakeups;       /* syscalls made because a ring asked for a wakeup, or to send */
	__u64 busy_polls;    /* recvfrom calls made to run the driver (afxdp-sysc) */
	__u64 polls;         /* poll() calls (afxdp-poll) */
	/* The live-frames path (tx_packets counts its frames too). */
	__u64 live_calls;    /* BPF_PROG_RUN calls */
	__u64 live_frames;   /* frames handed to the live path */
	__u64 live_unsent;   /* frames a failed call never reached: dropped */
	__u64 xsk_fallback;  /* frames a live frame cannot hold, sent on the xsk ring instead */
	__u64 rx_too_many_buffers; /* frames of more descriptors than a frame may have (an MTU raised while running,
				    * past what --frame-size allows): dropped whole */
	/* Counted by the kernel side, filled in when read: */
	__u64 live_refused;          /* frames the program could not build: dropped */
	__u64 live_redirect_errors;  /* frames the kernel would not queue for their port: dropped */
	__u64 live_device_sent;      /* frames the ports' drivers took */
	__u64 live_device_dropped;   /* frames a driver refused (e.g. a full veth ring): dropped */
};

/* A counter's name as the control socket and describe write it, and where it is in its struct. */
struct xnf_stat_field {
	const char *name;
	size_t offset;
};

/* The worker counters in the order stats shows them (NULL-name terminated), and the kernel's socket
 * counters (XDP_STATISTICS, summed over a worker's sockets) that follow them. */
extern const struct xnf_stat_field xnf_worker_stat_fields[];
extern const struct xnf_stat_field xnf_socket_stat_fields[];

/* Where every UMEM frame of a worker is: the sum is always the worker's frame count. */
struct xnf_frame_accounting {
	__u64 total;
	__u64 free;
	__u64 fill;
	__u64 rx;
	__u64 worker;
	__u64 tx;
	__u64 completion;
	__u64 kernel; /* taken from fill or tx and not yet returned through rx or completion */
	__u64 tx_inflight; /* of those: sent on a tx ring, completion not yet seen */
	/* From a scan of every place: frames found twice, and addresses that are no frame. */
	__u64 duplicates;
	__u64 invalid;
};

struct xnf_afxdp;

/* Validates the configuration against the ports; prints the reason and returns -1. */
/* The longest frame the live path sends with this configuration (longer ones take the xsk ring). */
__u32 xnf_live_max_len(const struct xnf_afxdp_config *cfg);
int xnf_afxdp_check_config(const struct xnf_afxdp_config *cfg, const struct xnf_port *ports, __u32 nports);
/* The UMEM frames a worker with nsockets sockets cycles through (--frames, else the default). */
__u64 xnf_afxdp_worker_frames(const struct xnf_afxdp_config *cfg, __u32 nsockets, bool live);
/* Creates UMEMs and sockets on the ports, registers each socket in the XSKMAP xsks_fd (key port * 16 +
 * queue) and applies busy-poll settings. Prints the reason and returns NULL on failure. */
struct xnf_afxdp *xnf_afxdp_create(const struct xnf_afxdp_config *cfg, const struct xnf_port *ports, __u32 nports,
				   int xsks_fd);
int xnf_afxdp_start(struct xnf_afxdp *a);
/* Stops the workers, closes the sockets, frees the UMEMs and restores settings. */
void xnf_afxdp_destroy(struct xnf_afxdp *a);

__u32 xnf_afxdp_nworkers(const struct xnf_afxdp *a);
void xnf_afxdp_read_stats(const struct xnf_afxdp *a, __u32 worker, struct xnf_afxdp_worker_stats *out);
/* Worker w's counters s (from xnf_afxdp_read_stats) and its sockets' XDP_STATISTICS, as JSON members. */
void xnf_afxdp_write_counters(const struct xnf_afxdp *a, __u32 worker, const struct xnf_afxdp_worker_stats *s,
			      FILE *out);
/* Asks every worker for its frame accounting and waits for the answers (up to timeout_ms). */
int xnf_afxdp_account(struct xnf_afxdp *a, struct xnf_frame_accounting *out, __u32 timeout_ms);
bool xnf_afxdp_zerocopy(const struct xnf_afxdp *a);
/* The path the workers send on to a port: xsk, or live (auto resolved, and following the port). */
enum xnf_tx_path xnf_afxdp_tx_path(const struct xnf_afxdp *a, __u32 port);
/* Once a second: with --tx-path auto, sends to each port on the live path while the port takes frames
 * from XDP (a veth: while its peer has an XDP program or GRO), on the xsk ring otherwise. */
void xnf_afxdp_refresh(struct xnf_afxdp *a);
/* xnf dump on the workers' side (worker_capture.c): open gives every worker its capture queue for records of
 * snap bytes (before set turns capture on; a queue kept for another snap length is replaced; close at teardown);
 * set says which verdict slots to copy (0: none); drain hands every queued record to emit until it returns
 * non-zero (then the rest is dropped); lost counts the records a full queue dropped, since the start. */
struct xnf_capture_record;
typedef int (*xnf_capture_emit)(void *ctx, const struct xnf_capture_record *r);
int xnf_afxdp_capture_open(struct xnf_afxdp *a, __u32 snap);
void xnf_afxdp_capture_set(struct xnf_afxdp *a, __u32 slots);
__u64 xnf_afxdp_capture_drain(struct xnf_afxdp *a, xnf_capture_emit emit, void *ctx);
__u64 xnf_afxdp_capture_lost(const struct xnf_afxdp *a);
void xnf_afxdp_capture_close(struct xnf_afxdp *a);
const char *xnf_tx_path_name(enum xnf_tx_path path);
/* The paths' names in enum order, NULL-terminated: what --tx-path takes. */
extern const char *const xnf_tx_path_names[];
/* The path called name; -1 if there is none. */
int xnf_tx_path_parse(const char *name, enum xnf_tx_path *out);

/*
 * Interface settings (busy polling's napi_defer_hard_irqs, gro_flush_timeout) that an instance killed before
 * it could restore them left changed on ifname: put back from their journal in dir. Every start calls it for
 * its ports, whatever its mode.
 */
void xnf_busy_poll_recover(const char *dir, const char *ifname);

#endif
