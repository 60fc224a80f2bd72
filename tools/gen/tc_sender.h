/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xnf-gen's sender where the kernel refuses live frames: seed frames through a packet socket, which the generator's
 * tc program (gen.bpf.c, xnf_gen_tc) turns into up to XNF_GEN_FANOUT_MAX frames each, built by the same code as live
 * frames' (headers, flows, probes, classes), at the interface's egress. One sender per thread; the program runs on the
 * thread's CPU, in its system call, and keeps that CPU's flow state as the live program does.
 */
#ifndef XNF_GEN_TC_SENDER_H
#define XNF_GEN_TC_SENDER_H

#include <stdbool.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <linux/types.h>

#include <xnf/runtime/ports.h>

#include "probe.h"

#define TC_SENDER_BATCH 32
/* The marks of a seed and of the frames it becomes ("xng" and a number): the program passes the latter on. */
#define TC_SENDER_SEED_MARK 0x786e6701u
#define TC_SENDER_FRAME_MARK 0x786e6702u

/* The program at the sending interface's egress, for the whole run. */
struct tc_sender_hook {
	struct xnf_port port;
	int link_fd;      /* its TCX link, or -1 */
	bool in_clsact;   /* or its clsact filter */
};

struct tc_sender {
	int fd;
	const __u8 *seed;       /* the frame every seed starts as (the longest class's) */
	__u32 seed_len;
	__u32 count_offset;     /* where in the seed the count goes */
	__u32 counts[TC_SENDER_BATCH];
	struct iovec iov[TC_SENDER_BATCH][3];
	struct mmsghdr msgs[TC_SENDER_BATCH];
};

/* Attaches prog_fd at ifindex's egress (TCX, or a clsact filter where the kernel refuses TCX). 0, or an errno. */
int tc_sender_hook(struct tc_sender_hook *h, int prog_fd, int ifindex);
void tc_sender_unhook(struct tc_sender_hook *h);
/* A packet socket on ifindex whose frames carry the seed mark. 0, or an errno. */
int tc_sender_open(struct tc_sender *s, int ifindex, const __u8 *seed, __u32 seed_len, __u32 count_offset);
/* Sends seeds for n frames. 0, or an errno that ends the run; *refused counts seeds' own frames the interface would
 * not take (the frames cloned from them the program counts). */
int tc_sender_send(struct tc_sender *s, __u64 n, __u64 *refused);
void tc_sender_close(struct tc_sender *s);

#endif
