/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What xnf needs from a port and from whatever is on its other end, checked
 * before traffic flows (every start, and `xnf doctor`): the facts of the port
 * and, for a veth, of its peer wherever it lives; the problems they make for
 * the way the instance uses the port, each with why it matters and the
 * command that fixes it; and the fixes xnf applies itself to a veth peer it
 * can reach (--peers fix), journaled so that they are put back on exit or,
 * after a SIGKILL, by the next start.
 */
#ifndef XNF_RUNTIME_PORT_CHECKS_H
#define XNF_RUNTIME_PORT_CHECKS_H

#include <stdbool.h>
#include <stdio.h>

#include <xnf/runtime/link_facts.h>
#include <xnf/runtime/types.h>

/* What a veth takes as its peer's MTU with an XDP program that is not multi-buffer aware: a page less
 * XDP's headroom, the skb's shared info and the Ethernet header (Linux 6.x, x86-64, 4 KiB pages). Above it, the
 * program is loaded to take multi-buffer frames, and the kernel adds a page for each fragment an skb may have:
 * more than a veth's own limit, 65,535. */
#define XNF_VETH_XDP_MAX_MTU 3506
/* The largest frame a live frame (BPF_PROG_RUN with BPF_F_TEST_XDP_LIVE_FRAMES) can hold, without FCS: a page less
 * the kernel's headroom, the test run's page header and the room for skb_shared_info (x86-64, 4 KiB pages; the kernel
 * refuses 3,409, found by bisection with xnf-gen). Larger frames go through the xsk ring, and xnf-gen sends them
 * through a packet socket. */
#define XNF_LIVE_MAX_FRAME 3408
/* The MTU above which another device's driver may hand XDP a frame in several buffers: the standard one (the
 * buffers a driver fills are its own choice, 2-4 KiB; a veth's depend on its peer's MTU, above). */
#define XNF_ONE_BUFFER_MTU 1500

/* How an instance uses its ports: what the checks judge against. */
struct xnf_port_use {
	bool native_xdp;     /* a program in the driver (not skb mode): the driver's XDP limits apply */
	bool kernel_sends;   /* the NF's TX and REDIRECT leave as XDP frames from the kernel */
	bool workers_send;   /* AF_XDP workers send; the live path needs the port to take XDP frames */
	__u32 queues;        /* rx queues AF_XDP sockets serve (0: no sockets) */
	__u32 live_max_len;  /* the longest frame the live path sends (0: no live path) */
	bool skb_hook;       /* the NF runs at tc on skbs: no XDP limit and nothing of the peer's applies */
};

enum xnf_problem_level { XNF_LEVEL_NOTE, XNF_LEVEL_WARNING, XNF_LEVEL_ERROR };
extern const char *const xnf_problem_level_names[];

struct xnf_port_problem {
	enum xnf_problem_level level;
	const char *code;  /* stable: "peer-takes-no-xdp-frames" ... */
	char what[256];
	char why[256];
	char fix[256];     /* a command to type, or "" */
};

struct xnf_peer {
	bool exists;       /* the port is a veth */
	bool reachable;    /* its namespace was found */
	int nsid;          /* its namespace, as the port's numbers it (XNF_NSID_SAME: the port's own) */
	int ns_fd;         /* -1 unless reachable */
	int sock;          /* a socket of its namespace, -1 unless reachable */
	__u64 cookie;      /* its namespace's */
	__u64 ns_inode;    /* and that namespace's inode */
	char enter[160];   /* what runs a command there ("ip netns exec NS", or "" for this namespace) */
	struct xnf_link link;
	bool features_known;
	bool gro;
	bool tx_csum;      /* any tx-checksum-* offload on: its stack leaves checksums unfinished */
	__u32 tx_queues;
};

#define XNF_PORT_MAX_PROBLEMS 10

struct xnf_port_facts {
	struct xnf_port port;
	struct xnf_link link;
	char driver[32];
	bool xdp_features_known;
	__u64 xdp_features;
	__u32 rx_queues;
	struct xnf_peer peer;
	__u32 nproblems;
	struct xnf_port_problem problems[XNF_PORT_MAX_PROBLEMS];
};

/* The port's facts and its peer's (nothing judged yet). 0, or -errno when the port itself cannot be read. */
int xnf_port_inspect(const struct xnf_port *port, struct xnf_port_facts *f);
/* Reads the peer's offloads again (its GRO and checksum offload), and the port's XDP features. */
void xnf_port_reread(struct xnf_port_facts *f);
void xnf_port_release(struct xnf_port_facts *f);
/* Fills f->problems for this use. */
void xnf_port_judge(struct xnf_port_facts *f, const struct xnf_port_use *use);
/* Whether TCP/UDP segments arriving on the port may carry unfinished checksums: from a stack behind a
 * virtual interface with checksum offload on, or one xnf cannot see. */
bool xnf_port_may_bring_unfinished_checksums(const struct xnf_port_facts *f);
/* Whether frames longer than one buffer may arrive (a veth's peer's MTU, another device's own): the program must
 * then be loaded to take them. */
bool xnf_port_brings_jumbo_frames(const struct xnf_port_facts *f);
/* Worst level among the problems, or -1 when there are none. */
int xnf_port_worst(const struct xnf_port_facts *f);

/* One problem as one line: "PREFIXlevel: what: why; fix: COMMAND". */
void xnf_port_problem_print(FILE *out, const char *prefix, const struct xnf_port_problem *p);
/* The facts and problems as one JSON object. */
void xnf_port_facts_json(FILE *out, const struct xnf_port_facts *f);

/* What xnf changed on a peer, to be put back. */
struct xnf_peer_changes {
	int count;
	struct {
		char journal[4096];
		char setting[64];
		char old_value[64];
	} items[2];
};

/* Puts back what an instance that died without doing so changed on the port's peer (journal_dir's journals). */
void xnf_peer_recover(struct xnf_port_facts *f, const char *journal_dir);
/*
 * --peers fix: on a veth peer xnf can reach, turns GRO on where the port takes no XDP frames and checksum
 * offload off where the peer's stack leaves checksums unfinished, each written down in journal_dir first.
 * 0, or -1 after a message.
 */
int xnf_peer_fix(struct xnf_port_facts *f, const char *journal_dir, struct xnf_peer_changes *changes);
/* Whether the fix turned the peer's GRO on: the peer takes XDP frames by GRO alone, which an XDP_TX does not wake
 * (a redirect does), so the NF's TX leaves that port as a redirect. */
bool xnf_peer_turned_gro_on(const struct xnf_peer_changes *changes);
/* Puts the peer's settings back and forgets them. */
void xnf_peer_restore(struct xnf_port_facts *f, struct xnf_peer_changes *changes);

#endif
