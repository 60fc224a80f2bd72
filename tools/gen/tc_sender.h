/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xnf-gen's sender where the kernel refuses live frames: seed frames through a packet socket on the namespace's
 * loopback, which the generator's tc program there (gen.bpf.c, xnf_gen_tc) turns into up to XNF_GEN_FANOUT_MAX frames
 * each, built by the same code as live frames' (headers, flows, probes, classes), and sends out of the generator's
 * interface. One sender per thread; the program runs on the thread's CPU, in its system call, and keeps that CPU's
 * flow state as the live program does.
 */
#ifndef XNF_GEN_TC_SENDER_H
#define XNF_GEN_TC_SENDER_H

#include <stdbool.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <linux/types.h>

#include <xnf/runtime/ports.h>
#include <xnf/runtime/xdp_instance.h>

#include "probe.h"

#define TC_SENDER_BATCH 32
/* Where seeds go: the program at its egress takes them (and only the ones marked as this run's). */
#define TC_SENDER_SEED_IFACE "lo"

/* The program at the seed interface's egress, for the whole run. */
struct tc_sender_hook {
	struct xnf_port port;
	int link_fd;      /* its TCX link, or -1 */
	enum xnf_tc_via via; /* or its clsact filter */
};

struct tc_sender {
	int fd;
	__u32 mark;             /* this run's seeds' */
	const __u8 *seed;       /* the frame every seed starts as (the longest class's) */
	__u32 seed_len;
	__u32 count_offset;     /* where in the seed the count goes */
	__u32 counts[TC_SENDER_BATCH];
	struct iovec iov[TC_SENDER_BATCH][3];
	struct mmsghdr msgs[TC_SENDER_BATCH];
};

/* This run's seeds' mark: "x" and the process's id, so that two generators in one namespace take only their own. */
__u32 tc_sender_mark(void);
/* Attaches prog_fd at the seed interface's egress (TCX, or a clsact filter where the kernel refuses TCX). 0, or an
 * errno. */
int tc_sender_hook(struct tc_sender_hook *h, int prog_fd);
void tc_sender_unhook(struct tc_sender_hook *h);
/* A packet socket on the seed interface whose frames carry this run's mark. 0, or an errno. */
int tc_sender_open(struct tc_sender *s, const __u8 *seed, __u32 seed_len, __u32 count_offset);
/* Sends seeds for n frames. 0, or an errno that ends the run (the frames the interface refused the program counts). */
int tc_sender_send(struct tc_sender *s, __u64 n);
void tc_sender_close(struct tc_sender *s);

#endif
